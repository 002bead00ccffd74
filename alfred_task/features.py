"""ResNet-18 conv features of frames, as ALFRED's ``feat_conv.pt`` (one 512×7×7 map per frame).

ALFRED's Seq2Seq model reads the output of ResNet-18's last conv block (no pooling) for each
low-level action's frame plus one stop frame (§2.1, §6.1). Weights are ImageNet's from
torchvision (downloaded once by torchvision) or any resnet18 ``state_dict`` on disk; nothing is
silently substituted when they are missing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import torch

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class ResnetFeatures:
    """Callable: list of HxWx3 uint8 frames -> float tensor [N, 512, 7, 7] (224×224 input)."""

    def __init__(self, weights: str, batch_size: int = 32) -> None:
        import torchvision

        net = torchvision.models.resnet18(weights=None)
        if weights == "imagenet":
            net = torchvision.models.resnet18(weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1)
        else:
            path = Path(weights)
            if not path.is_file():
                raise FileNotFoundError(f"--features: {weights!r} is neither 'imagenet' nor a state_dict file")
            state = torch.load(path, map_location="cpu", weights_only=True)
            missing, unexpected = net.load_state_dict(state, strict=False)
            conv_missing = [k for k in missing if not k.startswith("fc.")]
            if conv_missing or unexpected:
                raise ValueError(f"{path}: not a resnet18 state_dict (missing {conv_missing[:3]}, "
                                 f"unexpected {list(unexpected)[:3]})")
        self.body = torch.nn.Sequential(*list(net.children())[:-2]).eval()
        self.batch_size = int(batch_size)
        self.mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        self.std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)

    @torch.no_grad()
    def __call__(self, frames: Sequence[np.ndarray]) -> torch.Tensor:
        out = []
        for i in range(0, len(frames), self.batch_size):
            x = torch.from_numpy(np.stack(frames[i:i + self.batch_size])).permute(0, 3, 1, 2).float() / 255.0
            x = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False)
            out.append(self.body((x - self.mean) / self.std))
        return torch.cat(out) if out else torch.zeros(0, 512, 7, 7)

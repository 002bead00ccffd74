"""ResNet-18 conv features of frames, as ALFRED's ``feat_conv.pt`` (one 512×7×7 map per frame).

ALFRED's Seq2Seq model reads the output of ResNet-18's last conv block (no pooling) for each
low-level action's frame plus one stop frame (§2.1, §6.1). Weights are ImageNet's from
torchvision's cache (`imagenet_weights_path`; without network they must already be there), any
resnet18 ``state_dict`` on disk, or, only when asked for by name, a seeded random ResNet-18
(``random_resnet18``). Nothing is silently substituted when weights are missing: "imagenet"
without the cached file fails at once, naming the file and where to put it.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Dict, Sequence

import numpy as np
import torch

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: encoder names besides a state_dict path
IMAGENET = "imagenet"
RANDOM_RESNET18 = "random_resnet18"
VISUAL_ENCODERS = (IMAGENET, RANDOM_RESNET18)


def imagenet_weights_path() -> Path:
    """Where torchvision looks for (and would download) the ImageNet ResNet-18 weights."""
    import torchvision

    url = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.url
    return Path(torch.hub.get_dir()) / "checkpoints" / url.rsplit("/", 1)[-1]


def check_visual_encoder(weights: str) -> None:
    """Raise FileNotFoundError (one line: file and remedy) unless `weights` can be loaded offline."""
    if weights == RANDOM_RESNET18:
        return
    if weights == IMAGENET:
        path = imagenet_weights_path()
        if not path.is_file():
            import torchvision

            url = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.url
            raise FileNotFoundError(f"ImageNet ResNet-18 weights not found: put {url} at {path} (or pass a "
                                    f"resnet18 state_dict path, or ask for '{RANDOM_RESNET18}' explicitly)")
        return
    if not Path(weights).is_file():
        raise FileNotFoundError(f"--features: {weights!r} is neither 'imagenet' nor a state_dict file "
                                f"(nor '{RANDOM_RESNET18}')")


class ResnetFeatures:
    """Callable: list of HxWx3 uint8 frames -> float tensor [N, 512, 7, 7] (224×224 input)."""

    def __init__(self, weights: str, batch_size: int = 32, seed: int = 0) -> None:
        import torchvision

        check_visual_encoder(weights)
        self.weights, self.seed = weights, int(seed)
        with torch.random.fork_rng(devices=[]):  # random_resnet18: seeded, global RNG untouched
            torch.manual_seed(self.seed)
            net = torchvision.models.resnet18(weights=None)
        if weights == IMAGENET:
            net = torchvision.models.resnet18(weights=torchvision.models.ResNet18_Weights.IMAGENET1K_V1)
        elif weights != RANDOM_RESNET18:
            path = Path(weights)
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
            out.append(self.encode(torch.from_numpy(np.stack(frames[i:i + self.batch_size]))).cpu())
        return torch.cat(out) if out else torch.zeros(0, 512, 7, 7)

    @torch.no_grad()
    def encode(self, frames: torch.Tensor) -> torch.Tensor:
        """uint8 [N, H, W, 3] frames (any device) -> [N, 512, 7, 7] on the encoder's device."""
        x = frames.to(self.mean.device).permute(0, 3, 1, 2).float() / 255.0
        x = torch.nn.functional.interpolate(x, size=(224, 224), mode="bilinear", align_corners=False)
        return self.body((x - self.mean) / self.std)

    def to(self, device: torch.device) -> "ResnetFeatures":
        self.body, self.mean, self.std = self.body.to(device), self.mean.to(device), self.std.to(device)
        return self

    def describe(self) -> Dict[str, Any]:
        """What a dataset or result file records about the encoder (name, seed, weight digest)."""
        digest = hashlib.sha256()
        for v in self.body.state_dict().values():
            digest.update(v.detach().cpu().numpy().tobytes())
        name = self.weights if self.weights in VISUAL_ENCODERS else "resnet18_state_dict"
        return {"visual_encoder": name, "weights": None if self.weights in VISUAL_ENCODERS else str(self.weights),
                "seed": self.seed if self.weights == RANDOM_RESNET18 else None,
                "weights_sha256": digest.hexdigest(), "feature_shape": [512, 7, 7], "input_size": 224}

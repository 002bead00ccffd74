"""allenact_plugins' CLIP-RN50 preprocessor with a seeded random-init mode (``pretrained=False``).

Kept apart from `visual_encoders` because importing it imports the `clip` package (pinned
`clip-anytorch`), which only the CLIP configs need.
"""

from __future__ import annotations

from typing import Any

import clip
import torch
import torch.nn as nn
from allenact_plugins.clip_plugin.clip_preprocessors import (
    ClipResNetEmbedder,
    ClipResNetPreprocessor,
)

# clip.load("RN50") builds exactly this visual trunk (vision width 64, output 1024, 32 heads).
_RANDOM_INIT_VISUAL_KWARGS = {
    "RN50": dict(layers=(3, 4, 6, 3), output_dim=1024, heads=32, width=64)
}


class _VisualOnly(nn.Module):
    """The part of a CLIP model `ClipResNetEmbedder` reads: ``.visual``."""

    def __init__(self, visual: nn.Module) -> None:
        super().__init__()
        self.visual = visual


class SeededClipResNetPreprocessor(ClipResNetPreprocessor):
    """`ClipResNetPreprocessor`; with ``pretrained=False`` the trunk is CLIP's ModifiedResNet
    randomly initialised from `seed` (identical in every process) instead of `clip.load`."""

    def __init__(self, *args: Any, pretrained: bool = True, seed: int = 0, **kwargs: Any) -> None:
        self.pretrained = bool(pretrained)
        self.seed = int(seed)
        super().__init__(*args, **kwargs)

    @property
    def resnet(self) -> ClipResNetEmbedder:
        if self.pretrained or self._resnet is not None:
            return super().resnet
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            visual = clip.model.ModifiedResNet(
                input_resolution=224, **_RANDOM_INIT_VISUAL_KWARGS[self.clip_model_type]
            )
        embedder = ClipResNetEmbedder(_VisualOnly(visual), pool=self.pool).to(self.device)
        for module in embedder.modules():
            if "BatchNorm" in type(module).__name__:
                module.momentum = 0.0  # frozen statistics, as the pretrained path does
        self._resnet = embedder.eval()
        return self._resnet

"""Frozen visual encoders of the ResNet/CLIP baselines, their pretrained weights and pre-flight.

One place for what every ResNet-feature config needs (1-phase, 2-phase, walkthrough, and the
map configs): AllenAct preprocessors that turn an RGB uuid into ``<uuid>_resnet`` C×h×w
features (ResNet-18: 512, ResNet-50 / CLIP-RN50: 2048; h = w = frame/32, 7 at 224 px).

Pretrained weights are never downloaded here (our machines reach PyPI only):
`check_pretrained_weights` finds the file where torchvision / clip would read it, and raises
`common.errors.PretrainedWeightsError` (a `SystemExit`, so the `allenact` CLI prints one line and exits 1, no
traceback) naming the file, its URL and the folder to put it in. With ``pretrained=False`` the
same architecture is built randomly initialised from a fixed seed, identically in every train,
valid and test process, so a checkpoint trained that way evaluates against the same encoder.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence

import torch
import torch.nn as nn
from allenact.embodiedai.preprocessors.resnet import ResNetPreprocessor
from allenact.utils.experiment_utils import Builder

from common.errors import PretrainedWeightsError

__all__ = [
    "ENCODERS",
    "EncoderSpec",
    "TorchvisionResNet",
    "check_pretrained_weights",
    "weights_path",
    "resnet_preprocessor_builder",
    "resnet_preprocessor_builders",
    "feature_uuid",
    "CLIP_RGB_MEANS",
    "CLIP_RGB_STDS",
]

CLIP_RGB_MEANS = (
    0.48145466,
    0.4578275,
    0.40821073,
)  # same values as allenact's ClipResNetPreprocessor
CLIP_RGB_STDS = (0.26862954, 0.26130258, 0.27577711)


@dataclass(frozen=True)
class EncoderSpec:
    """One frozen trunk: its feature channels and the weight file the official configs load."""

    name: str  # human name used in messages
    channels: int
    url: str
    sha256_prefix: str  # torchvision: the 8 hex digits in the file name; clip: the full digest
    source: str  # "torchvision" or "clip"
    arch: str  # torchvision constructor name, or the clip model name


ENCODERS: Dict[str, EncoderSpec] = {
    "RN18": EncoderSpec(
        "ImageNet ResNet-18",
        512,
        "https://download.pytorch.org/models/resnet18-f37072fd.pth",
        "f37072fd",
        "torchvision",
        "resnet18",
    ),
    "RN50": EncoderSpec(
        "ImageNet ResNet-50",
        2048,
        "https://download.pytorch.org/models/resnet50-0676ba61.pth",
        "0676ba61",
        "torchvision",
        "resnet50",
    ),
    "CLIP-RN50": EncoderSpec(
        "CLIP RN50",
        2048,
        "https://openaipublic.azureedge.net/clip/models/"
        "afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762/RN50.pt",
        "afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762",
        "clip",
        "RN50",
    ),
}


def _spec(kind: str) -> EncoderSpec:
    if kind not in ENCODERS:
        raise ValueError(f"unknown visual encoder {kind!r} (expected one of {sorted(ENCODERS)})")
    return ENCODERS[kind]


def weights_path(kind: str) -> Path:
    """Where torchvision (torch hub cache, honours $TORCH_HOME) or clip (~/.cache/clip) reads the file."""
    spec = _spec(kind)
    name = spec.url.rsplit("/", 1)[-1]
    if spec.source == "clip":
        return Path(os.path.expanduser("~/.cache/clip")) / name
    return Path(torch.hub.get_dir()) / "checkpoints" / name


def check_pretrained_weights(kind: str) -> Path:
    """The weight file of `kind`, after checking it exists and its sha256 matches; else one clear error."""
    spec, path = _spec(kind), weights_path(kind)
    hint = (
        f"download {spec.url} to {path} (no network here?), or pass --config_kwargs "
        f"'{{\"pretrained\": false}}' for a randomly initialised (seeded) {spec.name}"
    )
    if not path.is_file():
        raise PretrainedWeightsError(f"pretrained {spec.name} weights not found: {hint}")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if not digest.hexdigest().startswith(spec.sha256_prefix):
        raise PretrainedWeightsError(
            f"pretrained {spec.name} weights at {path} are damaged (sha256 "
            f"{digest.hexdigest()[:12]}..., expected {spec.sha256_prefix[:12]}...): "
            f"delete it and {hint}"
        )
    return path


class TorchvisionResNet:
    """Picklable torchvision ResNet factory for allenact's `ResNetPreprocessor`.

    allenact calls ``make_model(pretrained=True)``, which torchvision 0.29 no longer accepts;
    this factory ignores that argument and uses its own `pretrained` flag: the IMAGENET1K_V1
    weights (what ``pretrained=True`` meant for the official configs) from the torch hub cache,
    or a random initialisation drawn from `seed` without touching the global RNG.
    """

    def __init__(self, arch: str, pretrained: bool, seed: int = 0) -> None:
        self.arch, self.pretrained, self.seed = arch, bool(pretrained), int(seed)

    def __call__(self, **_: Any) -> nn.Module:
        import torchvision.models as models

        make = getattr(models, self.arch)
        if self.pretrained:
            weights = models.get_model_weights(make).IMAGENET1K_V1
            return make(weights=weights)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            return make(weights=None)


def feature_uuid(rgb_uuid: str) -> str:
    """The preprocessor output uuid of an RGB uuid, as officially (``rgb`` → ``rgb_resnet``)."""
    return f"{rgb_uuid}_resnet"


def resnet_preprocessor_builder(
    kind: str, rgb_uuid: str, screen_size: int, pretrained: bool, seed: int = 0
) -> Builder:
    """A Builder of the frozen, unpooled `kind` trunk turning `rgb_uuid` into `feature_uuid(rgb_uuid)`.

    kind: "RN18" / "RN50" (allenact `ResNetPreprocessor` over torchvision) or "CLIP-RN50"
    (`clip_preprocessor.SeededClipResNetPreprocessor`, the allenact_plugins CLIP preprocessor).
    screen_size must be a multiple of 32 (the trunks downsample by 32). The caller runs
    `check_pretrained_weights(kind)` once, in the main process, when `pretrained` is true.
    """
    spec = _spec(kind)
    if screen_size % 32:
        raise ValueError(
            f"screen_size must be a multiple of 32 for the {spec.name} encoder, not {screen_size}"
        )
    if spec.source == "clip":
        from allenact_ext.clip_preprocessor import SeededClipResNetPreprocessor

        return Builder(
            SeededClipResNetPreprocessor,
            {
                "rgb_input_uuid": rgb_uuid,
                "output_uuid": feature_uuid(rgb_uuid),
                "clip_model_type": spec.arch,
                "pool": False,
                "input_img_height_width": (screen_size, screen_size),
                "pretrained": bool(pretrained),
                "seed": int(seed),
            },
        )
    side = screen_size // 32
    return Builder(
        ResNetPreprocessor,
        {
            "input_uuids": [rgb_uuid],
            "output_uuid": feature_uuid(rgb_uuid),
            "input_height": screen_size,
            "input_width": screen_size,
            "output_height": side,
            "output_width": side,
            "output_dims": spec.channels,
            "pool": False,
            "torchvision_resnet_model": TorchvisionResNet(spec.arch, pretrained, seed),
        },
    )


def resnet_preprocessor_builders(
    kind: str, rgb_uuids: Sequence[str], screen_size: int, pretrained: bool, seed: int = 0
) -> List[Builder]:
    """One preprocessor per RGB uuid, as the official configs build them."""
    return [resnet_preprocessor_builder(kind, u, screen_size, pretrained, seed) for u in rgb_uuids]

"""ResNet-18 conv features of frames, as ALFRED's ``feat_conv.pt`` (one 512×7×7 map per frame).

ALFRED's Seq2Seq model reads the output of ResNet-18's last conv block (no pooling) for each
low-level action's frame plus one stop frame (§2.1, §6.1). The encoder is named explicitly:

* ``"imagenet"``: torchvision's ImageNet weights, read from the torch hub checkpoints folder
  (`imagenet_weights_path`). Nothing is downloaded here: when the file is missing (our machines
  have no network) construction fails at once, naming the file and where to put it.
* ``"random_resnet18"`` or ``"random_resnet18:<seed>"``: torchvision's initialisation, seeded
  (default seed 0); for runs that ask for it explicitly.
* a path: any resnet18 ``state_dict`` on disk (e.g. one trained on thor_lite frames), float or
  in the compact int8 form `quantize_state` writes (what `alfred_task.training.encoder_pretrain` saves, so
  a trained encoder ships under 20 MB; the dequantized weights *are* that encoder).

Nothing is silently substituted. `ResnetFeatures.encoder` describes what was used, for result files.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Dict, Sequence

import numpy as np
import torch

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: torchvision's ResNet18_Weights.IMAGENET1K_V1 file
IMAGENET_WEIGHTS_URL = "https://download.pytorch.org/models/resnet18-f37072fd.pth"
RANDOM_ENCODER = "random_resnet18"

#: marker of the compact state_dict form (int8 weights, one float scale per output channel)
COMPACT_FORMAT = "resnet18_int8_per_channel_v1"

__all__ = ["IMAGENET_MEAN", "IMAGENET_STD", "IMAGENET_WEIGHTS_URL", "RANDOM_ENCODER", "COMPACT_FORMAT",
           "imagenet_weights_path", "check_encoder", "seeded_spec", "quantize_state", "dequantize_state",
           "ResnetFeatures"]


def imagenet_weights_path() -> Path:
    """Where torchvision looks for the ImageNet ResNet-18 weights (``$TORCH_HOME/hub/checkpoints``)."""
    return Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(IMAGENET_WEIGHTS_URL)


def _random_seed(spec: str) -> int | None:
    """The seed of a ``random_resnet18[:seed]`` spec, None for other specs."""
    if spec == RANDOM_ENCODER:
        return 0
    if spec.startswith(RANDOM_ENCODER + ":"):
        tail = spec[len(RANDOM_ENCODER) + 1:]
        if not tail.isdigit():
            raise ValueError(f"visual encoder {spec!r}: the seed after ':' must be a non-negative integer")
        return int(tail)
    return None


def seeded_spec(spec: str, seed: int) -> str:
    """``random_resnet18`` with a separate seed (CLI ``--encoder-seed``) as one spec; others unchanged."""
    return f"{RANDOM_ENCODER}:{int(seed)}" if spec == RANDOM_ENCODER else spec


def check_encoder(spec: str) -> dict:
    """Validate an encoder spec quickly (no weights loaded); returns its `ResnetFeatures.encoder` record."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"visual encoder must be 'imagenet', '{RANDOM_ENCODER}[:seed]' or a file, got {spec!r}")
    seed = _random_seed(spec)
    if seed is not None:
        return {"name": RANDOM_ENCODER, "weights": "random", "seed": seed}
    if spec == "imagenet":
        path = imagenet_weights_path()
        if not path.is_file():
            raise FileNotFoundError(
                f"ResNet-18 ImageNet weights not found: put the file from {IMAGENET_WEIGHTS_URL} "
                f"at {path} (torch hub checkpoints; set TORCH_HOME to move it), or ask for another "
                f"encoder ('{RANDOM_ENCODER}' or a resnet18 state_dict file)")
        return {"name": "resnet18", "weights": "imagenet", "file": str(path)}
    path = _encoder_file(spec)
    if path is None:
        raise FileNotFoundError(f"--features: {spec!r} is neither 'imagenet' nor a state_dict file "
                                f"(nor '{RANDOM_ENCODER}[:seed]')")
    return {"name": "resnet18", "weights": "file", "file": str(path)}


def _encoder_file(spec: str) -> Path | None:
    """The encoder file `spec` names: as given, else (a relative path) inside this repository,
    where checkpoints trained with a shipped encoder record it as e.g.
    ``pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt`` (so they evaluate from any
    working directory); None when neither is a file."""
    path = Path(spec)
    if path.is_file():
        return path.resolve()
    in_repo = Path(__file__).resolve().parents[2] / path
    return in_repo.resolve() if not path.is_absolute() and in_repo.is_file() else None


def quantize_state(state: Dict[str, torch.Tensor]) -> Dict[str, Any]:
    """Compact form of a float state_dict: conv/linear weights as int8 with a symmetric scale per
    output channel, everything else (batch norm, biases) unchanged. 4x smaller for ResNet-18."""
    out: Dict[str, Any] = {"__format__": COMPACT_FORMAT}
    for k, v in state.items():
        if v.is_floating_point() and v.dim() >= 2:
            flat = v.detach().float().reshape(v.shape[0], -1)
            scale = (flat.abs().amax(dim=1) / 127.0).clamp_min(1e-12)
            q = torch.round(flat / scale[:, None]).clamp(-127, 127).to(torch.int8).reshape(v.shape)
            out[k] = {"q": q, "scale": scale}
        else:
            out[k] = v.detach().clone()
    return out


def dequantize_state(state: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """The float state_dict a compact one stands for (exactly the same numbers on every machine)."""
    out: Dict[str, torch.Tensor] = {}
    for k, v in state.items():
        if k == "__format__":
            continue
        if isinstance(v, dict):
            shape = (-1,) + (1,) * (v["q"].dim() - 1)
            out[k] = v["q"].float() * v["scale"].float().view(shape)
        else:
            out[k] = v
    return out


def _load_resnet18(spec: str, record: dict) -> torch.nn.Module:
    import torchvision

    if record["weights"] == "random":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(record["seed"])
            return torchvision.models.resnet18(weights=None)
    net = torchvision.models.resnet18(weights=None)
    path = Path(record["file"])
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the same user error
        raise ValueError(f"{path}: not a resnet18 state_dict ({type(e).__name__})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not a resnet18 state_dict (a {type(state).__name__})")
    if state.get("__format__") == COMPACT_FORMAT:
        try:
            state = dequantize_state(state)
        except (KeyError, TypeError, AttributeError, RuntimeError) as e:
            raise ValueError(f"{path}: a damaged compact resnet18 state_dict ({type(e).__name__}: {e})") from None
    missing, unexpected = net.load_state_dict(state, strict=False)
    conv_missing = [k for k in missing if not k.startswith("fc.")]
    if conv_missing or unexpected:
        raise ValueError(f"{path}: not a resnet18 state_dict (missing {conv_missing[:3]}, "
                         f"unexpected {list(unexpected)[:3]})")
    return net


class ResnetFeatures:
    """Callable: list of HxWx3 uint8 frames -> float tensor [N, 512, 7, 7] (224×224 input).

    `weights` is an encoder spec (module doc); `encoder` records what was loaded.
    """

    def __init__(self, weights: str, batch_size: int = 32) -> None:
        self.encoder = check_encoder(weights)
        net = _load_resnet18(weights, self.encoder)
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
        """Move the encoder (e.g. onto the trainer's GPU for `ResnetFeaturePreprocessor`)."""
        self.body, self.mean, self.std = self.body.to(device), self.mean.to(device), self.std.to(device)
        return self

    def describe(self) -> Dict[str, Any]:
        """`encoder` plus a digest of the weights and the feature shape: what a dataset or result
        file records, so features made by different encoders are never mixed unnoticed."""
        digest = hashlib.sha256()
        for v in self.body.state_dict().values():
            digest.update(v.detach().cpu().numpy().tobytes())
        return {**self.encoder, "weights_sha256": digest.hexdigest(), "feature_shape": [512, 7, 7], "input_size": 224}

"""Building the Active Neural SLAM module and loading its weights, with pre-flight checks.

Two weight files matter: ImageNet ResNet-18 (torchvision's file, for training the map from
scratch in the walkthrough mapping config) and the trained map itself
(`pretrained_active_neural_slam_via_walkthrough_75m.pt`, a plain ANM state dict, for the
frozen-map configs). Both are checked in seconds, before any worker starts, and a failure names
the file and how to get it. With `pretrained=False` the configs build the same module from a
seeded random initialisation instead (tests, CPU experiments).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

import torch
from allenact.embodiedai.mapping.mapping_models.active_neural_slam import ActiveNeuralSLAM

from common.errors import PretrainedWeightsError

from .map_settings import (
    DOWNLOAD_COMMAND,
    HEIGHT_MAP_CHANNELS,
    MAP_CHECKPOINT_NAME,
    MAP_FRAME_SIZE,
    MAP_RESOLUTION_CM,
    MAP_SIZE_CM,
    MAP_VISION_RANGE_CM,
    SEMANTIC_MAP_CHANNELS,
)

RESNET18_URL = (
    "https://download.pytorch.org/models/resnet18-f37072fd.pth"  # torchvision IMAGENET1K_V1
)
RANDOM_INIT_HINT = "or pass --config_kwargs '{\"pretrained\": false}' for a random init"
MAP_PREFIX = "map."  # where the ANM lives inside the map baselines' state dicts


def default_resnet18_path() -> Path:
    """Where torchvision itself caches the ImageNet ResNet-18 weights."""
    return Path(torch.hub.get_dir()) / "checkpoints" / Path(RESNET18_URL).name


def build_active_neural_slam(seed: Optional[int] = None) -> ActiveNeuralSLAM:
    """The official ANM (224 px frames, 5 cm cells, 200 cm view, 1050 cm map, 3+72 channels).

    Always built without torchvision's download; `seed` makes the random init reproducible
    without touching the global RNG (the rest of the model stays seeded by allenact)."""
    kwargs = dict(
        frame_height=MAP_FRAME_SIZE,
        frame_width=MAP_FRAME_SIZE,
        n_map_channels=HEIGHT_MAP_CHANNELS + SEMANTIC_MAP_CHANNELS,
        resolution_in_cm=MAP_RESOLUTION_CM,
        map_size_in_cm=MAP_SIZE_CM,
        vision_range_in_cm=MAP_VISION_RANGE_CM,
        pretrained_resnet=False,
        use_resnet_layernorm=True,
    )
    with warnings.catch_warnings():  # ANM passes torchvision's deprecated `pretrained=False`
        warnings.filterwarnings(
            "ignore", category=UserWarning, module=r"torchvision\.models\._utils"
        )
        if seed is None:
            return ActiveNeuralSLAM(**kwargs)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return ActiveNeuralSLAM(**kwargs)


def _load(path: Path, what: str, how: str) -> Any:
    if not path.is_file():
        raise PretrainedWeightsError(f"{what} not found at {path}: {how}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated, not a torch file, pickled code...
        raise PretrainedWeightsError(
            f"{path}: cannot load the {what} ({type(e).__name__}: {e}); {how}"
        ) from None


def load_resnet18_state_dict(path: Optional[Union[str, Path]] = None) -> Dict[str, torch.Tensor]:
    """torchvision's ImageNet ResNet-18 state dict, or a one-line error saying where to put it."""
    p = Path(path) if path else default_resnet18_path()
    how = f"download {RESNET18_URL} to {p} (or pass resnet_weights=<file>), {RANDOM_INIT_HINT}"
    sd = _load(p, "ImageNet ResNet-18 weights", how)
    if not isinstance(sd, Mapping) or "layer4.1.bn2.running_var" not in sd:
        raise PretrainedWeightsError(f"{p}: not a torchvision ResNet-18 state dict; {how}")
    return dict(sd)


def load_map_state_dict(path: Optional[Union[str, Path]] = None) -> Dict[str, torch.Tensor]:
    """A trained ANM state dict (official file or `rearrange.export_map` output), checked strictly."""
    from .map_settings import MAP_CHECKPOINT_PATH

    p = Path(path) if path else MAP_CHECKPOINT_PATH
    how = (
        f"get {MAP_CHECKPOINT_NAME} with `{DOWNLOAD_COMMAND}` (into {MAP_CHECKPOINT_PATH.parent}), "
        f"export one from a walkthrough_rgb_mapping_ppo checkpoint with `python -m rearrange.export_map`, "
        f"{RANDOM_INIT_HINT}"
    )
    sd = _load(p, "Active Neural SLAM map checkpoint", how)
    if isinstance(sd, Mapping) and "model_state_dict" in sd:
        raise PretrainedWeightsError(
            f"{p}: an allenact training checkpoint, not a map state dict; "
            f"export its map with `python -m rearrange.export_map --checkpoint {p}`"
        )
    expected = build_active_neural_slam(seed=0).state_dict()
    problem = _state_dict_mismatch(sd, expected)
    if problem:
        raise PretrainedWeightsError(
            f"{p}: not an Active Neural SLAM map of the official settings ({problem})"
        )
    return dict(sd)


def _state_dict_mismatch(sd: Any, expected: Mapping[str, torch.Tensor]) -> str:
    if not isinstance(sd, Mapping):
        return f"holds a {type(sd).__name__}, not a state dict"
    missing = sorted(set(expected) - set(sd))
    extra = sorted(set(sd) - set(expected))
    if missing or extra:
        return f"{len(missing)} missing keys (e.g. {missing[:2]}), {len(extra)} unexpected (e.g. {extra[:2]})"
    for k, v in expected.items():
        if not isinstance(sd[k], torch.Tensor) or tuple(sd[k].shape) != tuple(v.shape):
            return f"{k} has shape {tuple(getattr(sd[k], 'shape', ()))}, expected {tuple(v.shape)}"
    return ""


def load_resnet18_into_map(anm: ActiveNeuralSLAM, state_dict: Mapping[str, torch.Tensor]) -> None:
    """Copy torchvision ResNet-18 weights into the ANM trunk (conv1 ... layer4, no fc)."""
    from torchvision.models import resnet18

    net = resnet18()
    net.load_state_dict(state_dict)
    trunk = torch.nn.Sequential(*list(net.children())[:8])
    anm.resnet_l5.load_state_dict(trunk.state_dict())


def extract_map_state_dict(model_state_dict: Mapping[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The `map.` sub-dict of a map baseline's state dict, as the frozen-map configs load it."""
    sd = {
        k[len(MAP_PREFIX) :]: v.detach().clone()
        for k, v in model_state_dict.items()
        if k.startswith(MAP_PREFIX)
    }
    if not sd:
        raise PretrainedWeightsError(
            "the checkpoint has no `map.` parameters (is it from walkthrough_rgb_mapping_ppo?)"
        )
    return sd

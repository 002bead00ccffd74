"""Where the official rearrangement data splits and pretrained checkpoints live (facts only).

The one place in the repository that names these files, their URLs, sizes and sha256 sums
(from the official repository allenai/ai2thor-rearrangement and its README). The download
command (`rearrange.download`) and the loader's year selection (`rearrange.dataset`) read it.

Data files keep the official layout `data/<year>/<split>.pkl.gz` (next to our own generated
`data/rearrange/`); checkpoints go flat into `pretrained_model_ckpts/`, where the official
configs look for them. The base URLs can be overridden (a mirror, or a local server in tests)
through the environment variables below or the command's `--base-url`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from .constants import REPO_ROOT

DATA_BASE_URL = "https://raw.githubusercontent.com/allenai/ai2thor-rearrangement/main/data/"
CHECKPOINT_BASE_URL = (
    "https://prior-model-weights.s3.us-east-2.amazonaws.com/embodied-ai/rearrangement/"
)
DATA_BASE_URL_ENV = "REARRANGE_DATA_BASE_URL"
CHECKPOINT_BASE_URL_ENV = "REARRANGE_CHECKPOINT_BASE_URL"
OFFICIAL_DATA_DIR = REPO_ROOT / "data"  # official files land in data/<year>/<split>.pkl.gz
CHECKPOINT_DIR = REPO_ROOT / "pretrained_model_ckpts"


@dataclass(frozen=True)
class OfficialFile:
    """A file below a base URL, saved at the same relative place below an output folder
    (`dest`, when the official layout puts it elsewhere)."""

    url_path: str
    size: Optional[int] = None
    sha256: Optional[str] = None
    dest: Optional[str] = None

    @property
    def local_path(self) -> str:
        return self.dest or self.url_path


# (year, split) -> file; sizes and hashes of the official files.
DATA_FILES: Dict[Tuple[int, str], OfficialFile] = {
    (year, split): OfficialFile(f"{year}/{split}.pkl.gz", size, sha)
    for year, split, size, sha in (
        (
            2021,
            "train",
            2331879,
            "3bbe843088dd87911a31bd186a1e98a6741711f71133e4fa43698f57900fbfd9",
        ),
        (2021, "val", 541440, "1f21816752edc4d80a699daedaafaa65aae575cb6ede5391c6978c0ecef71331"),
        (2021, "test", 615348, "c6d7ce657319664d2dc23e636f5348f6582dfe8db41fb7311ce2bedd23c54e78"),
        (
            2021,
            "combined",
            2584528,
            "cdf81f635280c1af4405a27f8576f8d1be0291f17c47a54e2f726225166abc3b",
        ),
        (
            2021,
            "train_unseen",
            2165823,
            "411849d4db91715bad3e50cd84d5bde4e36efa92f8d0b072657a4a543a41d733",
        ),
        (
            2022,
            "train",
            2227648,
            "a3729975ac6dff9f215d2c7ce955b12afbee3b60f2323998757250f797796b96",
        ),
        (2022, "val", 524733, "39e4d3f35f90e1ae9005de336fd5246ad343e4eeabd27826d3b6b3e1bbad2a01"),
        (2022, "test", 578383, "dbc3998d249ae21ea0b660ee399bde1e05c4c49ebe791b2aabd9f13e03c5ad10"),
        (
            2022,
            "combined",
            1604680,
            "719c5def8925b9809b7df62143b419a90195832a1a3797d857538644347c85fd",
        ),
        (
            2023,
            "train",
            2082003,
            "e07f0324287d9a28fee7cc1d8a630818bfa9c2d73ac1935eed388bf3bf08336b",
        ),
        (2023, "val", 493172, "06e82da9b5e0cb7ea9ddcbfea5e052a506c72fd2af13509f1e4a964a8e888cc8"),
        (2023, "test", 553679, "25de7a93899be9fb1c29bfc4ef6cd3d316fa3d50f411bd2b10d1994d502d2092"),
        (
            2023,
            "combined",
            1518503,
            "b07dc083f330fbbfa09e09bfc586a0b8cb025138d8f6857bd2da0813d8ada636",
        ),
    )
}
YEARS: Tuple[int, ...] = tuple(sorted({y for y, _ in DATA_FILES}))


def official_splits(year: int) -> Tuple[str, ...]:
    return tuple(s for y, s in DATA_FILES if y == year)


# The Active Neural SLAM map weights that the frozen-map configs load.
MAP_WEIGHTS = OfficialFile(
    "walkthrough/pretrained_active_neural_slam_via_walkthrough_75m.pt",
    dest="pretrained_active_neural_slam_via_walkthrough_75m.pt",
)


@dataclass(frozen=True)
class OfficialCheckpoint:
    """An official agent: its config (path in the official repository), weights and the
    % Fixed Strict on test the official README reports, by dataset year."""

    config: str
    file: OfficialFile
    fixed_strict_test: Mapping[int, float] = field(default_factory=dict)

    @property
    def needs_map(self) -> bool:
        return "frozen_map" in self.config


def _ckpt(config: str, url_path: str, **fixed_strict: float) -> OfficialCheckpoint:
    name = url_path.rsplit("/", 1)[-1]
    return OfficialCheckpoint(
        config, OfficialFile(url_path, dest=name), {int(y[1:]): v for y, v in fixed_strict.items()}
    )


_ONE = "one-phase/exp_"
_TWO = "two-phase/exp_"
# config name (file stem in baseline_configs/) -> checkpoint, in the official README's order.
CHECKPOINTS: Dict[str, OfficialCheckpoint] = {
    c.config.rsplit("/", 1)[-1][: -len(".py")]: c
    for c in (
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_clipresnet50_dagger.py",
            _ONE + "OnePhaseRGBClipResNet50Dagger_40proc__stage_00__steps_000065083050.pt",
            y2023=13.6,
            y2022=19.1,
            y2021=17.3,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_resnet_frozen_map_dagger.py",
            _ONE + "OnePhaseRGBResNetFrozenMapDagger_40proc__stage_00__steps_000040060240.pt",
            y2021=8.9,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_resnet50_dagger.py",
            _ONE + "OnePhaseRGBImageNetResNet50Dagger_40proc_aws0__stage_00__steps_000070075580.pt",
            y2021=7.0,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_resnet_dagger.py",
            _ONE + "OnePhaseRGBResNetDagger_40proc__stage_00__steps_000050058550.pt",
            y2021=6.3,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_resnet_ppo.py",
            _ONE + "OnePhaseRGBResNetPPO__stage_00__steps_000060068000.pt",
            y2021=5.3,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_dagger.py",
            _ONE + "OnePhaseRGBDagger_40proc__stage_00__steps_000065070800.pt",
            y2021=4.8,
        ),
        _ckpt(
            "baseline_configs/one_phase/one_phase_rgb_ppo.py",
            _ONE + "OnePhaseRGBPPO__stage_00__steps_000010010730.pt",
            y2021=4.6,
        ),
        # The official README links this one without its two_phase/ folder; the file is in two_phase/.
        _ckpt(
            "baseline_configs/two_phase/two_phase_rgb_resnet_frozen_map_ppowalkthrough_ilunshuffle.py",
            _TWO
            + "TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffle_40proc-longtf__stage_00__steps_000075000985.pt",
            y2022=0.53,
            y2021=1.44,
        ),
        _ckpt(
            "baseline_configs/two_phase/two_phase_rgb_resnet_ppowalkthrough_ilunshuffle.py",
            _TWO
            + "TwoPhaseRGBResNetPPOWalkthroughILUnshuffle_40proc-longtf__stage_00__steps_000020028800.pt",
            y2021=0.66,
        ),
    )
}


def data_base_url(override: Optional[str] = None) -> str:
    """`override`, else $REARRANGE_DATA_BASE_URL, else the official repository."""
    return _with_slash(override or os.environ.get(DATA_BASE_URL_ENV) or DATA_BASE_URL)


def checkpoint_base_url(override: Optional[str] = None) -> str:
    """`override`, else $REARRANGE_CHECKPOINT_BASE_URL, else the official bucket."""
    return _with_slash(override or os.environ.get(CHECKPOINT_BASE_URL_ENV) or CHECKPOINT_BASE_URL)


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def official_data_path(year: int, split: str, data_root: Optional[Path] = None) -> Path:
    """Where `python -m rearrange.download data` puts (year, split) below `data_root`."""
    return Path(data_root or OFFICIAL_DATA_DIR) / DATA_FILES[(year, split)].local_path


def download_data_command(year: int, split: str, data_root: Optional[Path] = None) -> str:
    """The exact command that fetches one official split (for error messages)."""
    out = f" --out {data_root}" if data_root is not None else ""
    return f"python -m rearrange.download data --years {year} --splits {split}{out}"

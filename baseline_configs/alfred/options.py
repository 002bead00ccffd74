"""The options of the ALFRED Seq2Seq(+PM) configs as frozen dataclasses, one typed home for what
``allenact --config_kwargs '{...}'`` may set (the field docs are the base config's docstring).

Values are checked here, once, with one line naming the field and the value; checks that need
the file system (the split file, the encoder's weights, the dataset's encoder) stay in the
configs, which run them after these. Numbers are normalised as the configs always did
(``lr`` a float, counts ints), so a config reads its options as they were read from kwargs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

from alfred_task import constants as C
from alfred_task.models.actor_critic import PREV_ACTION_INPUTS
from alfred_task.models.seq2seq import ABLATIONS
from backends import DEFAULT_BACKEND

__all__ = [
    "AlfredSeq2SeqDaggerOptions",
    "AlfredSeq2SeqILOptions",
    "AlfredSeq2SeqOptions",
    "ConfigError",
    "MODEL_SIZES",
    "PATH_OPTIONS",
]

MODEL_SIZES = {
    "official": dict(demb=100, dhid=512, dframe=2500, pframe=300),
    "lite": dict(demb=64, dhid=128, dframe=256, pframe=100),
}

#: options naming files of the machine a run is on, not part of a recipe
PATH_OPTIONS = ("data_root", "splits", "vocab", "demo_data_root", "demo_splits")

_O = TypeVar("_O", bound="AlfredSeq2SeqOptions")


class ConfigError(SystemExit):
    """Bad config kwargs: allenact prints the one-line message and exits 1 (no traceback)."""

    def __init__(self, msg: str) -> None:
        super().__init__(f"alfred config: {msg}")


def _number(name: str, value: Any, kind: type, optional: bool = False) -> Any:
    """`kind(value)` (None kept where the option allows it), or one line naming the option."""
    if value is None and optional:
        return None
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: {value!r} is not a number") from None


def _flag(name: str, value: Any, article: str = "must be") -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{name}: {value!r} {article} true or false")
    return value


@dataclass(frozen=True, kw_only=True)
class AlfredSeq2SeqOptions:
    """Every option of `AlfredSeq2SeqBaseConfig`, with the defaults it has always had."""

    data_root: str = "out/alfred_s2s"
    splits: Optional[str] = None
    vocab: Optional[str] = None
    visual_encoder: str = "imagenet"
    model_size: str = "official"
    demb: Optional[int] = None
    dhid: Optional[int] = None
    dframe: Optional[int] = None
    pframe: Optional[int] = None
    ablation: str = "none"
    lr: float = 1e-4
    batch_size: int = 8
    training_frames: int = 200_000
    save_interval: Optional[int] = None
    num_train_processes: Optional[int] = None
    num_test_processes: Optional[int] = None
    test_split: str = "valid_seen"
    test_limit: Optional[int] = None
    max_steps: int = C.MAX_STEPS
    backend: str = DEFAULT_BACKEND
    planner: str = "template"
    metric_accumulate_interval: Optional[int] = None
    #: the test-stage rollout storage and the policy's own masks; None = on exactly in AllenAct's
    #: test mode (``allenact --eval``), see `AlfredSeq2SeqBaseConfig.machine_params`
    eval_storage: Optional[bool] = None
    sampler_torch_threads: int = 1
    trainer_torch_threads: Optional[int] = None
    prev_action_input: str = "argmax"
    mask_dice_weight: float = 0.0
    spatial_mask: bool = False
    subcell_mask: bool = False

    def __post_init__(self) -> None:
        if self.model_size not in MODEL_SIZES:
            raise ConfigError(
                f"model_size: {self.model_size!r} is not one of {sorted(MODEL_SIZES)}"
            )
        for name in ("demb", "dhid", "dframe", "pframe"):
            self._set(name, _number(name, getattr(self, name), int, optional=True))
        if self.ablation not in ABLATIONS:
            raise ConfigError(f"ablation: {self.ablation!r} is not one of {sorted(ABLATIONS)}")
        if self.prev_action_input not in PREV_ACTION_INPUTS:
            raise ConfigError(
                f"prev_action_input: {self.prev_action_input!r} is not one of "
                f"{list(PREV_ACTION_INPUTS)}"
            )
        try:
            dice = float(self.mask_dice_weight)
        except (TypeError, ValueError):
            dice = float("nan")
        if not dice >= 0.0:
            raise ConfigError(f"mask_dice_weight: {self.mask_dice_weight!r} must be a number >= 0")
        self._set("mask_dice_weight", dice)
        _flag("spatial_mask", self.spatial_mask)
        _flag("subcell_mask", self.subcell_mask)
        self._set("lr", _number("lr", self.lr, float))
        for name in ("batch_size", "training_frames", "max_steps", "sampler_torch_threads"):
            self._set(name, _number(name, getattr(self, name), int))
        self._set(
            "trainer_torch_threads",
            _number("trainer_torch_threads", self.trainer_torch_threads, int, True),
        )
        if self.sampler_torch_threads < 1 or (
            self.trainer_torch_threads is not None and self.trainer_torch_threads < 1
        ):
            raise ConfigError(
                f"sampler_torch_threads / trainer_torch_threads must be >= 1, got "
                f"{self.sampler_torch_threads!r} / {self.trainer_torch_threads!r}"
            )
        if self.eval_storage is not None:
            self._set("eval_storage", bool(self.eval_storage))

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)  # normalising a frozen instance in __post_init__

    @property
    def dims(self) -> Dict[str, int]:
        """The network's dimensions: ``model_size``'s, each overridden where given."""
        size = MODEL_SIZES[self.model_size]
        return {
            k: int(v if (v := getattr(self, k)) is not None else size[k])
            for k in ("demb", "dhid", "dframe", "pframe")
        }

    @classmethod
    def from_kwargs(cls: Type[_O], kwargs: Mapping[str, Any]) -> _O:
        """The options from ``--config_kwargs``; a key that is no option is one line, not a TypeError."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ConfigError(
                f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"(options: {', '.join(sorted(known))})"
            )
        return cls(**kwargs)


@dataclass(frozen=True, kw_only=True)
class AlfredSeq2SeqILOptions(AlfredSeq2SeqOptions):
    """Pure imitation: which split the demonstrations come from, and how many of them."""

    train_split: str = "train"
    max_examples: Optional[int] = None


@dataclass(frozen=True, kw_only=True)
class AlfredSeq2SeqDaggerOptions(AlfredSeq2SeqOptions):
    """DAgger: teacher-forcing schedule, rollout length, batch norm and the optional demonstrations."""

    train_split: str = "train"
    bc_tf1_steps: Optional[int] = None
    dagger_steps: Optional[int] = None
    num_steps: int = 32
    freeze_batchnorm: bool = True
    demo_data_root: Optional[str] = None
    demo_splits: Optional[str] = None
    demo_split: str = "train"

    def __post_init__(self) -> None:
        super().__post_init__()
        _flag("freeze_batchnorm", self.freeze_batchnorm, article="is not")
        for name, optional in (
            ("num_steps", False),
            ("bc_tf1_steps", True),
            ("dagger_steps", True),
        ):
            self._set(name, _number(name, getattr(self, name), int, optional))

    def teacher_forcing_steps(self) -> Tuple[int, int]:
        """(steps at teacher forcing 1, steps of its linear decay): 10 % and 50 % of the run unless given."""
        t = self.training_frames
        return (
            self.bc_tf1_steps if self.bc_tf1_steps is not None else int(0.1 * t),
            self.dagger_steps if self.dagger_steps is not None else int(0.5 * t),
        )

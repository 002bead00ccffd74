"""Teacher-forced ALFRED demonstrations as padded batches (the inputs of ALFRED's Seq2Seq, §6.1).

Why a module of its own: imitation learning (``baseline_configs/alfred/*_il.py``), the
held-out loss and the offline AllenAct storage (:mod:`alfred_task.training.il_storage`) all read the
same sequences, built once here from ``traj_data.json`` + ALFRED's preprocessing
(:func:`alfred_task.data.preprocess.preprocess_traj`) + ``feat_conv.pt``.

One *example* is one (trajectory, annotation) pair, as ALFRED trains. Its time axis has
T = len(plan.low_actions) + 1 steps: every low action, then ``<<stop>>``.

Batch keys (``collate``; B examples, T = longest sequence, pad id 0, pad frames 0):

=============================  ==========================  ===========================================
key                            shape / dtype               meaning
=============================  ==========================  ===========================================
``lang_goal``                  [B, Lg] int64               word ids of task_desc + ``<<goal>>``
``lang_goal_len``              [B] int64                   unpadded lengths
``lang_instr``                 [B, Li] int64               word ids of all step instructions, then
                                                           ``<<stop>>`` (ALFRED concatenates
                                                           ``lang_goal`` + ``lang_instr``)
``lang_instr_len``             [B] int64
``frames``                     [B, T, 512, 7, 7] float32   ResNet-18 conv features before each step
                                                           (only with ``load_features``)
``action_low``                 [B, T] int64                action_low vocab ids incl. ``<<stop>>``
``seq_len``                    [B] int64                   T of each example (pad mask = t < seq_len)
``pad_mask``                   [B, T] bool                 True on real steps
``action_low_valid_interact``  [B, T] bool                 step needs a mask (interaction)
``action_low_mask``            [N, S, S] float32           gold masks of the N interaction steps, in
                                                           (b, t) row-major order (ALFRED packs them
                                                           the same way); S = ``mask_size`` (300)
``subgoals_completed``         [B, T] float32              high_idx(t) / 25 (ALFRED's max_subgoals)
``subgoal_progress``           [B, T] float32              (t + 1) / T
``task`` / ``repeat_idx``      lists of length B           which example (not tensors)
=============================  ==========================  ===========================================

Order is deterministic: ``batches(seed, epoch)`` permutes the examples with a generator
seeded by (seed, epoch); the same arguments give the same batches on every machine.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from alfred_task.data.masks import decompress_mask
from alfred_task.data.preprocess import AlfredVocab, preprocess_traj
from alfred_task.data.traj_data import SplitEntry, load_split_file

#: ALFRED's normaliser of the subgoal-progress target (`max_subgoals`, §6.3)
MAX_SUBGOALS = 25
FEAT_FILE = "feat_conv.pt"
FEAT_SHAPE = (512, 7, 7)
BATCH_KEYS = ("lang_goal", "lang_goal_len", "lang_instr", "lang_instr_len", "frames", "action_low", "seq_len",
              "pad_mask", "action_low_valid_interact", "action_low_mask", "subgoals_completed", "subgoal_progress")


class DemoDataError(ValueError):
    """A trajectory or its features cannot be used (names the file and the problem)."""


@dataclass(frozen=True)
class Example:
    """One teacher-forced sequence (numpy, unpadded)."""

    task: str
    repeat_idx: int
    traj_dir: Path
    lang_goal: np.ndarray
    lang_instr: np.ndarray
    action_low: np.ndarray
    valid_interact: np.ndarray
    masks_rle: Tuple[Any, ...]
    high_idx: np.ndarray
    images: Tuple[int, ...]  # low_idx of every listed image (to pick frames in full datasets)

    @property
    def num_steps(self) -> int:
        return len(self.action_low)


def example_from_pp(pp: Mapping[str, Any], task: str, traj_dir: Path) -> Example:
    """The sequences of one preprocessed (``pp/ann_<r>.json``-shaped) dict."""
    num = pp["num"]
    steps = [a for seg in num["action_low"] for a in seg]
    return Example(
        task=task, repeat_idx=int(pp["repeat_idx"]), traj_dir=traj_dir,
        lang_goal=np.asarray(num["lang_goal"], dtype=np.int64),
        lang_instr=np.asarray([w for seg in num["lang_instr"] for w in seg], dtype=np.int64),
        action_low=np.asarray([a["action"] for a in steps], dtype=np.int64),
        valid_interact=np.asarray([bool(a["valid_interact"]) for a in steps], dtype=bool),
        masks_rle=tuple(a["mask"] for a in steps if a["valid_interact"]),
        high_idx=np.asarray(num["low_to_high_idx"], dtype=np.int64),
        images=tuple(int(im["low_idx"]) for im in pp.get("images") or ()),
    )


def build_vocab(data_root: Path, splits: Mapping[str, Sequence[SplitEntry]]) -> AlfredVocab:
    """ALFRED's vocabulary: grown over every split, tests included, in split-file order (§2.5),
    i.e. the one ``python -m alfred_task.data.preprocess`` writes as ``pp.vocab``."""
    vocab = AlfredVocab.new()
    for split, entries in splits.items():
        cached: Tuple[Optional[Path], Dict[str, Any]] = (None, {})
        for entry in entries:
            path = entry.traj_path(data_root, split)
            if cached[0] != path:
                cached = (path, read_traj_json(path))
            preprocess_traj(cached[1], vocab, entry.repeat_idx, grow=True)
    return vocab


def resolve_vocab(vocab: AlfredVocab | str | Path | None, data_root: Path,
                  splits: Mapping[str, Sequence[SplitEntry]]) -> AlfredVocab:
    """`vocab` itself, the pp.vocab file it names, or `build_vocab` over `splits` when None."""
    if vocab is None:
        return build_vocab(Path(data_root), splits)
    if isinstance(vocab, (str, Path)):
        return AlfredVocab.load(vocab)
    return vocab


def read_traj_json(path: Path) -> Dict[str, Any]:
    """A traj_data.json as a dict; DemoDataError naming the file when missing or malformed."""
    if not path.is_file():
        raise DemoDataError(f"{path}: trajectory file not found")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DemoDataError(f"{path}: not valid JSON ({e})") from None


def load_features(ex: Example) -> torch.Tensor:
    """[T, 512, 7, 7] frames of an example from its ``feat_conv.pt``.

    Accepts ALFRED's two layouts: one feature per low action plus the stop frame (json_feat,
    our generator), or one per listed image (full dataset; the first image of each low action
    is kept and the last one repeated for ``<<stop>>``, as ALFRED's featurize does).
    """
    path = ex.traj_dir / FEAT_FILE
    if not path.is_file():
        raise DemoDataError(f"{path}: features not found (generate with --features, or load_features=False)")
    feat = torch.load(path, map_location="cpu", weights_only=True)
    if feat.ndim != 4 or tuple(feat.shape[1:]) != FEAT_SHAPE:
        raise DemoDataError(f"{path}: expected [N, 512, 7, 7] features, got {list(feat.shape)}")
    n = ex.num_steps
    if feat.shape[0] == n:
        return feat.float()
    low_idx = ex.images
    if low_idx and feat.shape[0] >= len(low_idx) and max(low_idx) == n - 2:
        first = {}
        for i, li in enumerate(low_idx):
            first.setdefault(li, i)
        keep = [first[t] for t in range(n - 1)]
        return feat[keep + keep[-1:]].float()
    raise DemoDataError(f"{path}: {feat.shape[0]} features for {n - 1} low actions (expected {n}, or one per image)")


def _pad(seqs: Sequence[np.ndarray], dtype: torch.dtype) -> torch.Tensor:
    out = torch.zeros(len(seqs), max(len(s) for s in seqs), dtype=dtype)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.as_tensor(s, dtype=dtype)
    return out


def _masks(examples: Sequence[Example], mask_size: int) -> torch.Tensor:
    rles = [r for ex in examples for r in ex.masks_rle]
    if not rles:
        return torch.zeros(0, mask_size, mask_size)
    m = torch.from_numpy(np.stack([decompress_mask(r) for r in rles]).astype(np.float32))
    if m.shape[-1] != mask_size:
        m = torch.nn.functional.interpolate(m[:, None], size=(mask_size, mask_size), mode="nearest")[:, 0]
    return m


def collate(examples: Sequence[Example], with_frames: bool = True, mask_size: int = 300) -> Dict[str, Any]:
    """Pad a list of examples into one batch dict (keys and shapes: module docstring)."""
    lengths = torch.tensor([ex.num_steps for ex in examples])
    t_max = int(lengths.max())
    pad_mask = torch.arange(t_max)[None] < lengths[:, None]
    batch: Dict[str, Any] = {
        "lang_goal": _pad([ex.lang_goal for ex in examples], torch.long),
        "lang_goal_len": torch.tensor([len(ex.lang_goal) for ex in examples]),
        "lang_instr": _pad([ex.lang_instr for ex in examples], torch.long),
        "lang_instr_len": torch.tensor([len(ex.lang_instr) for ex in examples]),
        "action_low": _pad([ex.action_low for ex in examples], torch.long),
        "seq_len": lengths,
        "pad_mask": pad_mask,
        "action_low_valid_interact": _pad([ex.valid_interact for ex in examples], torch.bool),
        "action_low_mask": _masks(examples, mask_size),
        "subgoals_completed": _pad([ex.high_idx / MAX_SUBGOALS for ex in examples], torch.float32),
        "subgoal_progress": _pad([np.arange(1, ex.num_steps + 1) / ex.num_steps for ex in examples],
                                 torch.float32),
        "task": [ex.task for ex in examples],
        "repeat_idx": [ex.repeat_idx for ex in examples],
    }
    if with_frames:
        frames = torch.zeros(len(examples), t_max, *FEAT_SHAPE)
        for i, ex in enumerate(examples):
            frames[i, :ex.num_steps] = load_features(ex)
        batch["frames"] = frames
    return batch


class AlfredILDataset:
    """The (trajectory, annotation) examples of one split, batched deterministically."""

    def __init__(self, data_root: Path, splits: Path | Mapping[str, Sequence[SplitEntry]], split: str,
                 vocab: AlfredVocab | str | Path | None = None, load_features: bool = True, mask_size: int = 300,
                 max_examples: Optional[int] = None) -> None:
        self.data_root = Path(data_root)
        all_splits = load_split_file(splits) if not isinstance(splits, Mapping) else dict(splits)
        if split not in all_splits:
            raise DemoDataError(f"split {split!r} is not in the split file (has {sorted(all_splits)})")
        #: a pp.vocab path, an AlfredVocab, or (None) built from every split as ALFRED's preprocessing does
        self.vocab = resolve_vocab(vocab, self.data_root, all_splits)
        self.split, self.load_features, self.mask_size = split, bool(load_features), int(mask_size)
        entries = list(all_splits[split])[:max_examples]
        self._cache: Tuple[Optional[Path], Dict[str, Any]] = (None, {})  # annotations of a trajectory are adjacent
        self.examples: List[Example] = [self._example(e) for e in entries]
        self._cache = (None, {})

    def _example(self, entry: SplitEntry) -> Example:
        path = entry.traj_path(self.data_root, self.split)
        if self._cache[0] != path:
            self._cache = (path, read_traj_json(path))
        traj = self._cache[1]
        if "plan" not in traj:
            raise DemoDataError(f"{path}: no plan (test splits cannot be used for imitation)")
        try:
            pp = preprocess_traj(traj, self.vocab, entry.repeat_idx, split=self.split, grow=False)
        except KeyError as e:
            raise DemoDataError(f"{path}: token {e} is not in the vocabulary") from None
        return example_from_pp(pp, entry.task, path.parent)

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def num_frames(self) -> int:
        """Teacher-forced steps (frames) in one pass over the split."""
        return sum(ex.num_steps for ex in self.examples)

    def order(self, seed: int, epoch: int, shuffle: bool = True) -> List[int]:
        if not shuffle:
            return list(range(len(self)))
        return [int(i) for i in np.random.default_rng([int(seed), int(epoch)]).permutation(len(self))]

    def batches(self, batch_size: int, seed: int = 0, epoch: int = 0, shuffle: bool = True,
                indices: Optional[Sequence[int]] = None) -> Iterator[Dict[str, Any]]:
        """Padded batches of one epoch (the last one may be smaller); `indices` restricts to a shard."""
        order = self.order(seed, epoch, shuffle)
        if indices is not None:
            keep = set(indices)
            order = [i for i in order if i in keep]
        for i in range(0, len(order), batch_size):
            yield self.batch([order[j] for j in range(i, min(i + batch_size, len(order)))])

    def batch(self, idx: Sequence[int]) -> Dict[str, Any]:
        return collate([self.examples[i] for i in idx], self.load_features, self.mask_size)

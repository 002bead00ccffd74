"""ALFRED preprocessing: tokenisation, vocabularies and ``pp/ann_<r>.json`` (reference §2.5, §7).

Library use::

    vocab = AlfredVocab.new()
    pp = preprocess_traj(load_traj_data(path), vocab, repeat_idx=0, split="train", root=...)

Command line::

    python -m alfred_task.preprocess --data <json_root> --splits <split.json> [--out <dir>]

For every split entry ``{task, repeat_idx}`` (splits in file key order, entries in file
order) it reads ``<data>/<split>/<task>/traj_data.json`` and writes
``<out>/<split>/<task>/pp/ann_<repeat_idx>.json`` (``<out>`` defaults to ``<data>``, i.e.
next to each trajectory), then the vocabulary ``<out>/pp.vocab``.

Vocabulary file: ALFRED writes ``pp.vocab`` with ``torch.save`` (a dict of ``vocab.Vocab``
objects). We keep the file name and the torch format but store plain token lists,
``{"word": [...], "action_low": [...], "action_high": [...]}`` (index = position), so it
loads with ``torch.load(path, weights_only=True)`` and does not need the third-party
``vocab`` package. ``--vocab-format json`` writes the same dict as JSON instead.
`AlfredVocab.load` reads either.

Vocabulary growth (as ALFRED): the word and action_high vocabularies grow over every split
processed, tests included, in processing order, so the result is deterministic for a given
split file. action_low is the fixed 15-entry list `constants.ACTION_LOW_VOCAB` (§2.5).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from common.atomic_io import write_bytes_atomic, write_json_atomic

from . import constants as C
from .traj_data import SplitEntry, load_split_file, load_traj_data
from .traj_schema import TrajData, TrajDataError

# ---------------------------------------------------------------------------
# tokenisation
# ---------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Collapse whitespace and lower-case (ALFRED does this before tokenising)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return " ".join(text.split()).lower()


def _char_class(ch: str) -> str:
    if ch.isspace():
        return " "
    cat = unicodedata.category(ch)[0]
    if cat in "LM":
        return "L"  # letters and combining marks form words
    if cat == "N":
        return "N"  # runs of numerals
    if cat == "S":
        return "S"  # runs of symbols ($, +, emoji, ...)
    return "P"  # punctuation and everything else: one token per character


def tokenize(text: str) -> list[str]:
    """Split text into tokens with the same boundaries as revtok 0.0.3 (ALFRED's tokenizer).

    Runs of letters, runs of digits and runs of symbols are tokens; each punctuation
    character is its own token; whitespace separates and is dropped. revtok attaches
    surrounding spaces to its tokens, which ALFRED strips at numericalisation; we return
    the stripped tokens directly. Case is preserved (use `normalize_text` first, as
    `preprocess_traj` does).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    out: list[str] = []
    cur: list[str] = []
    cur_cls = None
    for ch in text:
        k = _char_class(ch)
        if k in "LNS" and k == cur_cls:
            cur.append(ch)
            continue
        if cur:
            out.append("".join(cur))
        cur, cur_cls = [], None
        if k == " ":
            continue
        if k == "P":
            out.append(ch)
            continue
        cur, cur_cls = [ch], k
    if cur:
        out.append("".join(cur))
    return out


# ---------------------------------------------------------------------------
# vocabularies
# ---------------------------------------------------------------------------
class Vocab:
    """Ordered token <-> index map. Growing appends; indices never change."""

    def __init__(self, tokens: Iterable[str] = (), name: str = "vocab", frozen: bool = False):
        self.name = name
        self._itos: list[str] = []
        self._stoi: dict[str, int] = {}
        for t in tokens:
            self._add(t)
        self.frozen = frozen

    def _add(self, token: str) -> int:
        if not isinstance(token, str):
            raise ValueError(f"{self.name} vocabulary tokens must be strings, got {token!r}")
        if token in self._stoi:
            raise ValueError(f"duplicate token {token!r} in {self.name} vocabulary")
        self._stoi[token] = len(self._itos)
        self._itos.append(token)
        return self._stoi[token]

    def index(self, token: str, grow: bool = True) -> int:
        i = self._stoi.get(token)
        if i is not None:
            return i
        if not grow or self.frozen:
            raise KeyError(f"token {token!r} is not in the {self.name} vocabulary ({len(self)} entries)")
        return self._add(token)

    def word2index(self, tokens, train: bool = True):
        """Index of one token or a list of tokens (grows when `train`)."""
        if isinstance(tokens, str):
            return self.index(tokens, grow=train)
        return [self.index(t, grow=train) for t in tokens]

    def index2word(self, ids):
        if isinstance(ids, int):
            return self._itos[ids]
        return [self._itos[i] for i in ids]

    @property
    def tokens(self) -> list[str]:
        return list(self._itos)

    def __len__(self) -> int:
        return len(self._itos)

    def __contains__(self, token) -> bool:
        return token in self._stoi

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self._itos == other._itos

    def __repr__(self) -> str:
        return f"Vocab({self.name!r}, {len(self)} tokens)"


@dataclass
class AlfredVocab:
    word: Vocab
    action_low: Vocab
    action_high: Vocab

    KEYS = ("word", "action_low", "action_high")

    @classmethod
    def new(cls) -> "AlfredVocab":
        """Seeded vocabularies: word <<pad>>,<<seg>>,<<goal>>; action_low the fixed 15;
        action_high <<pad>>,<<seg>>,<<stop>>."""
        return cls(
            word=Vocab(C.WORD_SPECIAL_TOKENS, "word"),
            action_low=Vocab(C.ACTION_LOW_VOCAB, "action_low", frozen=True),
            action_high=Vocab(C.ACTION_SPECIAL_TOKENS, "action_high"),
        )

    def to_dict(self) -> dict[str, list[str]]:
        return {k: getattr(self, k).tokens for k in self.KEYS}

    @classmethod
    def from_dict(cls, d: dict, source: str = "<vocab>") -> "AlfredVocab":
        if not isinstance(d, dict):
            raise ValueError(f"{source}: vocabulary must be a dict with keys {list(cls.KEYS)}")
        for k in cls.KEYS:
            if k not in d:
                raise ValueError(f"{source}: vocabulary is missing {k!r}")
            if not isinstance(d[k], list) or not all(isinstance(t, str) for t in d[k]):
                raise ValueError(f"{source}: vocabulary {k!r} must be a list of strings")
        specials = {"word": C.WORD_SPECIAL_TOKENS, "action_low": C.ACTION_SPECIAL_TOKENS, "action_high": C.ACTION_SPECIAL_TOKENS}
        for k, seed in specials.items():
            if tuple(d[k][: len(seed)]) != seed:
                raise ValueError(f"{source}: vocabulary {k!r} must start with {list(seed)}, got {d[k][:len(seed)]}")
        return cls(
            word=Vocab(d["word"], "word"),
            action_low=Vocab(d["action_low"], "action_low", frozen=True),
            action_high=Vocab(d["action_high"], "action_high"),
        )

    def save(self, path: str | os.PathLike, fmt: str | None = None) -> Path:
        """Write the vocabulary: torch.save of plain lists (default), or JSON (`fmt='json'`
        or a path ending in .json). Atomic."""
        p = Path(path)
        fmt = fmt or ("json" if p.suffix == ".json" else "torch")
        if fmt == "json":
            return write_json_atomic(p, self.to_dict(), indent=1, sort_keys=False)
        if fmt != "torch":
            raise ValueError(f"unknown vocabulary format {fmt!r} (use 'torch' or 'json')")
        import io

        import torch

        buf = io.BytesIO()  # saving to a buffer keeps the archive name fixed -> byte-deterministic
        torch.save(self.to_dict(), buf)
        write_bytes_atomic(p, buf.getvalue())
        return p

    @classmethod
    def load(cls, path: str | os.PathLike) -> "AlfredVocab":
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"vocabulary file {p} not found")
        with open(p, "rb") as f:
            head = f.read(1)
        if head in (b"{", b" ", b"\n"):
            with open(p, "r", encoding="utf-8") as f:
                return cls.from_dict(json.load(f), str(p))
        import torch

        return cls.from_dict(torch.load(p, weights_only=True), str(p))


# ---------------------------------------------------------------------------
# per-trajectory preprocessing
# ---------------------------------------------------------------------------
def _end_subgoal(high_idx: int) -> dict:
    return {
        "discrete_action": {"action": C.END_HIGH_ACTION, "args": []},
        "planner_action": {"action": C.END_PLANNER_ACTION, "value": 1},
        "high_idx": high_idx,
    }


def _centroid(args: dict) -> list[float]:
    bbox = args.get("bbox")
    if not bbox:
        return [-1, -1]
    x1, y1, x2, y2 = bbox
    return [(x1 + x2) / 2 / C.SCREEN_WIDTH, (y1 + y2) / 2 / C.SCREEN_HEIGHT]


def _as_traj(traj) -> TrajData:
    if isinstance(traj, TrajData):
        return traj
    if isinstance(traj, dict):
        return TrajData.from_dict(traj)
    raise TypeError(f"traj must be a TrajData or a traj_data dict, got {type(traj).__name__}")


def preprocess_traj(
    traj: TrajData | dict,
    vocab: AlfredVocab,
    repeat_idx: int,
    *,
    split: str | None = None,
    root: str | None = None,
    grow: bool = True,
) -> dict:
    """Build the ``pp/ann_<repeat_idx>.json`` dict for one (trajectory, annotation) (§2.5).

    Returns a copy of the trajectory JSON plus ``root``, ``split`` (when given),
    ``repeat_idx``, ``ann`` = {goal, instr, repeat_idx} and ``num`` = {lang_goal,
    lang_instr} and, for trajectories with a plan (train/valid), {action_low, action_high,
    low_to_high_idx}. The input is not modified. `grow=False` raises KeyError on
    out-of-vocabulary tokens instead of adding them.
    """
    t = _as_traj(traj)
    where = t.source or t.task_id
    if isinstance(repeat_idx, bool) or not isinstance(repeat_idx, int):
        raise ValueError(f"{where}: repeat_idx must be an integer, got {repeat_idx!r}")
    if not 0 <= repeat_idx < len(t.anns):
        raise ValueError(
            f"{where}: repeat_idx {repeat_idx} out of range: turk_annotations.anns has {len(t.anns)} entries"
        )
    ann = t.anns[repeat_idx]
    ex = copy.deepcopy(t.to_dict())
    for k in ("root", "split", "repeat_idx", "ann", "num"):
        ex.pop(k, None)  # re-preprocessing a pp file: start clean

    goal = tokenize(normalize_text(ann.task_desc)) + [C.GOAL]
    instr = [tokenize(normalize_text(s)) for s in ann.high_descs] + [[C.STOP]]
    if root is not None:
        ex["root"] = root
    if split is not None:
        ex["split"] = split
    ex["repeat_idx"] = repeat_idx
    ex["ann"] = {"goal": goal, "instr": instr, "repeat_idx": repeat_idx}

    wv = vocab.word
    num: dict = {
        "lang_goal": [wv.index(w.strip().lower(), grow) for w in goal],
        "lang_instr": [[wv.index(w.strip().lower(), grow) for w in seg] for seg in instr],
    }
    ex["num"] = num
    if t.plan is None:
        return ex

    high_pddl = ex["plan"]["high_pddl"]
    if not t.plan.has_end:  # some trajectories lack the End subgoal (§2.4, issue #97)
        high_pddl.append(_end_subgoal(len(high_pddl)))
    action_low = _action_low_segments(ex["plan"]["low_actions"], high_pddl, vocab)
    action_high = _action_high_entries(high_pddl, vocab, grow)
    _align_segments(action_low, action_high, len(num["lang_instr"]), f"{where}: repeat_idx {repeat_idx}")
    num["action_low"] = action_low
    num["action_high"] = action_high
    num["low_to_high_idx"] = [e["high_idx"] for seg in action_low for e in seg]
    return ex


def _action_low_segments(low_actions: list[dict], high_pddl: list[dict], vocab: AlfredVocab) -> list[list[dict]]:
    """``num.action_low``: the low actions plus a final <<stop>>, one list per subgoal."""
    stop = {
        "api_action": {"action": C.STOP_API_ACTION},
        "discrete_action": {"action": C.STOP, "args": {}},
        "high_idx": high_pddl[-1]["high_idx"],
    }
    action_low: list[list[dict]] = [[] for _ in range(len(high_pddl))]
    for a in low_actions + [stop]:
        name = a["discrete_action"]["action"]
        args = a["discrete_action"]["args"]
        interact = C.has_interaction(name)
        action_low[a["high_idx"]].append(
            {
                "high_idx": a["high_idx"],
                "action": vocab.action_low.index(name, grow=False),
                "action_high_args": args,
                "centroid": _centroid(args) if interact else [-1, -1],
                "mask": args["mask"] if interact else None,
                "valid_interact": 1 if interact else 0,
            }
        )
    return action_low


def _action_high_entries(high_pddl: list[dict], vocab: AlfredVocab, grow: bool) -> list[dict]:
    """``num.action_high``: subgoal actions and arguments as action_high indices."""
    av = vocab.action_high
    return [
        {
            "high_idx": h["high_idx"],
            "action": av.index(h["discrete_action"]["action"], grow),
            "action_high_args": [av.index(str(x).lower(), grow) for x in h["discrete_action"]["args"]],
        }
        for h in high_pddl
    ]


def _align_segments(action_low: list[list[dict]], action_high: list[dict], n_instr: int, where: str) -> None:
    """Make the action segments match the instruction segments, in place.

    Alignment fix (issue #84): one action segment too many -> merge the second-to-last
    action segment into the one before it and shift the later high_idx down by one.
    """
    diff = len(action_low) - n_instr
    if diff == 1 and len(action_low) >= 3:
        k = len(action_low) - 2

        def remap(h: int) -> int:
            return h - 1 if h >= k else h

        action_low[k - 1].extend(action_low.pop(k))
        for seg in action_low:
            for e in seg:
                e["high_idx"] = remap(e["high_idx"])
        for h in action_high:
            h["high_idx"] = remap(h["high_idx"])
    elif diff != 0:
        raise ValueError(
            f"{where}: {len(action_low)} action segments (high_pddl incl. End) vs "
            f"{n_instr} instruction segments (high_descs + <<stop>>); only an excess of one "
            f"action segment can be repaired"
        )


# ---------------------------------------------------------------------------
# whole-split preprocessing
# ---------------------------------------------------------------------------
def pp_path(out_root: str | os.PathLike, split: str, entry: SplitEntry, pp_folder: str = "pp") -> Path:
    return Path(out_root) / split / entry.task / pp_folder / f"ann_{entry.repeat_idx}.json"


def preprocess_splits(
    data_root: str | os.PathLike,
    splits: str | os.PathLike | dict[str, Sequence[SplitEntry]],
    out_root: str | os.PathLike | None = None,
    vocab: AlfredVocab | None = None,
    *,
    pp_folder: str = "pp",
    progress: bool = True,
    vocab_name: str | None = "pp.vocab",
    vocab_format: str = "torch",
) -> tuple[AlfredVocab, list[Path]]:
    """Preprocess every entry of a split file; returns (vocab, written pp paths).

    ``root`` in each pp file is ``<data_root>/<task>`` as in ALFRED (no split component;
    the split is stored in ``split``).
    """
    data_root = Path(data_root)
    out_root = Path(out_root) if out_root is not None else data_root
    if not isinstance(splits, dict):
        splits = load_split_file(splits)
    vocab = vocab or AlfredVocab.new()
    total = sum(len(v) for v in splits.values())
    written: list[Path] = []
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a project dependency
        tqdm = None
    bar = tqdm(total=total, desc="preprocess", unit="ann", disable=not progress) if tqdm else None
    cache_key, cache_traj = None, None
    try:
        for split, entries in splits.items():
            for entry in entries:
                path = entry.traj_path(data_root, split)
                if cache_key != path:
                    if not path.exists():
                        raise FileNotFoundError(f"{split}/{entry.task}: trajectory file {path} not found")
                    cache_key, cache_traj = path, load_traj_data(path)
                pp = preprocess_traj(
                    cache_traj, vocab, entry.repeat_idx, split=split, root=os.path.join(str(data_root), entry.task)
                )
                written.append(write_json_atomic(pp_path(out_root, split, entry, pp_folder), pp))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    if vocab_name:
        name = vocab_name if vocab_format != "json" or vocab_name.endswith(".json") else vocab_name + ".json"
        vocab.save(out_root / name, fmt=vocab_format)
    return vocab, written


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m alfred_task.preprocess",
        description="Tokenise and numericalise ALFRED trajectories into <split>/<task>/pp/ann_<r>.json plus pp.vocab.",
    )
    ap.add_argument("--data", required=True, help="json root holding <split>/<task>/traj_data.json (json_2.1.0)")
    ap.add_argument("--splits", required=True, help="oct21-style split file")
    ap.add_argument("--out", default=None, help="output root (default: --data, i.e. next to each traj_data.json)")
    ap.add_argument("--pp-folder", default="pp", help="name of the per-trajectory folder (default: pp)")
    ap.add_argument("--vocab-format", choices=("torch", "json"), default="torch",
                    help="pp.vocab as torch.save of token lists (default, ALFRED's file) or JSON")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        vocab, written = preprocess_splits(
            args.data, args.splits, args.out, pp_folder=args.pp_folder, progress=not args.quiet,
            vocab_format=args.vocab_format,
        )
    except (TrajDataError, ValueError, FileNotFoundError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = Path(args.out or args.data)
    print(
        f"wrote {len(written)} pp files under {out}; vocab word={len(vocab.word)} "
        f"action_low={len(vocab.action_low)} action_high={len(vocab.action_high)}"
    )
    return 0


__all__ = [
    "normalize_text",
    "tokenize",
    "Vocab",
    "AlfredVocab",
    "preprocess_traj",
    "preprocess_splits",
    "pp_path",
    "main",
]

if __name__ == "__main__":
    sys.exit(main())

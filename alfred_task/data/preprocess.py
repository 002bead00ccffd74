"""ALFRED preprocessing: tokenisation, vocabularies and ``pp/ann_<r>.json`` (reference §2.5, §7).

Library use::

    vocab = AlfredVocab.new()
    pp = preprocess_traj(load_traj_data(path), vocab, repeat_idx=0, split="train", root=...)

Command line::

    python -m alfred_task.data.preprocess --data <json_root> --splits <split.json> [--out <dir>]

For every split entry ``{task, repeat_idx}`` (splits in file key order, entries in file
order) it reads ``<data>/<split>/<task>/traj_data.json`` and writes
``<out>/<split>/<task>/pp/ann_<repeat_idx>.json`` (``<out>`` defaults to ``<data>``, i.e.
next to each trajectory), then the vocabulary ``<out>/pp.vocab``.

Tokens and vocabularies come from ALFRED's own packages (`alfred_task.data.vocabulary`: revtok,
vocab): ``ann`` holds revtok tokens with their spaces, ``pp.vocab`` is ALFRED's file (a
torch-saved dict of ``vocab.Vocab``), readable by ALFRED's code and ours. ``--vocab-format json``
writes token lists instead. `AlfredVocab.load` reads either.

Vocabulary growth (as ALFRED): the word and action_high vocabularies grow over every split
processed, tests included, in processing order, so the result is deterministic for a given
split file. action_low is the fixed 15-entry list `constants.ACTION_LOW_VOCAB` (§2.5).
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
from pathlib import Path
from typing import Sequence

from common.atomic_io import write_json_atomic

from alfred_task import constants as C
from alfred_task.data.traj_data import SplitEntry, load_split_file, load_traj_data
from alfred_task.data.traj_schema import TrajData, TrajDataError
from alfred_task.data.vocabulary import AlfredVocab, Vocab, lookup, normalize_text, numericalize_token, tokenize

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

    def ids(tokens: list[str]) -> list[int]:
        return [lookup(vocab.word, numericalize_token(w), grow, "word") for w in tokens]

    num: dict = {"lang_goal": ids(goal), "lang_instr": [ids(seg) for seg in instr]}
    ex["num"] = num
    if t.plan is None:
        return ex

    high_pddl = ex["plan"]["high_pddl"]
    if not t.plan.has_end:  # some trajectories lack the End subgoal (§2.4)
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
                "action": lookup(vocab.action_low, name, True, "action_low", fixed=True),
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
            "action": lookup(av, h["discrete_action"]["action"], grow, "action_high"),
            "action_high_args": [lookup(av, str(x).lower(), grow, "action_high") for x in h["discrete_action"]["args"]],
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
        prog="python -m alfred_task.data.preprocess",
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
    from common.cli import run_main

    run_main(main)

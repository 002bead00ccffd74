"""Teacher-forced probe: does a checkpoint read the instructions on augmented sequences?

    python -m experiments.alfred_seq2seq.aug_language_probe --data out/alfred_s2s_aug \\
        --checkpoint out/learn/s10_aug_seq2seq_pm.pt --variant seq2seq_pm --sources 20

Why: `alfred_task.gen.augment` pairs one start state with several targets, so on those sequences only
the language tells the right actions apart. This computes ALFRED's teacher-forced losses (action CE,
mask loss; eval mode) on the augmented sequences of the first `--sources` augmented start states
twice: with their own language, and with the language of a sibling sequence (same start state,
another target; same annotation index). A model that uses the language scores worse with the
swapped language; one that ignores it scores the same (the no-language ablation is the control).
These are *train* sequences: the probe measures whether the language is read, not generalisation.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

import torch

from benchmarks._common import RESULTS_DIR, write_json


class _Examples:
    """The `batches` interface `il_fit.held_out_losses` reads, over a fixed list of examples."""

    def __init__(self, examples: List[Any], mask_size: int) -> None:
        self.examples, self.mask_size = examples, mask_size

    def batches(self, batch_size: int, shuffle: bool = False):
        from alfred_task.data.il_dataset import collate

        for i in range(0, len(self.examples), batch_size):
            yield collate(self.examples[i : i + batch_size], True, self.mask_size)


def swapped(examples: List[Any], data: Path, sources: int) -> Dict[str, List[Any]]:
    """Own-language and sibling-language copies of the augmented examples of `sources` start states."""
    recs = [
        json.loads(p.read_text()) for p in sorted((data / ".progress" / "augment").glob("*.json"))
    ]
    by_source: Dict[str, List[str]] = defaultdict(list)
    for r in recs:
        by_source[r["source"]].append(r["task"])
    groups = [v for v in by_source.values() if len(v) >= 2][:sources]
    index = {(ex.task, ex.repeat_idx): ex for ex in examples}
    own, other = [], []
    for tasks in groups:
        for i, task in enumerate(tasks):
            sib = tasks[(i + 1) % len(tasks)]
            for r in range(3):
                ex, sx = index.get((task, r)), index.get((sib, r))
                if ex is None or sx is None:
                    continue
                own.append(ex)
                other.append(
                    dataclasses.replace(ex, lang_goal=sx.lang_goal, lang_instr=sx.lang_instr)
                )
    return {"own": own, "swapped": other}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("out/alfred_s2s_aug"))
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument(
        "--variant", default="seq2seq_pm", choices=("seq2seq_pm", "seq2seq", "no_language")
    )
    ap.add_argument("--sources", type=int, default=20)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from experiments.alfred_seq2seq.learning import _load_init, _setup
    from experiments.alfred_seq2seq.il_fit import held_out_losses

    ns = argparse.Namespace(
        data=str(args.data),
        encoder="random_resnet18",
        batch=8,
        variant=args.variant,
        lr=1e-3,
        prev_action_input="taken",
        mask_dice_weight=0.0,
        seed=0,
        init=None,
        max_examples=None,
        held_out_examples=1,
    )
    cfg, model, train, _, loss = _setup(ns)
    _load_init(model, args.checkpoint, cfg.vocab)
    sets = swapped(train.examples, args.data, args.sources)
    out = {
        "checkpoint": str(args.checkpoint),
        "variant": args.variant,
        "sequences": len(sets["own"]),
    }
    for name, exs in sets.items():
        out[name] = held_out_losses(model, _Examples(exs, cfg.dims["pframe"]), loss, 8)
    write_json(
        RESULTS_DIR / f"alfred_aug_language_probe{'_' + args.tag if args.tag else ''}.json", out
    )
    print(
        json.dumps(
            {
                k: (v if not isinstance(v, dict) else {t: round(x, 4) for t, x in v.items()})
                for k, v in out.items()
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)

"""Speed of ALFRED's Seq2Seq(+PM) on this machine: teacher-forced training and step inference.

    python benchmarks/alfred_seq2seq_speed.py [--repeats 3] [--batch 8] [--steps 30] [--threads 2]

For each size (the official dimensions and two CPU "lite" ones) it times one training update
(teacher-forced unroll over `--steps` expert frames, ALFRED's losses, backward, Adam) and one
step of §6.5 inference (decoder step + 300×300 mask; ResNet features given), and prints the
medians, frames/s and the ratio to the official size. Parameter counts and checkpoint sizes
show which lite size fits the 20 MB checkpoint budget. Results:
``benchmarks/results/alfred_seq2seq_speed.{md,json}``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from _common import RESULTS_DIR, markdown_table, write_json, write_markdown

from alfred_task import constants as C
from alfred_task.models.losses import seq2seq_losses
from alfred_task.models.seq2seq import Seq2Seq

SIZES = {
    "official": dict(demb=100, dhid=512, dframe=2500),
    "lite-128": dict(demb=64, dhid=128, dframe=256),
    "lite-64": dict(demb=32, dhid=64, dframe=128),
}
NUM_WORDS = 2360  # ALFRED's word vocabulary size


def _batch(b: int, t: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    goal = torch.randint(3, NUM_WORDS, (b, 12), generator=g)
    instr = torch.randint(3, NUM_WORDS, (b, 80), generator=g)
    frames = torch.randn(b, t, 512, 7, 7, generator=g)
    actions = torch.randint(3, 15, (b, t), generator=g)
    inter = torch.tensor(
        [[C.has_interaction(C.ACTION_LOW_VOCAB[a]) for a in row] for row in actions.tolist()]
    )
    gold = (torch.rand(int(inter.sum()), 300, 300, generator=g) > 0.9).float()
    return goal, instr, frames, actions, inter, gold


def _time(fn, repeats: int) -> float:
    fn()  # warm-up
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def measure(name: str, dims: dict, b: int, t: int, repeats: int) -> dict:
    torch.manual_seed(0)
    model = Seq2Seq(num_words=NUM_WORDS, **dims)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    goal, instr, frames, actions, inter, gold = _batch(b, t)

    def update() -> None:
        out = model(goal, instr, frames, mask_steps=inter)
        total, _ = seq2seq_losses(
            out.action_logits,
            actions,
            mask_logits=out.mask_logits,
            gold_masks=gold,
            subgoal=out.subgoal,
            progress=out.progress,
            high_idx=torch.zeros_like(actions),
        )
        opt.zero_grad()
        total.backward()
        opt.step()

    def infer() -> None:
        with torch.no_grad():
            state = model.start(goal[:1], instr[:1])
            model.step(frames[:1, 0], state)

    model.train()
    train_s = _time(update, repeats)
    model.eval()
    step_s = _time(infer, repeats * 3)
    params = sum(p.numel() for p in model.parameters())
    return {
        "size": name,
        **dims,
        "params_M": round(params / 1e6, 2),
        "ckpt_MB": round(params * 4 / 2**20, 1),
        "train_update_s": round(train_s, 3),
        "train_frames_per_s": round(b * t / train_s, 1),
        "step_ms": round(step_s * 1000, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows = [measure(n, d, args.batch, args.steps, args.repeats) for n, d in SIZES.items()]
    base = rows[0]["train_frames_per_s"]
    for r in rows:
        r["speedup_vs_official"] = round(r["train_frames_per_s"] / base, 1)
    header = list(rows[0])
    lines = [
        f"# ALFRED Seq2Seq(+PM) speed (batch {args.batch}, {args.steps} steps, {args.threads} threads, "
        f"{args.repeats} repeats, medians)",
        "",
    ]
    lines += markdown_table(
        header, [[r[k] for k in header] for r in rows], "l" + "r" * (len(header) - 1)
    )
    text = "\n".join(lines)
    print(text)
    write_markdown(RESULTS_DIR / "alfred_seq2seq_speed.md", text)
    write_json(RESULTS_DIR / "alfred_seq2seq_speed.json", {"args": vars(args), "rows": rows})


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)

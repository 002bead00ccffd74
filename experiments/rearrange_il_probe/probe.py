"""Can the 1-phase SimpleConv policy learn from expert data at all, given CPU-scale data?

    python -m experiments.rearrange_il_probe.probe --episodes 150 --updates 400 --screen-size 64

Plays `--episodes` expert episodes of the shipped train subset (the expert acts; frames and
expert actions are kept), then trains the config's model with plain supervised BPTT (Adam, 8
episodes per update, the first `--held-out` episodes held out). Prints the entropy of the
expert's action distribution (what a policy that learned only action frequencies achieves)
next to train/held-out cross-entropy every 50 updates, and writes
benchmarks/results/rearrange_il_probe.json. Held-out CE well below the marginal entropy means
visual learning; CE at the marginal means the budget is too small for this encoder.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from common.atomic_io import write_text_atomic
from rearrange.eval import load_config

REPO = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO / "benchmarks" / "results"  # where this study has always written (git-ignored)

CONFIG = REPO / "baseline_configs" / "one_phase" / "one_phase_rgb_dagger.py"


def collect(config, n: int):
    args = config.stagewise_task_sampler_args("train", 0, 1)
    sampler = config.make_sampler_fn(**args)
    episodes = []
    try:
        for _ in tqdm(range(n), desc="expert episodes", unit="ep"):
            task = sampler.next_task()
            obs = task.get_observations()
            rgb, goal, acts = [], [], []
            while not task.is_done():
                a = int(obs["expert_action"][0])
                rgb.append(obs["rgb"].astype(np.float16))
                goal.append(obs["unshuffled_rgb"].astype(np.float16))
                acts.append(a)
                obs = task.step(a).observation
            episodes.append((np.stack(rgb), np.stack(goal), np.array(acts)))
    finally:
        sampler.close()
    return episodes


def sequence_ce(model, batch, size: int) -> torch.Tensor:
    """Mean per-step cross-entropy of the model's actor over padded episodes."""
    t_max, n = max(len(e[2]) for e in batch), len(batch)
    rgb = torch.zeros(t_max, n, size, size, 3)
    goal = torch.zeros(t_max, n, size, size, 3)
    acts = torch.zeros(t_max, n, dtype=torch.long)
    valid = torch.zeros(t_max, n)
    for j, (r, g, a) in enumerate(batch):
        k = len(a)
        rgb[:k, j] = torch.from_numpy(r.astype(np.float32))
        goal[:k, j] = torch.from_numpy(g.astype(np.float32))
        acts[:k, j] = torch.from_numpy(a)
        valid[:k, j] = 1
    x = model._encode(
        {"rgb": rgb, "unshuffled_rgb": goal}
    )  # the model's own front-end (incl. its feature norm)
    hidden = torch.zeros(model.num_recurrent_layers, n, model.hidden_size)
    masks = torch.ones(t_max, n, 1)
    masks[0] = 0
    x, _ = model.state_encoder(x, hidden, masks)
    logits = model.actor(x).logits
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), acts.reshape(-1), reduction="none"
    )
    return (ce * valid.reshape(-1)).sum() / valid.sum()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--episodes", type=int, default=150)
    ap.add_argument("--held-out", type=int, default=20)
    ap.add_argument("--updates", type=int, default=400)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--screen-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--visual-layer-norm",
        action="store_true",
        help="the model's parameter-free LayerNorm on the SimpleCNN features (keeps the GRU out of saturation)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "rearrange_il_probe.json")
    args = ap.parse_args(argv)
    if args.episodes <= args.held_out:
        ap.error("--episodes must exceed --held-out")
    torch.manual_seed(args.seed)
    config = load_config(
        str(CONFIG),
        {
            "screen_size": args.screen_size,
            "train_split": "train_subset",
            "num_train_processes": 1,
            "visual_layer_norm": args.visual_layer_norm,
        },
    )
    episodes = collect(config, args.episodes)
    acts = np.concatenate([e[2] for e in episodes])
    p = np.bincount(acts, minlength=len(config.actions())) / len(acts)
    entropy = float(-(p[p > 0] * np.log(p[p > 0])).sum())
    print(f"{len(acts)} expert steps; action-marginal entropy {entropy:.3f} nats", flush=True)
    held, train = episodes[: args.held_out], episodes[args.held_out :]
    model = config.create_model()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    curve = []
    t0 = time.perf_counter()
    for it in range(args.updates):
        batch = [train[i] for i in rng.choice(len(train), min(8, len(train)), replace=False)]
        loss = sequence_ce(model, batch, args.screen_size)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if it % 50 == 0 or it == args.updates - 1:
            with torch.no_grad():
                held_ce = float(sequence_ce(model, held, args.screen_size))
            curve.append(
                {
                    "update": it,
                    "train_ce": loss.item(),
                    "held_out_ce": held_ce,
                    "seconds": round(time.perf_counter() - t0, 1),
                }
            )
            print(curve[-1], flush=True)
    result = {
        "marginal_entropy": entropy,
        "expert_steps": int(len(acts)),
        "curve": curve,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    write_text_atomic(args.out, json.dumps(result, indent=2))
    print(
        f"marginal {entropy:.3f} nats | final train CE {curve[-1]['train_ce']:.3f} | "
        f"held-out CE {curve[-1]['held_out_ce']:.3f} -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main, stop_children_as="python -m experiments.rearrange_il_probe.probe")

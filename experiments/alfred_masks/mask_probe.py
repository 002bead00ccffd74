"""Which input lets a mask head find the interaction target on the agent's own states?

Session 21 refitted ALFRED's mask decoder (input: the decoder state) on masks of the trained
agent's own states: it memorised them, but on held-out trajectories it hit the target in 13 % of
steps (docs/logs/alfred_seq2seq_experiments.md). This probe separates the two things such a head must
do, *which* object and *where* it is, by training small mask heads from scratch on the same kind
of labels (`python -m experiments.alfred_masks.closed_loop_masks collect --keep-rgb`), with the same held-out
trajectories, the same loss (ALFRED's balanced BCE) and schedule, but different inputs:

    state         the decoder state only (what ALFRED's mask decoder reads)
    state+f7      + the frame's 512×7×7 ResNet-18 features, FiLM-modulated by the state
    state+f14     + the encoder's 256×14×14 layer3 features as a finer skip
    type+f14      the target's object type (one-hot) instead of the state: told *which* object,
                  the head only has to localise it (an oracle bound, not an agent)

Held-out hit = share of masks whose 700 most confident pixels (the shipped pickup rule) lie mostly
on the target. Usage:

    python -m experiments.alfred_masks.mask_probe --rollouts DIR --steps 1500 --seed 0 --out benchmarks/results/alfred_mask_probe
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from benchmarks._common import RESULTS_DIR, markdown_table, write_json, write_markdown

from experiments.alfred_masks.fine_mask_head import KINDS as HEADS

ENCODER = "pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt"
LABEL_SIZE = 100  # the lite model's mask resolution (pframe), as the collected labels are fitted


def load(rollouts: Path, encoder: str) -> Dict[str, Any]:
    """Rows of every rollout file with RGB frames: state, 7×7 and 14×14 features, type ids, masks."""
    import torch
    from tqdm import tqdm

    from experiments.alfred_masks.closed_loop_masks import load_rollouts
    from alfred_task.data.features import ResnetFeatures
    from experiments.alfred_masks.fine_mask_head import layer3_features
    from common.cli import UsageError

    data = load_rollouts(rollouts, LABEL_SIZE)
    if data["rgb"] is None:
        raise UsageError(
            f"--rollouts {rollouts}: no RGB frames in some file (collect with --keep-rgb)"
        )
    rgb, types = data["rgb"], data["target_type"]
    enc = ResnetFeatures(encoder)
    f14 = [
        layer3_features(enc, rgb[i : i + 32]).half()
        for i in tqdm(range(0, len(rgb), 32), desc="layer3 features", unit="batch")
    ]
    names = sorted(set(types))
    data.update(
        f14=torch.cat(f14),
        type_id=torch.tensor([names.index(t) for t in types]),
        type_names=names,
        encoder=enc.encoder,
    )
    return data


def _inputs(kind: str, data: Dict[str, Any], idx):
    import torch

    cond = (
        torch.nn.functional.one_hot(data["type_id"][idx], len(data["type_names"])).float()
        if kind.startswith("type")
        else data["cont"][idx]
    )
    return cond, data["frames"][idx].float(), data["f14"][idx].float()


def _logits(head, kind: str, data: Dict[str, Any], idx):
    import torch

    lo = head(*_inputs(kind, data, idx))
    return torch.nn.functional.interpolate(
        lo[:, None], size=(LABEL_SIZE, LABEL_SIZE), mode="bilinear", align_corners=False
    )[:, 0]


def evaluate(head, kind: str, data: Dict[str, Any], idx) -> Dict[str, float]:
    import torch

    from experiments.alfred_masks.closed_loop_masks import top_k_precision
    from alfred_task.models.losses import balanced_mask_bce

    head.eval()
    prec, loss = [], 0.0
    with torch.no_grad():
        for i in range(0, len(idx), 64):
            j = idx[i : i + 64]
            lo = _logits(head, kind, data, j)
            loss += float(balanced_mask_bce(lo, data["masks"][j])) * len(j)
            prec.append(top_k_precision(lo, data["masks"][j]))
    p = torch.cat(prec)
    return {"bce": loss / len(idx), "hit_rate": float((p > 0.5).float().mean()), "n": len(idx)}


def train(kind: str, data: Dict[str, Any], tr, ho, steps: int, batch: int, lr: float, seed: int):
    """Fit one head on the `tr` rows; (head, curve of fitted / held-out hit rates)."""
    import torch
    from tqdm import tqdm

    from alfred_task.models.losses import balanced_mask_bce

    from experiments.alfred_masks.fine_mask_head import FineMaskHead

    torch.manual_seed(seed)
    head = FineMaskHead(
        kind, len(data["type_names"]) if kind.startswith("type") else data["cont"].shape[1]
    )
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    probe = tr[torch.randperm(len(tr), generator=gen)[: len(ho)]]
    curve = []
    for step in tqdm(range(steps + 1), desc=kind, unit="update"):
        if step % max(1, steps // 5) == 0 or step == steps:
            curve.append(
                {
                    "step": step,
                    "fitted": evaluate(head, kind, data, probe),
                    "held_out": evaluate(head, kind, data, ho),
                }
            )
        if step == steps:
            break
        head.train()
        j = tr[torch.randint(len(tr), (batch,), generator=gen)]
        loss = balanced_mask_bce(_logits(head, kind, data, j), data["masks"][j])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return head, curve


def _plot(curves: Dict[str, List[Dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for kind, curve in curves.items():
        steps = [r["step"] for r in curve]
        (line,) = ax.plot(
            steps, [100 * r["held_out"]["hit_rate"] for r in curve], label=f"{kind} held-out"
        )
        ax.plot(
            steps, [100 * r["fitted"]["hit_rate"] for r in curve], ls=":", color=line.get_color()
        )
    ax.set_xlabel("update")
    ax.set_ylabel("hit rate % (dotted: fitted rows)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    import torch

    from experiments.alfred_masks.closed_loop_masks import held_out_split
    from experiments.alfred_masks.fine_mask_head import AGENT_KINDS, save_head
    from common.cli import (
        OneLineArgumentParser,
        UsageError,
        check_int,
        check_output_dir,
        report_usage_errors,
    )

    ap = OneLineArgumentParser(
        prog="experiments/alfred_masks/mask_probe.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--rollouts", type=Path, required=True, help="folder of `collect --keep-rgb` files"
    )
    ap.add_argument("--heads", default=",".join(HEADS), help=f"subset of {','.join(HEADS)}")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--held-out", type=float, default=0.2, help="share of trajectories held out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--encoder", default=ENCODER, help="the encoder the rollouts' agent used")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_mask_probe")
    ap.add_argument(
        "--save-heads",
        type=Path,
        default=None,
        help="write each agent-usable head here as <kind>.pt (the Seq2Seq agent's mask_head option)",
    )
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog):
        heads = [h for h in args.heads.split(",") if h]
        if not heads or any(h not in HEADS for h in heads):
            raise UsageError(f"--heads: {args.heads!r} is not a subset of {','.join(HEADS)}")
        check_int("--steps", args.steps, 1)
        check_int("--batch", args.batch, 2)
        if not 0.0 < args.held_out < 1.0:
            raise UsageError(f"--held-out must be in (0, 1), got {args.held_out}")
        check_output_dir("--out", args.out)
        if args.save_heads is not None:
            check_output_dir("--save-heads", args.save_heads)
        torch.set_num_threads(1)
        data = load(args.rollouts, args.encoder)
    tr, ho = held_out_split(data["trial_of"], data["episode"], args.held_out, args.seed)
    pick = [i for i, s in enumerate(data["subgoal"]) if s == "PickupObject"]
    ho_pick = ho[torch.isin(ho, torch.tensor(pick))]
    curves, rows = {}, []
    for kind in heads:
        head, curves[kind] = train(kind, data, tr, ho, args.steps, args.batch, args.lr, args.seed)
        last = curves[kind][-1]
        picks = evaluate(head, kind, data, ho_pick)
        if args.save_heads is not None and kind in AGENT_KINDS:
            save_head(
                args.save_heads / f"{kind}.pt",
                head,
                data["encoder"],
                {
                    "rollouts": str(args.rollouts),
                    "steps": args.steps,
                    "batch": args.batch,
                    "lr": args.lr,
                    "seed": args.seed,
                    "held_out": args.held_out,
                    "label_size": LABEL_SIZE,
                    "held_out_hit_rate": last["held_out"]["hit_rate"],
                },
            )
        curves[kind][-1]["held_out_pickups"] = picks
        rows.append(
            [
                kind,
                f"{100 * last['fitted']['hit_rate']:.1f}",
                f"{100 * last['held_out']['hit_rate']:.1f}",
                f"{100 * picks['hit_rate']:.1f}",
                f"{last['held_out']['bce']:.2f}",
            ]
        )
    args.out.mkdir(parents=True, exist_ok=True)
    _plot(curves, args.out / "probe.png")
    write_json(
        args.out / "probe.json",
        {
            "args": {k: str(v) for k, v in vars(args).items()},
            "rows": {"fitted": len(tr), "held_out": len(ho), "held_out_pickups": len(ho_pick)},
            "types": data["type_names"],
            "curves": curves,
        },
    )
    lines = [
        f"# Mask heads on the agent's own states ({len(tr)} fitted rows, {len(ho)} held-out rows of "
        f"{args.held_out:.0%} of the trajectories; {args.steps} updates of {args.batch}, Adam {args.lr}, seed "
        f"{args.seed})",
        "",
        *markdown_table(
            [
                "head",
                "hit % fitted",
                "hit % held-out",
                f"hit % held-out pickups (N={len(ho_pick)})",
                "held-out BCE",
            ],
            rows,
            "lrrrr",
        ),
        "",
        "![curves](probe.png)",
    ]
    write_markdown(args.out / "probe.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

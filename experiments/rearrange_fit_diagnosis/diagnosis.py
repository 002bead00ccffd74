"""Why the 1-phase SimpleConv GRU could not fit even 20 expert episodes: a bisection.

    python -m experiments.rearrange_fit_diagnosis.diagnosis --updates 300 --lr 3e-3

Takes the exact tensors `rearrange.imitation` trains on (expert rollouts of the curriculum
slice's training episodes through `im.play_all`, batched by `im.batch_tensors`) and checks,
in order, where the information is lost:

1. alignment: replaying the stored actions in a fresh sampler reproduces every stored frame,
   and the expert's label at each replayed frame is the stored one (labels belong to their frames);
2. the data: the lowest CE any memoryless classifier can reach (identical inputs with different
   labels) and the action marginal's entropy;
3. a plain CNN classifier (SimpleCNN's layers + a linear head, no RNN) on single steps;
4. the config's model with the real batch layout and loss (`im.imitation_loss`), the official
   model and then with `visual_layer_norm`, logging the encoder's feature scale, the GRU's
   saturation (share of |output| > 0.99), the spread of the logits across steps and the
   encoder's gradient norm.

Writes benchmarks/results/rearrange_fit_diagnosis.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import torch
from tqdm import tqdm

from common.atomic_io import write_text_atomic
from rearrange import curriculum as cur
from rearrange import imitation as im
from rearrange.eval import load_config

REPO = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO / "benchmarks" / "results"  # where this study has always written (git-ignored)

CONFIG = REPO / "baseline_configs" / "one_phase" / "one_phase_rgb_dagger.py"
SCENES = ("FloorPlan401", "FloorPlan402", "FloorPlan403", "FloorPlan404")
MAX_STEPS = 25  # the curriculum benchmark's --collect-steps


def replay_mismatches(
    config, episodes, trajs: List[im.Trajectory], max_steps: int
) -> Dict[str, int]:
    """Steps whose replayed frame or expert label differs from the stored one (same seeded
    sampler as `im.play_all`, so the same episode order)."""
    sampler = im.sampler_for(config, episodes, max_steps=max_steps)
    bad = Counter()
    try:
        for tr in trajs:
            task = sampler.next_task()
            obs = task.get_observations()
            for t, action in enumerate(tr.actions):
                for u in cur.MODEL_UUIDS:
                    bad[f"{u} frame"] += int(
                        not np.array_equal(obs[u].astype(np.float16), tr.obs[u][t])
                    )
                bad["expert label"] += int(int(obs[im.EXPERT_UUID][0]) != int(tr.expert[t]))
                obs = task.step(int(action)).observation
            bad["episodes not done"] += int(not task.is_done())
    finally:
        sampler.close()
    return dict(bad)


def data_bounds(trajs: List[im.Trajectory]) -> Dict[str, float]:
    """Marginal entropy and the memoryless Bayes CE (label entropy within identical inputs)."""
    groups: Dict[bytes, Counter] = defaultdict(Counter)
    labels = np.concatenate([t.expert for t in trajs])
    for t in trajs:
        for i in range(len(t)):
            groups[t.obs["rgb"][i].tobytes() + t.obs["unshuffled_rgb"][i].tobytes()][
                int(t.expert[i])
            ] += 1
    bayes = sum(-sum(v * np.log(v / sum(c.values())) for v in c.values()) for c in groups.values())
    p = np.bincount(labels) / len(labels)
    return {
        "steps": int(len(labels)),
        "distinct_inputs": len(groups),
        "marginal_entropy": float(-(p[p > 0] * np.log(p[p > 0])).sum()),
        "memoryless_bayes_ce": float(bayes / len(labels)),
    }


def plain_cnn_ce(trajs: List[im.Trajectory], model, updates: int, lr: float) -> float:
    """A fresh copy of the model's SimpleCNN + a linear head on single steps, full batch."""
    x = {
        u: torch.from_numpy(np.concatenate([t.obs[u] for t in trajs]).astype(np.float32))[None]
        for u in cur.MODEL_UUIDS
    }
    y = torch.from_numpy(np.concatenate([t.expert for t in trajs]))
    torch.manual_seed(0)
    enc = type(model.visual_encoder)(model.observation_space, *cur.MODEL_UUIDS, output_size=512)
    head = torch.nn.Linear(512, model.num_actions)
    opt = torch.optim.Adam([*enc.parameters(), *head.parameters()], lr=lr)
    loss = torch.tensor(float("nan"))
    for _ in tqdm(range(updates), desc="plain CNN", unit="update"):
        loss = torch.nn.functional.cross_entropy(head(enc(x)[0]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def real_model_curve(
    config_kwargs: Dict[str, Any], batch, updates: int, lr: float
) -> List[Dict[str, float]]:
    """Full-batch training of the config's model as `im.train_epochs` does (clip 0.5), with
    the encoder scale, GRU saturation, logit spread and encoder gradient every 25 updates."""
    torch.manual_seed(0)
    model = load_config(str(CONFIG), config_kwargs).create_model()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    seen: Dict[str, torch.Tensor] = {}
    model.state_encoder.register_forward_hook(
        lambda m, i, o: seen.update(gru_in=i[0].detach(), gru_out=o[0].detach())
    )
    model.actor.register_forward_hook(lambda m, i, o: seen.__setitem__("logits", o.logits.detach()))
    valid = batch["expert_action"][..., 1].bool()
    curve = []
    for it in tqdm(
        range(updates + 1),
        desc=f"real model {config_kwargs.get('visual_layer_norm', False)}",
        unit="update",
    ):
        loss = im.imitation_loss(model, batch)
        opt.zero_grad()
        loss.backward()
        if it % 25 == 0:
            enc_grad = torch.sqrt(
                sum(p.grad.pow(2).sum() for p in model.visual_encoder.parameters())
            )
            curve.append(
                {
                    "update": it,
                    "ce": float(loss),
                    "encoder_feature_std": float(seen["gru_in"][valid].std()),
                    "gru_saturated_share": float(
                        (seen["gru_out"][valid].abs() > 0.99).float().mean()
                    ),
                    "logit_spread_across_steps": float(seen["logits"][valid].std(0).mean()),
                    "encoder_grad_norm": float(enc_grad),
                }
            )
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
    return curve


def report(result: Dict[str, Any]) -> str:
    lines = [
        "# 1-phase SimpleConv GRU: where the fit fails",
        "",
        f"Data: {result['data']}",
        "",
        f"Replay mismatches (frame / label / not done): {result['replay_mismatches']}",
        "",
        f"Plain CNN (no RNN) final CE: {result['plain_cnn_ce']:.3f}",
        "",
    ]
    for name, curve in result["real_model"].items():
        lines += [
            f"## {name}",
            "",
            "| update | CE | encoder feature std | GRU saturated share | logit spread | encoder grad |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['update']} | {r['ce']:.3f} | {r['encoder_feature_std']:.3g} | {r['gru_saturated_share']:.2f} | "
            f"{r['logit_spread_across_steps']:.3g} | {r['encoder_grad_norm']:.3g} |"
            for r in curve
        ]
        lines.append("")
    return "\n".join(lines + [f"Command: `{result['command']}`", ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--per-scene", type=int, default=5, help="training episodes per slice scene (4 scenes)"
    )
    ap.add_argument("--updates", type=int, default=300)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--screen-size", type=int, default=64)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    spec = cur.SliceSpec(SCENES, args.per_scene, 1)
    try:
        train, _ = cur.make_slice(spec, REPO / "data" / "rearrange_curriculum")
    except cur.SliceDataError as e:
        raise SystemExit(f"rearrange_fit_diagnosis: {e}")
    kwargs = {
        "screen_size": args.screen_size,
        "train_split": "train_subset",
        "num_train_processes": 1,
    }
    config = load_config(str(CONFIG), kwargs)
    torch.manual_seed(0)
    runner = im.PolicyRunner(config.create_model(), cur.MODEL_UUIDS)
    trajs = im.play_all(
        config,
        train,
        runner,
        1.0,
        random.Random(0),
        max_steps=MAX_STEPS,
        progress=lambda it: tqdm(it, desc="expert rollouts", unit="ep"),
    )
    result: Dict[str, Any] = {
        "data": data_bounds(trajs),
        "replay_mismatches": replay_mismatches(config, train, trajs, MAX_STEPS),
        "plain_cnn_ce": plain_cnn_ce(trajs, runner.model, args.updates, args.lr),
        "real_model": {},
        "command": "python -m experiments.rearrange_fit_diagnosis.diagnosis "
        + " ".join(argv or sys.argv[1:]),
    }
    batch = im.batch_tensors(trajs)
    for norm in (False, True):
        name = f"config model, visual_layer_norm={norm}, lr {args.lr:g}"
        result["real_model"][name] = real_model_curve(
            {**kwargs, "visual_layer_norm": norm}, batch, args.updates, args.lr
        )
        print(name, result["real_model"][name][-1], flush=True)
    write_text_atomic(RESULTS_DIR / "rearrange_fit_diagnosis.json", json.dumps(result, indent=2))
    text = report(result)
    write_text_atomic(RESULTS_DIR / "rearrange_fit_diagnosis.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main, stop_children_as="python -m experiments.rearrange_fit_diagnosis.diagnosis")

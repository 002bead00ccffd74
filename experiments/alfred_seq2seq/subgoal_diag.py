"""Why does a learned ALFRED agent fail a subgoal? Step-by-step log of ALFRED's subgoal evaluation.

    python -m experiments.alfred_seq2seq.subgoal_diag --checkpoint out/learn/seq2seq_pm.pt --data out/alfred_s2s_big \\
        --split valid_seen --subgoal PickupObject --episodes 6 --max-steps 5 [--agent-kwargs JSON] [--out DIR] [--features]

Runs the same protocol as ``python -m alfred_task.evaluation --subgoals`` (reset, teacher-force the agent
through the expert prefix, then let it act), one subgoal of the first ``--episodes`` annotations
that have one, and logs per agent step: the top-3 action probabilities, the executed action and
whether it succeeded (with the simulator's message), and for interaction subgoals the predicted
mask (pixels with sigmoid > 0.5, the object ALFRED's IoU rule resolves it to, the expert's target)
with a PNG of the mask over the frame. ``--features`` adds how much the dataset's ResNet features
vary (per-dimension spread, nearest-neighbour retrieval of the same demonstration). Writes
``diag.md`` and ``diag.json`` (and the PNGs) under ``--out``.

``--task`` diagnoses whole task episodes instead (ALFRED's task evaluation: the agent acts from the
start, ``<<stop>>``, 10 failures or ``--max-steps`` end it): per step the subgoal the tracker is on,
whether that subgoal's object is visible and how far, the action, its outcome and the object its
mask resolves to; and, over the episodes whose PickupObject subgoal became current, what the
first pickup attempt hit (the target instance, another instance of its type, another object,
nothing) -- the link where the agent's own navigation hands over to an interaction.

    python -m experiments.alfred_seq2seq.subgoal_diag --task --checkpoint pretrained_model_ckpts/alfred_seq2seq_pm_gpu/alfred_seq2seq_pm_lite.pt \\
        --data out/alfred_s2s_thor --split valid_seen --episodes 40 --max-steps 60 --out benchmarks/results/alfred_task_diag
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from benchmarks._common import RESULTS_DIR, write_json, write_markdown

MASK_RGB = np.array([255, 0, 0])


def _agent_view(agent: Any, env) -> Dict[str, Any]:
    """What the agent's next step will see: action probabilities and its 300x300 mask."""
    import torch

    frame = np.asarray(env.last_event.frame)
    with torch.no_grad():
        lo, cont, _h, _c, feat = agent._decode(frame)  # noqa: SLF001 - the agent's own decoder step, no state change
        probs = torch.softmax(lo[0, agent.allowed], 0)
        logits = agent.model.dec.decode_mask(cont, feat)
        logits = torch.nn.functional.interpolate(
            logits.unsqueeze(1), size=frame.shape[:2], mode="bilinear", align_corners=False
        )[:, 0]
    names = [agent.vocab.action_low.index2word(int(i)) for i in agent.allowed]
    top = sorted(zip(probs.tolist(), names), reverse=True)[:3]
    prob = torch.sigmoid(logits[0]).numpy()
    return {
        "frame": frame,
        "mask": prob > 0.5,
        "prob": prob,
        "logit": logits[0].numpy(),
        "top3": [(n, round(p, 3)) for p, n in top],
    }


def _save_overlay(frame: np.ndarray, mask: np.ndarray, path: Path) -> str:
    from PIL import Image

    img = frame.astype(float).copy()
    img[mask] = img[mask] * 0.4 + MASK_RGB * 0.6
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img.astype(np.uint8)).save(path)
    return path.name


def _prefix(env, agent, traj: dict, repeat_idx: int, eval_idx: int):
    """Reset and teacher-force the expert prefix (ALFRED's subgoal evaluation); the tracker and
    the expert's steps of the evaluated subgoal."""
    from alfred_task.evaluation.agents import expert_steps
    from alfred_task.evaluation.episodes import prefix_end, replay_steps
    from alfred_task.evaluation.subgoals import SubgoalTracker

    steps = expert_steps(traj)
    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, repeat_idx, env)
    replay_steps(
        env, agent, tracker, steps, 0, prefix_end(steps, eval_idx)
    )  # the evaluation's own prefix pass
    return tracker, [(a, m) for a, m, h in steps if h == eval_idx]


def diagnose_episode(
    env, agent, traj: dict, repeat_idx: int, eval_idx: int, max_steps: int, png_dir: Path, tag: str
) -> Dict[str, Any]:
    """One subgoal evaluation, step by step (see the module doc)."""
    from alfred_task import constants as C

    tracker, gold = _prefix(env, agent, traj, repeat_idx, eval_idx)
    target = env.mask_to_object(gold[0][1]) if gold and gold[0][1] is not None else None
    ann = traj["turk_annotations"]["anns"][repeat_idx]
    rec = {
        "task": traj["task_id"],
        "repeat_idx": repeat_idx,
        "subgoal_idx": eval_idx,
        "instruction": (ann["high_descs"] + [""])[min(eval_idx, len(ann["high_descs"]))],
        "expert": [a for a, _ in gold],
        "target": target,
        "steps": [],
        "success": False,
        "target_mask_pixels": int(np.asarray(gold[0][1]).sum())
        if gold and gold[0][1] is not None
        else None,
    }
    for t in range(max_steps):
        if tracker.get_subgoal_idx() == eval_idx:
            rec["success"] = True
            break
        view = _agent_view(agent, env)
        action, mask = agent.act(env)
        step: Dict[str, Any] = {"t": t, "top3": view["top3"], "action": action}
        if C.has_interaction(action) or gold and C.has_interaction(gold[0][0]):
            # the mask the agent sends (its mask rule, retries) when it interacts, else ALFRED's > 0.5
            m = mask if mask is not None else view["mask"]
            step.update(
                mask_pixels=int(m.sum()),
                mask_object=env.mask_to_object(m) if m.any() else None,
                png=_save_overlay(view["frame"], m, png_dir / f"{tag}_t{t}.png"),
            )
        if action in (C.STOP, C.SEG):
            rec["steps"].append(step)
            break
        ok, _ev, _tgt, err, _api = env.va_interact(action, mask)
        tracker.update(action, ok)
        step.update(ok=bool(ok), error=err[:80])
        rec["steps"].append(step)
    rec["success"] = rec["success"] or tracker.get_subgoal_idx() == eval_idx
    return rec


def diagnose_task_episode(
    env, agent, traj: dict, repeat_idx: int, max_steps: int, max_fails: Optional[int] = None
) -> Dict[str, Any]:
    """One task episode, step by step (see the module doc, ``--task``); `max_fails` defaults to
    ALFRED's."""
    from alfred_task import constants as C
    from alfred_task.evaluation.subgoals import SubgoalTracker

    max_fails = C.MAX_FAILS if max_fails is None else max_fails

    env.init_episode(traj)
    tracker = SubgoalTracker(traj, env)
    agent.reset(traj, repeat_idx, env)
    rec: Dict[str, Any] = {
        "task": traj["task_id"],
        "type": traj["task_type"],
        "repeat_idx": repeat_idx,
        "subgoals": [h["discrete_action"]["action"] for h in traj["plan"]["high_pddl"]],
        "steps": [],
        "end": "max_steps",
    }
    fails = 0
    for t in range(max_steps):
        view = _agent_view(agent, env)
        current = tracker.current() or {}
        target = tracker.rid(current.get("objectId"))
        obj = {o["objectId"]: o for o in env.last_event.metadata["objects"]}.get(target)
        action, mask = agent.act(env)
        step: Dict[str, Any] = {
            "t": t,
            "subgoal_idx": tracker.subgoal_idx,
            "subgoal": current.get("action"),
            "target": target,
            "target_visible": bool(obj and obj.get("visible")),
            "target_distance": round(float(obj["distance"]), 2) if obj else None,
            "top3": view["top3"],
            "action": action,
        }
        if C.has_interaction(action):
            step["mask_object"] = (
                env.mask_to_object(mask) if mask is not None and mask.any() else None
            )
        rec["steps"].append(step)
        if action == C.STOP:
            rec["end"] = "stop"
            break
        ok, _ev, _tgt, err, _api = env.va_interact(action, mask)
        step.update(ok=bool(ok), error=(err or "")[:80])
        fails += not ok
        if fails >= max_fails:
            rec["end"] = "max_fails"
            break
        tracker.update(action, ok)
    rec["subgoals_completed"] = tracker.get_subgoal_idx() + 1
    return rec


def first_pickup_outcome(rec: Dict[str, Any]) -> Optional[str]:
    """What the first pickup attempt hit while the PickupObject subgoal was current (None when that
    subgoal never became current)."""
    steps = [s for s in rec["steps"] if s["subgoal"] == "PickupObject"]
    if not steps:
        return None
    picks = [s for s in steps if s["action"] == "PickupObject"]
    if not picks:
        return "no pickup attempt"
    p = picks[0]
    hit, target = p.get("mask_object"), p["target"] or ""
    if hit is None:
        kind = "nothing"
    elif hit == target:
        kind = "the target instance"
    elif hit.split("|")[0] == target.split("|")[0]:
        kind = "another instance of the target type"
    else:
        kind = "another object"
    return f"{kind}, {'succeeded' if p.get('ok') else 'failed'}, target {'visible' if p['target_visible'] else 'not visible'}"


def _task_markdown(recs: List[Dict[str, Any]], args: argparse.Namespace) -> str:
    from collections import Counter

    lines = [
        f"# Task diagnosis on {args.split} ({args.checkpoint}, {len(recs)} episodes, {args.max_steps}-step cap)",
        "",
        "Subgoals completed: "
        + ", ".join(
            f"{k}: {v}" for k, v in sorted(Counter(r["subgoals_completed"] for r in recs).items())
        )
        + "  ",
        "Endings: "
        + ", ".join(f"{k} {v}" for k, v in Counter(r["end"] for r in recs).most_common()),
        "",
        "First pickup attempt while the PickupObject subgoal was current:",
        "",
    ]
    outcomes = Counter(o for o in map(first_pickup_outcome, recs) if o is not None)
    lines += [f"- {v} x {k}" for k, v in outcomes.most_common()] or ["- (no episode reached it)"]
    lines.append("")
    for r in recs:
        lines += [
            f"## {r['task']} r{r['repeat_idx']}: {r['subgoals_completed']}/{len(r['subgoals'])} subgoals, "
            f"ended by {r['end']}",
            "",
        ]
        for s in r["steps"]:
            mask = f" -> {s['mask_object']}" if "mask_object" in s else ""
            lines.append(
                f"- t{s['t']} [{s['subgoal_idx']} {s['subgoal']} visible={s['target_visible']} "
                f"d={s['target_distance']}] {s['action']}{mask} ok={s.get('ok')} top3={s['top3']} "
                f"{s.get('error', '')}"
            )
        lines.append("")
    return "\n".join(lines)


def feature_spread(data: Path, split: str, demos: int = 20) -> Dict[str, float]:
    """Do the dataset's ResNet features carry information? Spread across frames and how often a
    frame's nearest neighbour (frames within 2 steps excluded) comes from the same demonstration."""
    import torch

    files = sorted(data.glob(f"{split}/*/*/feat_conv.pt"))[:demos]
    feats = [torch.load(f, weights_only=True).float().reshape(-1, 512 * 49) for f in files]
    x = torch.cat(feats)
    ids = torch.cat([torch.full((len(f),), i) for i, f in enumerate(feats)])
    unit = x / x.norm(dim=1, keepdim=True).clamp(min=1e-9)
    cos = unit @ unit.t()
    idx = torch.arange(len(x))
    cos[(idx[:, None] - idx[None, :]).abs() <= 2] = -9.0
    same = ids[cos.argmax(1)] == ids
    chance = float(((ids[:, None] == ids[None, :]).float().sum(1) / len(x)).mean())
    return {
        "frames": len(x),
        "demos": len(files),
        "mean_abs": float(x.abs().mean()),
        "median_dim_std": float(x.std(0).median()),
        "nn_same_demo": float(same.float().mean()),
        "nn_same_demo_chance": chance,
    }


def _markdown(
    recs: List[Dict[str, Any]], spread: Optional[Dict[str, float]], args: argparse.Namespace
) -> str:
    lines = [f"# Subgoal diagnosis: {args.subgoal} on {args.split} ({args.checkpoint})", ""]
    if spread:
        lines += ["Features: " + ", ".join(f"{k} {v:.3g}" for k, v in spread.items()), ""]
    for r in recs:
        lines += [
            f"## {r['task']} r{r['repeat_idx']} subgoal {r['subgoal_idx']}: "
            f"{'SUCCESS' if r['success'] else 'failed'}",
            "",
            f"instruction: {r['instruction']}  ",
            f"expert: {' '.join(r['expert'])}; target {r['target']} (expert mask "
            f"{r['target_mask_pixels']} px)",
            "",
        ]
        for s in r["steps"]:
            mask = (
                f"; mask {s['mask_pixels']} px -> {s['mask_object']}" if "mask_pixels" in s else ""
            )
            lines.append(
                f"- t{s['t']} {s['action']} ok={s.get('ok')} top3={s['top3']}{mask} {s.get('error', '')}"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    from common.cli import (
        OneLineArgumentParser,
        check_input_file,
        check_int,
        parse_json_object,
        report_usage_errors,
    )

    ap = OneLineArgumentParser(
        prog="python -m experiments.alfred_seq2seq.subgoal_diag",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="valid_seen")
    ap.add_argument("--subgoal", default="PickupObject")
    ap.add_argument("--episodes", type=int, default=6)
    ap.add_argument("--max-steps", type=int, default=5)
    ap.add_argument(
        "--agent-kwargs",
        default=None,
        metavar="JSON",
        help="the agent's inference options, e.g. '{\"interaction_retry\": 2}' (default: the checkpoint's)",
    )
    ap.add_argument(
        "--features", action="store_true", help="also measure the dataset features' spread"
    )
    ap.add_argument(
        "--task",
        action="store_true",
        help="diagnose whole task episodes (the agent acts from the start) instead of one subgoal",
    )
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_subgoal_diag")
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog, ValueError):
        check_input_file("--checkpoint", args.checkpoint)
        check_int("--episodes", args.episodes, 1)
        check_int("--max-steps", args.max_steps, 1)
        args.agent_kwargs = parse_json_object("--agent-kwargs", args.agent_kwargs)
        if args.task and args.features:
            raise ValueError("--features applies to subgoal diagnosis, not --task")
        recs, spread = run(args)
    write_json(
        args.out / "diag.json",
        {"args": {k: str(v) for k, v in vars(args).items()}, "features": spread, "episodes": recs},
    )
    text = _task_markdown(recs, args) if args.task else _markdown(recs, spread, args)
    write_markdown(args.out / "diag.md", text)
    print(
        text.split("\n## ")[0] if args.task else text
    )  # --task: the summary; the step logs are in diag.md
    return 0


def run(args: argparse.Namespace):
    """The diagnosed episodes (and the feature spread with ``--features``)."""
    import torch
    from tqdm import tqdm

    from alfred_task.evaluation.agents import CheckpointAgent
    from alfred_task.evaluation.episodes import subgoal_indices
    from alfred_task.evaluation.inputs import load_traj, resolve_entries
    from alfred_task.evaluation.runner import make_env

    torch.set_num_threads(1)
    agent = CheckpointAgent(args.checkpoint, **(args.agent_kwargs or {})).inner
    entries = resolve_entries(args.data, args.data / "splits.json", args.split)
    env, recs = make_env("thor_lite", 300), []
    if args.task:
        for e in tqdm(entries[: args.episodes], desc="task episodes", unit="ep"):
            recs.append(
                diagnose_task_episode(env, agent, load_traj(e.path), e.repeat_idx, args.max_steps)
            )
        return recs, None
    for e in entries:
        if len(recs) >= args.episodes:
            break
        traj = load_traj(e.path)
        idxs = subgoal_indices(traj, [args.subgoal])
        if idxs:
            recs.append(
                diagnose_episode(
                    env,
                    agent,
                    traj,
                    e.repeat_idx,
                    idxs[0],
                    args.max_steps,
                    args.out,
                    f"{args.subgoal}_{len(recs)}",
                )
            )
    spread = feature_spread(args.data, "train") if args.features else None
    return recs, spread


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)

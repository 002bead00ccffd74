"""Issue #10 must-show 3: Seq2Seq+PM vs Seq2Seq vs no-language vs random on thor_lite valid splits.

    python -m experiments.alfred_seq2seq.compare --data out/alfred_s2s_small --encoder random_resnet18 \\
        --training-frames 20000 --max-steps 1000 --workers 2 --out benchmarks/results/alfred_seq2seq_compare

One seeded command, resumable stage by stage (a finished training run or evaluation file is reused):

1. trains the three lite variants with ``allenact`` (the configs of ``baseline_configs/alfred/``,
   same seed, data and frame budget): ``seq2seq_pm`` (alfred_seq2seq_pm_il.py), ``seq2seq``
   (alfred_seq2seq_il.py) and ``no_language`` (alfred_seq2seq_pm_il.py with ``"ablation":
   "no_language"``);
2. evaluates them and a seeded random agent with ALFRED's evaluator (`alfred_task.evaluation.cli`): task
   evaluation (SR, GC, PLW-SR, PLW-GC) and subgoal evaluation (teacher-forced prefix) on every
   requested split, ALFRED's max_fails 10; ALFRED's max_steps is 1000, ``--max-steps`` /
   ``--subgoal-max-steps`` lower it where CPU time is short (the report names the caps);
3. writes ``<out>/compare.md`` and ``compare.json`` (every number with a 95 % CI: Wilson for
   success rates, seeded percentile bootstrap over episodes for the ratio metrics GC/PLW), a PNG of
   the three training curves from AllenAct's TensorBoard logs, and ALFRED's result files per agent.
   Each must-show claim (Seq2Seq+PM vs random / no-language) says whether it holds beyond the
   separate intervals and gives the paired difference on the same evaluations with a
   trajectory-clustered bootstrap interval (`paired_difference`).

``--ship DIR`` copies the trained Seq2Seq+PM checkpoint without optimizer state into DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from alfred_task.training.ship_checkpoint import ship
from benchmarks._common import REPO, RESULTS_DIR, write_json, write_markdown

#: variant -> (config file, ablation)
VARIANTS = {
    "seq2seq_pm": ("alfred_seq2seq_pm_il.py", "none"),
    "seq2seq": ("alfred_seq2seq_il.py", "none"),
    "no_language": ("alfred_seq2seq_pm_il.py", "no_language"),
}
TASK_METRICS = ("sr", "gc", "plw_sr", "plw_gc")
CURVE_TAGS = ("train-il-losses/seq2seq/action_low", "train-il-losses/seq2seq/action_low_mask")


# --- training ------------------------------------------------------------------------------------
def latest_checkpoint(run_dir: Path) -> Optional[Path]:
    """The last AllenAct checkpoint of a run folder (None before it finished one)."""
    found = sorted(run_dir.glob("checkpoints/*/*/*.pt"), key=lambda p: (p.stat().st_mtime, p.name))
    return found[-1] if found else None


def train_variant(name: str, args: argparse.Namespace) -> Path:
    """Train one variant with allenact (skipped when its run folder already holds a checkpoint)."""
    run_dir = args.out / "train" / name
    done = latest_checkpoint(run_dir)
    if done is not None:
        print(f"{name}: reusing {done}", flush=True)
        return done
    cfg, ablation = VARIANTS[name]
    kwargs = {
        "data_root": str(args.data),
        "visual_encoder": args.encoder,
        "model_size": "lite",
        "ablation": ablation,
        "training_frames": args.training_frames,
        "batch_size": args.batch_size,
    }
    cmd = [
        str(Path(sys.executable).with_name("allenact")),
        "-b",
        ".",
        f"baseline_configs/alfred/{cfg}",
        "-o",
        str(run_dir),
        "-s",
        str(args.seed),
        "--config_kwargs",
        json.dumps(kwargs),
    ]
    print("+", " ".join(cmd), flush=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "train.log", "w") as log:
        rc = subprocess.run(
            cmd,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        ).returncode
    ckpt = latest_checkpoint(run_dir)
    if rc != 0 or ckpt is None:
        raise SystemExit(
            f"{name}: allenact training failed (exit {rc}); see {run_dir / 'train.log'}"
        )
    return ckpt


# --- evaluation ----------------------------------------------------------------------------------
def _cached(path: Path, compute) -> list:
    """Records from `path`, or computed and written there (atomically) first."""
    from common.atomic_io import write_json_atomic

    if path.is_file():
        return json.loads(path.read_text())
    if compute is None:
        return []
    recs = compute()
    write_json_atomic(path, recs, sort_keys=False)
    return recs


def evaluate(
    agent: str, factory_kwargs: Dict[str, Any], split: str, args: argparse.Namespace
) -> Dict[str, list]:
    """Task and subgoal records of one agent on one split, each cached under <out>/eval/<agent>/
    (a rerun resumes), plus ALFRED's result files next to them. Agents left out of ``--evaluate``
    (and every agent with ``--report-only``) only read their cache."""
    from alfred_task.evaluation import cli as ev
    from alfred_task.evaluation.agents import agent_factory
    from common.atomic_io import write_json_atomic
    import torch

    torch.set_num_threads(1)  # as the evaluation CLI (pool workers always run one)
    folder = args.out / "eval" / agent
    factory = agent_factory("random" if agent == "random" else "checkpoint", **factory_kwargs)
    entries = ev.resolve_entries(args.data, args.data / "splits.json", [split], args.limit)
    common = dict(max_fails=args.max_fails, num_workers=args.workers, progress=True)
    only = args.report_only or (
        args.evaluate is not None and agent not in args.evaluate
    )  # cache only
    tasks = _cached(
        folder / f"{split}_task.json",
        None
        if only
        else lambda: ev.evaluate_tasks(
            factory, entries, args.data, max_steps=args.max_steps, **common
        ),
    )
    if tasks:
        write_json_atomic(
            folder / f"task_results_{split}.json", ev.task_results(tasks), sort_keys=False
        )
    if args.subgoals == "none":
        return {"task": tasks, "subgoal": []}
    sub_entries = entries[: args.subgoal_limit] if args.subgoal_limit else entries
    subgoals = _cached(
        folder / f"{split}_subgoal.json",
        None
        if only
        else lambda: ev.evaluate_subgoals(
            factory,
            sub_entries,
            args.data,
            args.subgoals,
            max_steps=args.subgoal_max_steps,
            **common,
        ),
    )
    if subgoals:
        write_json_atomic(
            folder / f"subgoal_results_{split}.json",
            ev.subgoal_results(subgoals, split),
            sort_keys=False,
        )
    return {"task": tasks, "subgoal": subgoals}


def _record_key(r: dict) -> tuple:
    """Which evaluation a record is: (trajectory, annotation, subgoal index or None for a task)."""
    return (r["task"], r["repeat_idx"], r.get("subgoal_idx"))


def common_episodes(recs: Dict[str, Dict[str, list]]) -> Dict[str, Dict[str, list]]:
    """Every agent's records restricted to the episodes all agents were evaluated on (a resumed
    or --limit'ed run may cover fewer), so the table compares the same episodes."""
    out: Dict[str, Dict[str, list]] = {a: {} for a in recs}
    for kind in ("task", "subgoal"):
        sets = [
            {_record_key(r) for r in by_kind[kind]} for by_kind in recs.values() if by_kind[kind]
        ]
        shared = set.intersection(*sets) if sets else set()
        for a, by_kind in recs.items():
            out[a][kind] = [r for r in by_kind[kind] if _record_key(r) in shared]
    return out


# --- statistics ----------------------------------------------------------------------------------
def wilson(k: int, n: int) -> Tuple[float, float]:
    """95 % Wilson interval of a success rate k/n ((0, 1) when n = 0)."""
    from common.stats import wilson_interval

    return wilson_interval(k, n)


def ratio_ci(
    num: Sequence[float], den: Sequence[float], seed: int, n_boot: int = 2000
) -> Tuple[float, float]:
    """95 % percentile-bootstrap interval of sum(num)/sum(den), resampling episodes (seeded)."""
    from common.stats import bootstrap_ratio_ci

    return bootstrap_ratio_ci(num, den, seed, n_boot)


def by_trajectory(
    recs: Sequence[dict], num: Sequence[float], den: Sequence[float]
) -> Tuple[list, list]:
    """Per-trajectory sums of `num` and `den`: a trajectory's three annotations (and its subgoal
    evaluations) share one floor plan, start and object layout, and the agents mostly behave
    alike on them, so they are one sample rather than several independent ones."""
    sums: Dict[str, List[float]] = {}
    for r, n, d in zip(recs, num, den):
        acc = sums.setdefault(r.get("task") or r["trial"], [0.0, 0.0])
        acc[0] += float(n)
        acc[1] += float(d)
    return [v[0] for v in sums.values()], [v[1] for v in sums.values()]


def trajectory_ci(
    recs: Sequence[dict], num: Sequence[float], den: Sequence[float], seed: int
) -> Tuple[float, float]:
    """95 % cluster bootstrap of sum(num)/sum(den): whole trajectories are resampled."""
    return ratio_ci(*by_trajectory(recs, num, den), seed)


def paired_difference(
    recs_a: Sequence[dict],
    recs_b: Sequence[dict],
    num: Callable[[dict], float],
    den: Callable[[dict], float],
    seed: int,
    n_boot: int = 2000,
) -> Tuple[float, Tuple[float, float]]:
    """a - b of sum(num)/sum(den) on the evaluations both agents have, with a 95 % percentile
    bootstrap that resamples whole trajectories and keeps each agent's records of a trajectory
    together: the test for "a beats b on the same episodes", tighter than comparing the two
    separate intervals, since scene-level difficulty cancels in the difference."""
    a = {_record_key(r): r for r in recs_a}
    b = {_record_key(r): r for r in recs_b}
    keys = sorted(a.keys() & b.keys())
    if not keys:
        return 0.0, (0.0, 0.0)
    trajs = sorted({k[0] for k in keys})
    pos = {t: i for i, t in enumerate(trajs)}
    sums = np.zeros((4, len(trajs)))  # num a, den a, num b, den b per trajectory
    for k in keys:
        i = pos[k[0]]
        sums[:, i] += (num(a[k]), den(a[k]), num(b[k]), den(b[k]))
    from common.stats import paired_bootstrap_difference

    return paired_bootstrap_difference(*sums, seed=seed, n_boot=n_boot)


def task_summary(recs: Sequence[dict], seed: int) -> Dict[str, Any]:
    """SR / GC / PLW-SR / PLW-GC (ALFRED's aggregate formulas) with 95 % CIs; GC also with the
    trajectory-clustered interval (`ci_traj`)."""
    from alfred_task.evaluation.metrics import aggregate

    agg = aggregate(recs)
    w = [r["path_len_weight"] for r in recs]
    cis = {
        "sr": wilson(agg["success"]["num_successes"], len(recs)),
        "gc": ratio_ci(
            [r["completed_goal_conditions"] for r in recs],
            [r["total_goal_conditions"] for r in recs],
            seed,
        ),
        "plw_sr": ratio_ci([r["path_len_weighted_success_spl"] for r in recs], w, seed),
        "plw_gc": ratio_ci([r["path_len_weighted_goal_condition_spl"] for r in recs], w, seed),
    }
    out = {"n": len(recs), **{m: {"value": agg[m], "ci": cis[m]} for m in TASK_METRICS}}
    out["gc"]["ci_traj"] = trajectory_ci(
        recs,
        [r["completed_goal_conditions"] for r in recs],
        [r["total_goal_conditions"] for r in recs],
        seed,
    )
    return out


def subgoal_summary(recs: Sequence[dict], seed: int = 0) -> Dict[str, Any]:
    """Subgoal SR per subgoal type (and all) with Wilson 95 % CIs (evaluations independent) and
    `ci_traj`, the cluster bootstrap over trajectories."""
    from alfred_task.evaluation.metrics import aggregate_subgoals

    out = {}
    for t, m in aggregate_subgoals(recs).items():
        rs = [r for r in recs if t == "all" or r["subgoal_type"] == t]
        out[t] = {
            "n": m["evals"],
            "value": m["sr"],
            "ci": wilson(m["successes"], m["evals"]),
            "sr_plw": m["sr_plw"],
            "ci_traj": trajectory_ci(
                rs, [1.0 if r["success"] else 0.0 for r in rs], [1.0] * len(rs), seed
            ),
        }
    return out


def beats(a: Dict[str, Any], b: Dict[str, Any], ci: str = "ci") -> bool:
    """a beats b beyond the 95 % CIs (`ci`: "ci" or "ci_traj"): a's lower bound above b's upper."""
    return a[ci][0] > b[ci][1]


# --- report --------------------------------------------------------------------------------------
def _pct(m: Dict[str, Any]) -> str:
    """value [95 % CI], then {trajectory-clustered 95 % CI} where the summary has one."""
    out = f"{100 * m['value']:.1f} [{100 * m['ci'][0]:.1f}, {100 * m['ci'][1]:.1f}]"
    if "ci_traj" in m:
        out += f" {{{100 * m['ci_traj'][0]:.1f}, {100 * m['ci_traj'][1]:.1f}}}"
    return out


def report(
    summary: Dict[str, Dict[str, Any]], split: str, subgoal_types: Sequence[str]
) -> List[str]:
    """Markdown lines: one task table and one subgoal table of every agent on `split`."""
    from benchmarks._common import markdown_table

    agents = list(summary)
    lines = [
        f"### {split}",
        "",
        f"Task evaluation ({summary[agents[0]]['task']['n']} episodes per agent; "
        "% with 95 % CI [episodes independent] and, for GC and subgoal SR, {clustered by trajectory: "
        "whole trajectories resampled, as their annotations share a scene})",
        "",
    ]
    rows = [
        [a, summary[a]["task"]["n"], *(_pct(summary[a]["task"][m]) for m in TASK_METRICS)]
        for a in agents
    ]
    lines += markdown_table(["agent", "N", "SR", "GC", "PLW-SR", "PLW-GC"], rows, "lrrrrr")
    if not subgoal_types:
        return lines + [""]
    lines += [
        "",
        "Subgoal SR per subgoal type (teacher-forced expert prefix; % with 95 % Wilson CI [evaluations "
        "independent] {trajectory-clustered bootstrap}, N evals)",
        "",
    ]
    rows = []
    for a in agents:
        sg = summary[a]["subgoal"]
        rows.append(
            [a, *(f"{_pct(sg[t])} (N={sg[t]['n']})" if t in sg else "–" for t in subgoal_types)]
        )
    lines += markdown_table(["agent", *subgoal_types], rows, "l" + "r" * len(subgoal_types))
    return lines + [""]


def claims(
    summary: Dict[str, Dict[str, Any]],
    recs: Optional[Dict[str, Dict[str, list]]] = None,
    seed: int = 0,
    pairs: Sequence[Tuple[str, str]] = (),
) -> List[Tuple[str, bool, bool, Optional[Tuple[float, Tuple[float, float]]]]]:
    """The issue's must-show-3 comparisons (Seq2Seq+PM vs random / no-language), then ``a > b``
    for each of `pairs` (e.g. a retrained agent against the shipped one): (claim, beyond the
    per-evaluation CIs, beyond the trajectory-clustered CIs, the paired difference and its
    trajectory-clustered 95 % CI when `recs` is given). Pairs with an agent absent are skipped."""
    wanted = [("seq2seq_pm", other) for other in ("random", "no_language")] + list(pairs)
    out = []
    for a, b in wanted:
        if a in summary and b in summary:
            out += _comparison(summary, recs, seed, a, b)
    return out


def _comparison(
    summary: Dict[str, Dict[str, Any]],
    recs: Optional[Dict[str, Dict[str, list]]],
    seed: int,
    name_a: str,
    name_b: str,
) -> list:
    """`claims` rows of ``name_a > name_b``: GotoLocation and PickupObject subgoal SR, task GC."""
    success = (lambda r: 1.0 if r["success"] else 0.0, lambda r: 1.0)
    conditions = (
        lambda r: float(r["completed_goal_conditions"]),
        lambda r: float(r["total_goal_conditions"]),
    )
    pa, pb = summary[name_a], summary[name_b]
    out = []
    for sg in ("GotoLocation", "PickupObject"):
        if sg in pa["subgoal"] and sg in pb["subgoal"]:
            a, b = pa["subgoal"][sg], pb["subgoal"][sg]
            paired = (
                None
                if recs is None
                else paired_difference(
                    [r for r in recs[name_a]["subgoal"] if r["subgoal_type"] == sg],
                    [r for r in recs[name_b]["subgoal"] if r["subgoal_type"] == sg],
                    *success,
                    seed,
                )
            )
            out.append(
                (
                    f"{name_a} > {name_b}: {sg} subgoal SR",
                    beats(a, b),
                    beats(a, b, "ci_traj"),
                    paired,
                )
            )
    a, b = pa["task"]["gc"], pb["task"]["gc"]
    paired = (
        None
        if recs is None
        else paired_difference(recs[name_a]["task"], recs[name_b]["task"], *conditions, seed)
    )
    out.append((f"{name_a} > {name_b}: task GC", beats(a, b), beats(a, b, "ci_traj"), paired))
    return out


def claim_line(
    claim: str, ok: bool, ok_traj: bool, paired: Optional[Tuple[float, Tuple[float, float]]]
) -> str:
    """One markdown bullet of `claims`."""
    line = (
        f"- {claim}: {'yes' if ok else 'NO'} beyond the 95 % CIs; {'yes' if ok_traj else 'NO'} beyond the "
        f"trajectory-clustered 95 % CIs"
    )
    if paired is not None:
        d, (lo, hi) = paired
        verdict = "above 0" if lo > 0 else ("below 0" if hi < 0 else "includes 0")
        line += (
            f"; paired difference {100 * d:+.1f} points, trajectory-clustered 95 % CI "
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}] ({verdict})"
        )
    return line


def plot_curves(runs: Dict[str, Path], png: Path) -> Dict[str, Dict[str, list]]:
    """Action CE and mask loss over training steps of every variant (AllenAct's TensorBoard logs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curves: Dict[str, Dict[str, list]] = {}
    fig, axes = plt.subplots(1, len(CURVE_TAGS), figsize=(11, 4))
    for name, run_dir in runs.items():
        events = sorted(run_dir.glob("tb/*/*/events.out.tfevents.*"))
        if not events:
            continue
        acc = EventAccumulator(str(events[-1].parent))
        acc.Reload()
        curves[name] = {}
        for ax, tag in zip(axes, CURVE_TAGS):
            pts = (
                [(e.step, e.value) for e in acc.Scalars(tag)]
                if tag in acc.Tags()["scalars"]
                else []
            )
            curves[name][tag] = pts
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name)
            (
                ax.set_title(tag.rsplit("/", 1)[-1] + " (train)"),
                ax.set_xlabel("teacher-forced frames"),
            )
    for ax in axes:
        ax.legend()
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return curves


# --- main ----------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from common.cli import OneLineArgumentParser

    ap = OneLineArgumentParser(
        prog="python -m experiments.alfred_seq2seq.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, required=True, help="dataset of scripts/gen_alfred_dataset.sh"
    )
    ap.add_argument(
        "--encoder",
        default="random_resnet18",
        help="visual encoder that made the dataset's features",
    )
    ap.add_argument("--splits", default="valid_seen,valid_unseen")
    ap.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"subset of {','.join(VARIANTS)}"
    )
    ap.add_argument("--training-frames", type=int, default=20000)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--limit", type=int, default=None, help="first K episodes of each split")
    ap.add_argument(
        "--subgoals", default="all", help="'all', types (GotoLocation,PickupObject) or 'none'"
    )
    ap.add_argument(
        "--subgoal-limit",
        type=int,
        default=None,
        help="subgoal evaluation on the first K episodes only",
    )
    ap.add_argument(
        "--max-steps", type=int, default=1000, help="task episode step cap (ALFRED: 1000)"
    )
    ap.add_argument(
        "--subgoal-max-steps", type=int, default=1000, help="steps after the prefix (ALFRED: 1000)"
    )
    ap.add_argument("--max-fails", type=int, default=10, help="ALFRED: 10")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="training, random agent and bootstrap seed")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_seq2seq_compare")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="table from the cached evaluations only (no training, no evaluation)",
    )
    ap.add_argument(
        "--evaluate",
        default=None,
        metavar="AGENTS",
        help="evaluate only these agents (comma-separated variants and/or 'random'), read the others "
        "from their cache: separate calls can then run side by side, and a last call without "
        "it (or with --report-only) writes the joint table",
    )
    ap.add_argument(
        "--ship", type=Path, default=None, help="copy the trained Seq2Seq+PM checkpoint (slim) here"
    )
    ap.add_argument(
        "--ship-half",
        action="store_true",
        help="--ship stores float16 weights (half the size; evaluate the shipped file for its numbers)",
    )
    ap.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="VARIANT=PATH",
        help="evaluate this checkpoint for VARIANT instead of training it (e.g. one written by "
        "experiments/alfred_seq2seq/learning.py --save); repeatable",
    )
    ap.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="one more checkpoint to evaluate under its own NAME (not one of the variants; e.g. the "
        "DAgger and imitation arms); repeatable",
    )
    ap.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="A,B",
        help="also report A > B (GotoLocation, PickupObject, task GC; separate and paired intervals) "
        "for two agents of this run, e.g. a retrained checkpoint against the shipped one; repeatable",
    )
    ap.add_argument(
        "--agent-kwargs",
        default=None,
        metavar="JSON",
        help="inference options for every learned agent (not random), e.g. "
        "'{\"obstruction_evasion\": true}' (see alfred_task/models/agent.py); named in the report",
    )
    return ap


def given_checkpoints(
    specs: Sequence[str], flag: str = "--checkpoint", variants: bool = True
) -> Dict[str, Path]:
    """``--checkpoint VARIANT=PATH`` (or, ``variants=False``, ``--agent NAME=PATH`` with a NAME that is
    neither a variant nor ``random``) values as {name: path}; UsageError naming a bad one."""
    from common.cli import UsageError

    out: Dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if variants and (not sep or name not in VARIANTS):
            raise UsageError(
                f"{flag}: expected VARIANT=PATH with VARIANT one of {','.join(VARIANTS)}, got {spec!r}"
            )
        if not variants and (not sep or not name or name in (*VARIANTS, "random") or name in out):
            raise UsageError(
                f"{flag}: expected NAME=PATH with a new NAME (not a variant, not random), got {spec!r}"
            )
        if not Path(path).is_file():
            raise UsageError(f"{flag}: {path} not found")
        out[name] = Path(path)
    return out


def _check(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    from common.cli import (
        UsageError,
        check_int,
        check_output_dir,
        parse_json_object,
        report_usage_errors,
    )

    with report_usage_errors(ap.prog):
        if not (args.data / "splits.json").is_file():
            raise UsageError(
                f"--data: {args.data / 'splits.json'} not found "
                f"(bash scripts/gen_alfred_dataset.sh {args.data} {args.encoder})"
            )
        unknown = [v for v in args.variants.split(",") if v not in VARIANTS]
        if unknown:
            raise UsageError(
                f"--variants: unknown {unknown} (expected some of {','.join(VARIANTS)})"
            )
        for name in (
            "training_frames",
            "batch_size",
            "max_steps",
            "subgoal_max_steps",
            "max_fails",
            "workers",
        ):
            check_int("--" + name.replace("_", "-"), getattr(args, name), 1)
        check_int("--limit", args.limit, 1)
        check_int("--subgoal-limit", args.subgoal_limit, 1)
        check_output_dir("--out", args.out)
        args.agent_kw = parse_json_object("--agent-kwargs", args.agent_kwargs)
        args.given = given_checkpoints(args.checkpoint)
        args.extra = given_checkpoints(args.agent, "--agent", variants=False)
        names = (*VARIANTS, *args.extra, "random")
        args.pairs = []
        for spec in args.pair:
            pair = tuple(spec.split(","))
            if len(pair) != 2 or pair[0] == pair[1] or any(n not in names for n in pair):
                raise UsageError(
                    f"--pair {spec}: expected A,B, two different agents of {','.join(names)}"
                )
            args.pairs.append(pair)
        if args.evaluate is not None:
            args.evaluate = [a for a in args.evaluate.split(",") if a]
            bad = [a for a in args.evaluate if a not in names]
            if bad:
                raise UsageError(f"--evaluate: unknown {bad} (expected some of {','.join(names)})")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    _check(ap, args)
    from alfred_task.evaluation.cli import parse_subgoals

    variants = args.variants.split(",")
    if args.report_only or args.evaluate is not None:
        # a variant is trained only when this call evaluates it; the others come from their cache
        ckpts = {}
        for v in variants:
            c = args.given.get(v) or latest_checkpoint(args.out / "train" / v)
            if c is None and not args.report_only and v in args.evaluate:
                c = train_variant(v, args)
            if c is not None:
                ckpts[v] = c
    else:
        ckpts = {v: args.given.get(v) or train_variant(v, args) for v in variants}
    if args.ship and "seq2seq_pm" in ckpts:
        print(f"shipped {ship(ckpts['seq2seq_pm'], args.ship, args.ship_half, args.agent_kw)}")
    evaluated = {**ckpts, **args.extra}  # trained or given variants, then the extra agents
    agents = {v: {"path": str(c), **args.agent_kw} for v, c in evaluated.items()}
    agents["random"] = {"seed": args.seed}
    types = [] if args.subgoals == "none" else parse_subgoals(args.subgoals)
    result: Dict[str, Any] = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "checkpoints": {v: str(c) for v, c in evaluated.items()},
        "splits": {},
    }
    lines = [
        f"# ALFRED Seq2Seq baselines on thor_lite (lite models, visual encoder {args.encoder})",
        "",
        f"Caps: task max_steps {args.max_steps}, subgoal max_steps {args.subgoal_max_steps} (after the "
        f"prefix), max_fails {args.max_fails}; training {args.training_frames} teacher-forced frames, "
        f"batch {args.batch_size}, seed {args.seed}.",
        "",
        "Command: `python -m experiments.alfred_seq2seq.compare "
        + " ".join(argv or sys.argv[1:])
        + "`",
        "",
    ]
    if args.agent_kw:
        lines += [
            f"Learned agents' inference options: `{json.dumps(args.agent_kw, sort_keys=True)}` "
            "(alfred_task/models/agent.py; the random agent has none).",
            "",
        ]
    if args.given or args.extra:
        lines += [
            "Given checkpoints (trained elsewhere; the training frames above do not apply to them): "
            + ", ".join(f"{v} = `{c}`" for v, c in {**args.given, **args.extra}.items()),
            "",
        ]
    for split in args.splits.split(","):
        found = {name: evaluate(name, kw, split, args) for name, kw in agents.items()}
        recs = common_episodes(
            {name: r for name, r in found.items() if r["task"]}
        )  # --report-only: cached ones
        if not recs:
            from common.cli import fail

            fail(
                ap.prog,
                f"--report-only: no cached evaluation of split {split} under {args.out / 'eval'} "
                f"(evaluate first, e.g. with --evaluate)",
            )
        summary = {
            name: {
                "task": task_summary(r["task"], args.seed),
                "subgoal": subgoal_summary(r["subgoal"], args.seed),
            }
            for name, r in recs.items()
        }
        split_claims = claims(summary, recs, args.seed, args.pairs)
        result["splits"][split] = {"summary": summary, "claims": split_claims}
        lines += report(
            summary, split, [t for t in types if any(t in s["subgoal"] for s in summary.values())]
        )
        lines += [claim_line(*c) for c in split_claims] + [""]
    result["curves"] = plot_curves(
        {v: args.out / "train" / v for v in variants}, args.out / "training_curves.png"
    )
    lines += ["![training curves](training_curves.png)", ""]
    write_json(args.out / "compare.json", result)
    write_markdown(args.out / "compare.md", "\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {args.out / 'compare.md'}, compare.json, training_curves.png")
    return 0


if __name__ == "__main__":
    from common.procs import stop_children_on_signals

    with stop_children_on_signals(
        "experiments/alfred_seq2seq/compare.py"
    ):  # the eval pool goes too
        sys.exit(main())

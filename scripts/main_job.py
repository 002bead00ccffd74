"""The README's main job: the shipped 1-phase DAgger agent in the learning protocol.

1. loads the shipped thor_lite checkpoint (pretrained_model_ckpts/one_phase_rgb_dagger/, trained
   by scripts/train_rearrange_curriculum.py on the one-object slice it names) and plays the five
   rows of rearrange/protocol.py on the slice's held-out episodes (held_out.pkl.gz next to it):
   its argmax policy, the same policy with its goal view replaced by its current view, the
   scan-and-open heuristic fitted on its training episodes, a seeded random agent and "done at
   step 0"; % Fixed Strict and % success with 95 % CIs and the agent's paired differences to
   each row (results.md, results.json with the episode files' sha256) and a GIF of one episode
   (current view | goal view);
2. with --train-from-scratch instead: a short allenact DAgger training on the full task,
   `allenact --eval` on val, the same random/done comparison and a submission.json.gz (the
   previous main job; a few CPU minutes do not beat random there);
3. ALFRED: "step 0" (an agent that stops at once: the goal conditions already true), the online
   expert, a random agent and the shipped lite Seq2Seq+PM checkpoint
   (pretrained_model_ckpts/alfred_seq2seq_pm_gpu/, `--agent checkpoint`, task episodes capped at
   ALFRED_CKPT_MAX_STEPS) on the shipped valid splits (ALFRED's result files
   `task_results_*.json` in out/main_job/alfred/<agent>/ and SR, GC, PLW tables built from them,
   each agent's GC over step 0, and whether the learned agent beats random; skip with
   --skip-alfred).

Everything goes to out/main_job/. Exits non-zero if any stage fails.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set

from common.atomic_io import write_text_atomic
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_int,
    check_output_dir,
    report_usage_errors,
)
from common.procs import stop_children_on_signals

REPO = Path(__file__).resolve().parents[1]
CONFIG = "baseline_configs/one_phase/one_phase_rgb_dagger.py"
SHIPPED = REPO / "pretrained_model_ckpts" / "one_phase_rgb_dagger" / "thor_lite_one_object_slice.pt"
HELD_OUT = SHIPPED.parent / "held_out.pkl.gz"  # the slice's held-out episodes it was measured on
TRAIN_EPISODES = REPO / "data" / "rearrange_curriculum_open" / "train.pkl.gz"  # it was trained on
ALFRED_SHIPPED = (
    REPO / "pretrained_model_ckpts" / "alfred_seq2seq_pm_gpu" / "alfred_seq2seq_pm_lite.pt"
)
#: a learned agent that turns or walks without failing runs to the step cap at up to 0.1 CPU-s per
#: step (ResNet-18 + thor_lite): ALFRED's 1000 could cost an hour for the 39 episodes on 2 cores,
#: 100 bounds it to minutes (expert plans: about 41 steps). The shipped one ends by ALFRED's 10
#: failed interactions after 35-45 steps (measured: 6 episodes, 17 CPU-s with start-up).
ALFRED_CKPT_MAX_STEPS = 100


def run(cmd, log: Path) -> None:
    print("+", " ".join(cmd), flush=True)
    with open(log, "w") as f, stop_children_on_signals("main job"):
        proc = subprocess.run(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        tail = log.read_text().splitlines()[-25:]
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit(
            f"main job: command failed with status {proc.returncode}; full log in {log}"
        )


def _check_args(args: argparse.Namespace) -> None:
    """User errors first: numbers, frame size (SimpleCNN's minimum) and the output folder."""
    check_int("--training-steps", args.training_steps, 1)
    check_int("--processes", args.processes, 1)
    check_int("--eval-episodes-per-scene", args.eval_episodes_per_scene, 1)
    check_int("--update-repeats", args.update_repeats, 1)
    check_int("--bc-steps", args.bc_steps, 0)
    check_int("--dagger-steps", args.dagger_steps, 0)
    if args.screen_size is not None:
        from baseline_configs.rearrange_base import simple_cnn_min_size

        check_int("--screen-size", args.screen_size, simple_cnn_min_size())
    if args.lr is not None and not args.lr > 0:
        raise UsageError(f"--lr must be positive, not {args.lr}")
    check_output_dir("--out", args.out)
    if not args.train_from_scratch:
        from common.cli import check_input_file

        check_input_file("--checkpoint", args.checkpoint)
        check_input_file("--held-out", args.held_out)
        check_input_file("--train-episodes", args.train_episodes)
        if args.held_out_per_scene is not None:
            check_int("--held-out-per-scene", args.held_out_per_scene, 1)


def main(argv=None) -> int:
    ap = OneLineArgumentParser(
        prog="scripts/main_job.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", type=Path, default=REPO / "out" / "main_job")
    ap.add_argument("--training-steps", type=int, default=6144)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument(
        "--train-scenes",
        nargs="*",
        default=None,
        help="restrict training to these scenes (default: all 80 train scenes)",
    )
    ap.add_argument("--eval-episodes-per-scene", type=int, default=3)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument(
        "--lr", type=float, default=None, help="Adam learning rate (config default 3e-4)"
    )
    ap.add_argument(
        "--update-repeats", type=int, default=None, help="epochs per rollout (config default 3)"
    )
    ap.add_argument(
        "--bc-steps",
        type=int,
        default=None,
        help="steps of pure teacher forcing before the DAgger decay (default: 25%% of training)",
    )
    ap.add_argument(
        "--dagger-steps",
        type=int,
        default=None,
        help="steps over which teacher forcing decays to 0 (default: 50%% of training)",
    )
    ap.add_argument(
        "--skip-alfred",
        action="store_true",
        help="do not run the ALFRED part (expert and random agents on the shipped valid splits)",
    )
    ap.add_argument(
        "--screen-size",
        type=int,
        default=None,
        help="frame size for training and evaluation (default: the config's 224)",
    )
    ap.add_argument(
        "--train-from-scratch",
        action="store_true",
        help="train with allenact on the full task instead of evaluating the shipped checkpoint",
    )
    ap.add_argument(
        "--checkpoint", type=Path, default=SHIPPED, help="the agent to evaluate (default: shipped)"
    )
    ap.add_argument(
        "--held-out",
        type=Path,
        default=HELD_OUT,
        help="held-out episodes of the checkpoint's slice",
    )
    ap.add_argument(
        "--train-episodes",
        type=Path,
        default=TRAIN_EPISODES,
        help="the checkpoint's training episodes (the heuristic's choices are fitted on them)",
    )
    ap.add_argument(
        "--held-out-per-scene",
        type=int,
        default=None,
        help="evaluate only the first N held-out episodes of each scene (default: the checkpoint's "
        "slice, 90 per scene for the shipped agent; fewer are faster but give wider CIs)",
    )
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog):  # every user error before any work
        _check_args(args)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.train_from_scratch:
        train_from_scratch(args, out)
    else:
        evaluate_shipped(args, out)
    if not args.skip_alfred:
        alfred_part(out / "alfred", args.processes)
    return 0


def evaluate_shipped(args: argparse.Namespace, out: Path) -> None:
    """The shipped agent in the learning protocol (rearrange/protocol.py) on its held-out slice
    episodes: the agent, its goal-blind self, the scan-and-open heuristic fitted on its training
    episodes, random and done, compared episode by episode with 95 % intervals."""
    from collections import OrderedDict

    import torch

    from common.cli import UsageError
    from rearrange import curriculum as cur
    from rearrange import protocol as proto
    from rearrange.eval import _json_default, write_gif

    torch.set_num_threads(
        1
    )  # 64x64 policy steps: more threads fight the simulator (4.3 vs 1.3-1.9 s/episode, loaded)
    with report_usage_errors("main job"):
        source, held, train, horizon = proto.prepare(
            args.checkpoint, args.held_out, args.train_episodes, REPO
        )
        if source.config is not None:
            raise UsageError(f"--checkpoint {args.checkpoint}: not a curriculum checkpoint")
    if args.held_out_per_scene is not None:
        held = OrderedDict((s, eps[: args.held_out_per_scene]) for s, eps in held.items())
    config, model, meta = cur.load_agent(args.checkpoint, REPO)
    spec = cur.SliceSpec(**meta["slice"])
    t0 = time.time()
    with stop_children_on_signals("main job"):
        report = proto.evaluate_protocol(
            source,
            args.held_out,
            held,
            args.train_episodes,
            train,
            horizon,
            args.seed,
            args.processes,
        )
    frames: list = []
    cur.run_episodes(
        config, type(held)(list(held.items())[:1]), *_argmax_agent(model), horizon, "gif", frames
    )
    write_gif(frames, out / "episode.gif")
    ho, tr = report["held_out"], report["training_episodes"]
    summary = (
        f"# Main job: shipped 1-phase RGB DAgger agent on thor_lite, held-out episodes\n\n"
        f"Slice: {spec.describe()}\n\n"
        f"Held-out: {ho['episodes']} episodes of `{ho['file']}` (sha256 {ho['sha256']}); "
        f"heuristic fitted on `{tr['file']}` (sha256 {tr['sha256']}). Held-out scenes also in "
        f"training: {', '.join(report['overlap']['scenes_in_training']) or 'none'}; held-out "
        f"start poses equal to a training one: {report['overlap']['start_poses_in_training']}.\n\n"
        f"{proto.protocol_table(report)}\n\n{proto.verdict_words(report)} "
        f"Evaluated in {time.time() - t0:.0f} s; checkpoint {args.checkpoint}, trained by "
        f"`{meta['trained_by']}`.\n"
    )
    print(summary)
    write_text_atomic(out / "results.md", summary)
    write_text_atomic(
        out / "results.json", json.dumps(report, indent=1, default=_json_default) + "\n"
    )
    print(f"wrote {out / 'results.md'}, {out / 'results.json'}, {out / 'episode.gif'}")


def _argmax_agent(model):
    from rearrange.curriculum import MODEL_UUIDS
    from rearrange.imitation import PolicyRunner

    runner = PolicyRunner(model, MODEL_UUIDS)
    return (lambda task, obs: runner.act(obs)), (lambda task: runner.reset())


def train_from_scratch(args: argparse.Namespace, out: Path) -> None:
    """The previous main job: allenact DAgger on the full task, allenact --eval, random/done."""
    allenact = str(Path(sys.executable).with_name("allenact"))
    kwargs = {
        "num_train_processes": args.processes,
        "training_steps": args.training_steps,
        "save_interval": args.training_steps,
        "num_test_processes": args.processes,
        "test_stage": "val",
        "max_test_episodes_per_scene": args.eval_episodes_per_scene,
        "train_split": "train_subset",
    }
    for key, value in (
        ("screen_size", args.screen_size or None),
        ("lr", args.lr),
        ("update_repeats", args.update_repeats),
        ("bc_tf1_steps", args.bc_steps),
        ("dagger_steps", args.dagger_steps),
    ):
        if value is not None:
            kwargs[key] = value
    if args.train_scenes:
        kwargs["train_scenes"] = args.train_scenes
    t0 = time.time()
    run(
        [
            allenact,
            "-b",
            ".",
            CONFIG,
            "-o",
            str(out / "experiment"),
            "-s",
            str(args.seed),
            "--config_kwargs",
            json.dumps(kwargs),
        ],
        out / "train.log",
    )
    ckpts = sorted(
        glob.glob(str(out / "experiment" / "checkpoints" / "**" / "*.pt"), recursive=True),
        key=os.path.getmtime,
    )
    if not ckpts:
        raise SystemExit(f"main job: training wrote no checkpoint under {out / 'experiment'}")
    ckpt = ckpts[-1]
    train_s = time.time() - t0
    run(
        [
            allenact,
            "-b",
            ".",
            CONFIG,
            "-o",
            str(out / "experiment"),
            "-s",
            str(args.seed),
            "--eval",
            "-c",
            ckpt,
            "--config_kwargs",
            json.dumps(kwargs),
        ],
        out / "eval.log",
    )
    metric_files = sorted(
        glob.glob(str(out / "experiment" / "metrics" / "**" / "*.json"), recursive=True),
        key=os.path.getmtime,
    )
    if not metric_files:
        raise SystemExit("main job: allenact --eval wrote no metrics file")
    evaluated = json.loads(Path(metric_files[-1]).read_text())[-1]
    tasks = evaluated["tasks"]

    from rearrange.eval import (
        CheckpointAgent,
        DoneAgent,
        RandomAgent,
        load_config,
        metrics_table,
        run_agent,
        summarize,
        write_submission,
    )

    config = load_config(str(REPO / CONFIG), kwargs)
    rows = {f"DAgger ({args.training_steps} steps)": summarize(tasks)}
    for name, agent in (("random", RandomAgent(args.seed)), ("done at step 0", DoneAgent())):
        rows[name] = summarize(
            run_agent(config, agent, "val", args.eval_episodes_per_scene, desc=name)
        )
    table = metrics_table(rows)
    fps = _train_fps(out / "train.log")
    summary = (
        f"# Main job: 1-phase RGB DAgger on thor_lite\n\n{table}\n\n"
        f"Evaluated on {len(tasks)} val episodes ({args.eval_episodes_per_scene} per scene). "
        f"Training: {args.training_steps} steps on {args.processes} processes in {train_s:.0f} s"
        + (f" (allenact approx_fps median {fps:.1f})" if fps else "")
        + f"; checkpoint {ckpt}\n"
    )
    print(summary)
    write_text_atomic(out / "results.md", summary)
    write_submission(tasks, out / "submission.json.gz")
    run_agent(
        config,
        CheckpointAgent(config, ckpt, seed=args.seed),
        "val",
        1,
        scenes=["FloorPlan21"],
        gif_path=out / "episode.gif",
        desc="gif",
    )
    print(
        f"wrote {out / 'results.md'}, {out / 'submission.json.gz'}, {out / 'episode.gif'}; "
        f"TensorBoard logs in {out / 'experiment' / 'tb'}"
    )


ALFRED_SPLITS = ("valid_seen", "valid_unseen")
#: "step 0": an agent that stops before any action scores the goal conditions already true
ALFRED_STEP0 = "step0"


def alfred_agents() -> Dict[str, List[str]]:
    """name -> the evaluator's agent flags: step 0, the expert, random, the shipped checkpoint."""
    return {
        ALFRED_STEP0: ["--agent", "random", "--agent-kwargs", '{"stop_prob": 1.0}'],
        "expert": ["--agent", "expert"],
        "random": ["--agent", "random"],
        "seq2seq_pm_checkpoint": [
            "--agent",
            "checkpoint",
            "--checkpoint",
            str(ALFRED_SHIPPED),
            "--max-steps",
            str(ALFRED_CKPT_MAX_STEPS),
        ],
    }


def alfred_part(out: Path, workers: int, limit: Optional[int] = None) -> None:
    """ALFRED on thor_lite: step 0 (stop at once), the online expert, a random agent and the
    shipped Seq2Seq+PM checkpoint on the shipped valid splits (task_results_*.json per agent;
    tables in results.md built from those files, then each agent's GC over step 0 and whether
    the learned agent beats random).

    `limit` keeps the first episodes of each split (quick checks; the main job runs them all).
    """
    data = REPO / "data" / "alfred_lite"
    sections = []
    results: Dict[str, Dict[str, dict]] = {}
    for agent, flags in alfred_agents().items():
        agent_out = out / agent
        out.mkdir(parents=True, exist_ok=True)
        existing = set(agent_out.glob("task_results_*.json"))
        cmd = [
            sys.executable,
            "-m",
            "alfred_task.evaluation",
            *flags,
            "--data",
            str(data),
            "--splits",
            str(data / "splits.json"),
            "--split",
            ",".join(ALFRED_SPLITS),
            "--num-workers",
            str(workers),
            "--out",
            str(agent_out),
            "--quiet",
        ]
        if limit is not None:
            cmd += ["--limit", str(limit)]
        run(cmd, out / f"{agent}.log")
        results[agent] = alfred_results(agent_out, ALFRED_SPLITS, existing)
        sections.append(f"## {agent}\n\n" + alfred_tables(agent_out, ALFRED_SPLITS, existing))
    text = (
        "# Main job, ALFRED part: shipped valid splits on thor_lite\n\n"
        + alfred_over_step0(results, ALFRED_SPLITS)
        + "\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    write_text_atomic(out / "results.md", text)
    print(text)
    print(f"wrote {out / 'results.md'} and ALFRED result files under {out}")


def alfred_results(
    agent_out: Path, splits: Sequence[str], existing: Set[Path] = frozenset()
) -> Dict[str, dict]:
    """{split: results} from the `task_results_<split>_<ts>.json` that this run wrote
    (files in `existing` are from earlier runs and are ignored)."""
    out = {}
    for split in splits:
        new = sorted(set(agent_out.glob(f"task_results_{split}_*.json")) - set(existing))
        if len(new) != 1:
            raise SystemExit(
                f"main job: expected one new task_results_{split}_*.json in {agent_out}, "
                f"found {[p.name for p in new]}"
            )
        results = json.loads(new[0].read_text())["results"]
        missing = [
            k
            for k in ("num_evals", "sr", "gc", "plw_sr", "plw_gc")
            if k not in results.get("all", {})
        ]
        if missing:
            raise SystemExit(f"main job: {new[0]}: results.all lacks {missing}")
        out[split] = results
    return out


def alfred_tables(agent_out: Path, splits: Sequence[str], existing: Set[Path] = frozenset()) -> str:
    """One table per split from this run's result files (see `alfred_results`)."""
    from alfred_task.evaluation.metrics import format_task_table

    tables = []
    for split, results in alfred_results(agent_out, splits, existing).items():
        n = results["all"]["num_evals"]
        tables.append(format_task_table(results, f"task evaluation: {split} ({n} episodes)"))
    return "\n\n".join(tables)


def alfred_over_step0(results: Dict[str, Dict[str, dict]], splits: Sequence[str]) -> str:
    """GC of each agent next to step 0's (goal conditions true before any action) and plain
    verdicts: a learned agent that does not exceed random's GC is said not to beat it."""
    lines = [
        "## Goal conditions over step 0",
        "",
        "Step 0: the agent stops before acting, so its GC is the share of goal conditions "
        "already true in the initial state.",
        "",
        "| split | agent | episodes | SR % | GC % | GC over step 0 (points) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    verdicts = []
    for split in splits:
        base = results[ALFRED_STEP0][split]["all"]["gc"]
        for agent, by_split in results.items():
            a = by_split[split]["all"]
            delta = "" if agent == ALFRED_STEP0 else f"{100 * (a['gc'] - base):+.2f}"
            lines.append(
                f"| {split} | {agent} | {a['num_evals']} | {100 * a['sr']:.2f} | "
                f"{100 * a['gc']:.2f} | {delta} |"
            )
        for agent in (a for a in results if "checkpoint" in a):
            gc, rnd = results[agent][split]["all"]["gc"], results["random"][split]["all"]["gc"]
            if gc <= rnd:
                verdicts.append(
                    f"- {split}: {agent} does NOT beat random (GC {100 * gc:.2f} vs random "
                    f"{100 * rnd:.2f}; step 0 {100 * base:.2f})."
                )
            else:
                verdicts.append(
                    f"- {split}: {agent} GC {100 * gc:.2f} is above random's {100 * rnd:.2f} "
                    f"(point estimates on {results[agent][split]['all']['num_evals']} episodes, "
                    "no confidence interval; step 0 "
                    f"{100 * base:.2f})."
                )
    return "\n".join(lines + [""] + verdicts)


def _train_fps(log: Path):
    import re
    import statistics

    vals = [float(m) for m in re.findall(r"approx_fps ([0-9.]+)", log.read_text())]
    return statistics.median(vals) if vals else None


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

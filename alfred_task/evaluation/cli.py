"""ALFRED task / subgoal evaluation and the leaderboard dump (alfred.md §5, §4, §11).

CLI::

    python -m alfred_task.evaluation --agent random|replay|checkpoint|expert|<registered> \\
        --data <json_2.1.0 root> --splits <oct21-style split file> --split valid_seen \\
        [--checkpoint PATH] [--subgoals all|GotoLocation,PickupObject,...] \\
        [--max-steps 1000] [--max-fails 10] [--num-workers N] [--limit K] [--out DIR] \\
        [--seed S] [--backend thor_lite] [--agent-module MOD ...] [--agent-kwargs JSON] \\
        [--torch-threads 1] [--quiet]

``--split`` takes one split or a comma-separated list (``tests_seen,tests_unseen`` gives one
leaderboard dump with both keys). Outputs (written atomically, only after every episode
finished, so a failed run leaves nothing half-written):

* ``task_results_<split>_<ts>.json`` = ``{successes, failures, results}`` for train/valid
  splits; ``results`` holds ``all`` plus one entry per task type (`metrics.aggregate_by_type`);
* ``tests_actseqs_dump_<ts>.json`` = ``{"tests_seen": [{task_id: [api_action, ...]}, ...],
  "tests_unseen": [...]}`` when test splits are evaluated (one dict per annotation; test
  trajectories have no plan, so they are not scored; a split not evaluated is ``[]``);
* ``subgoal_results_<ts>.json`` = ``{split, successes, failures, results}`` with
  ``--subgoals`` (successes/failures keyed by subgoal type).

Modules: `inputs` (entries, validation), `episodes` (one task / subgoal episode),
`runner` (in-process or pool), `results` (result files); this one is the CLI and
re-exports their public names. ``--torch-threads`` (default 1) sets torch's intra-op threads.

Episode semantics (ALFRED's §5.1 task and §5.3 subgoal episodes, teacher-forced expert prefix):
see `alfred_task.evaluation.episodes`.

Python API: `evaluate_tasks(agent_factory, entries, data_root, ...) -> list[record]`,
`evaluate_subgoals(...)`, `resolve_entries(...)`, `run_task_episode(...)`.

Multiprocessing: see `alfred_task.evaluation.runner` (records in input order whatever the number of workers).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from backends import BACKENDS, DEFAULT_BACKEND
from common.atomic_io import write_json_atomic
from common.checkpoint_card import CardError, card_path, read_card
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_int,
    check_output_dir,
    parse_json_object,
)

from alfred_task.evaluation.agents import (
    Agent,
    UnknownAgentError,
    agent_factory as _agent_factory,
    registered_agents,
)
from alfred_task.constants import MAX_FAILS, MAX_STEPS, SCREEN_SIZE, TEST_SPLITS
from alfred_task.evaluation.episodes import (
    run_subgoal_episode,
    run_subgoal_episodes,
    run_task_episode,
    subgoal_indices,
)
from alfred_task.evaluation.inputs import EvalEntry, EvalInputError, parse_subgoals, resolve_entries
from alfred_task.evaluation.results import (
    leaderboard_dump,
    subgoal_results,
    task_results,
    timestamp,
)
from alfred_task.evaluation.runner import (
    EpisodeError,
    check_limits,
    evaluate_subgoals,
    evaluate_tasks,
    set_torch_threads,
)
from alfred_task.evaluation.metrics import format_subgoal_table, format_task_table
from alfred_task.data.traj_schema import TrajDataError

__all__ = [
    "EvalEntry",
    "EvalInputError",
    "EpisodeError",
    "resolve_entries",
    "run_task_episode",
    "run_subgoal_episode",
    "run_subgoal_episodes",
    "subgoal_indices",
    "evaluate_tasks",
    "evaluate_subgoals",
    "task_results",
    "subgoal_results",
    "leaderboard_dump",
    "parse_subgoals",
    "main",
]


def _agent_record(
    agent: Agent, args: argparse.Namespace, card: Optional[Dict[str, Any]] = None
) -> Dict[str, Any]:
    """What result files say about the agent: its name, checkpoint and visual encoder (if any),
    and from the checkpoint's card the config that trained it and how."""
    inner = getattr(agent, "inner", agent)
    record = {
        "agent": args.agent,
        "checkpoint": args.checkpoint,
        "visual_encoder": getattr(inner, "visual_encoder", None),
    }
    if card:
        record.update({k: card[k] for k in ("config", "config_kwargs", "trained_by")})
    return record


def _checkpoint_card(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """The card (`<checkpoint>.json`) of the evaluated checkpoint, checked against the file."""
    if args.agent != "checkpoint" or not args.checkpoint:
        return None
    try:
        card = read_card(args.checkpoint)
    except CardError as e:
        raise EvalInputError(str(e)) from None
    if card is not None and card["task"] != "alfred":
        raise EvalInputError(
            f"--checkpoint {args.checkpoint}: its card {card_path(args.checkpoint)} says task "
            f"{card['task']!r}; evaluate it with python -m rearrange.eval"
        )
    return card


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineArgumentParser(
        prog="python -m alfred_task.evaluation",
        description="Evaluate an agent on ALFRED (task SR/GC/PLW, subgoals, leaderboard dump).",
    )
    ap.add_argument(
        "--agent",
        required=True,
        help=f"registered agent name ({', '.join(registered_agents())}, expert once registered)",
    )
    ap.add_argument("--checkpoint", default=None, help="checkpoint file for --agent checkpoint")
    ap.add_argument(
        "--agent-module",
        action="append",
        default=[],
        metavar="MOD",
        help="import MOD first (a module that calls alfred_task.evaluation.agents.register_agent); repeatable",
    )
    ap.add_argument(
        "--agent-kwargs",
        default=None,
        metavar="JSON",
        help="extra keyword arguments for the agent factory",
    )
    ap.add_argument("--data", required=True, help="json root holding <split>/<task>/traj_data.json")
    ap.add_argument("--splits", required=True, help="oct21-style split file")
    ap.add_argument(
        "--split",
        default="valid_seen",
        help="split name, or comma-separated names (default valid_seen)",
    )
    ap.add_argument(
        "--subgoals",
        default=None,
        help="subgoal evaluation: 'all' or e.g. GotoLocation,PickupObject",
    )
    ap.add_argument("--max-steps", type=int, default=MAX_STEPS)
    ap.add_argument("--max-fails", type=int, default=MAX_FAILS)
    ap.add_argument("--num-workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="first K entries of each split")
    ap.add_argument(
        "--out", default="out/alfred_eval", help="output folder (default out/alfred_eval)"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed (random agent)")
    ap.add_argument(
        "--backend", default=DEFAULT_BACKEND, help=f"simulator backend ({' or '.join(BACKENDS)})"
    )
    ap.add_argument(
        "--frame-size", type=int, default=SCREEN_SIZE, help="frame/mask size (default 300)"
    )
    ap.add_argument("--mp-context", choices=("spawn", "forkserver"), default="spawn")
    ap.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch intra-op threads in this process (default 1; pool workers always use 1)",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    return ap


def _agent_kwargs(
    args: argparse.Namespace, card: Optional[Dict[str, Any]] = None
) -> Dict[str, Any]:
    """--agent-kwargs over the card's `agent_kwargs` (the inference options it was measured with)."""
    explicit = parse_json_object("--agent-kwargs", args.agent_kwargs, EvalInputError)
    kw: Dict[str, Any] = {**((card or {}).get("agent_kwargs") or {}), **explicit}
    if args.agent == "random":
        kw.setdefault("seed", args.seed)
    if args.agent == "checkpoint":
        if not args.checkpoint and "path" not in kw:
            raise EvalInputError("--agent checkpoint needs --checkpoint PATH")
        if args.checkpoint:
            kw["path"] = args.checkpoint
    elif args.checkpoint:
        raise EvalInputError(
            f"--checkpoint is only used with --agent checkpoint (got --agent {args.agent})"
        )
    return kw


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for mod in args.agent_module:
            try:
                importlib.import_module(mod)
            except ImportError as e:
                raise EvalInputError(f"--agent-module {mod}: cannot import ({e})") from None
        from alfred_task.env.environment import AlfredEnv  # noqa: F401  (fail early on a broken install)

        if args.backend not in BACKENDS:
            raise EvalInputError(
                f"--backend: unknown backend {args.backend!r} (expected one of {', '.join(BACKENDS)})"
            )
        check_int(
            "--num-workers", args.num_workers, 1
        )  # the library's 0 (= in-process) is not a CLI value
        check_limits(args.max_steps, args.max_fails, args.num_workers)
        check_int("--limit", args.limit, 1)
        check_int("--frame-size", args.frame_size, 1)
        check_int("--torch-threads", args.torch_threads, 1)
        check_output_dir("--out", args.out)
        subgoals = parse_subgoals(args.subgoals) if args.subgoals else None
        splits = [s.strip() for s in args.split.split(",") if s.strip()]
        if subgoals and len(splits) != 1:
            raise EvalInputError(
                f"--subgoals evaluates one split at a time, got --split {args.split}"
            )
        if subgoals and splits[0] in TEST_SPLITS:
            raise EvalInputError(f"--subgoals needs expert plans; split {splits[0]} has none")
        card = _checkpoint_card(args)
        factory = _agent_factory(args.agent, **_agent_kwargs(args, card))
        agent = factory()  # built here: bad checkpoints etc. fail before any episode
        set_torch_threads(
            args.torch_threads
        )  # after the build: agents without torch never import it
        run = _agent_record(agent, args, card)
        entries = resolve_entries(args.data, args.splits, splits, args.limit)
    except UnknownAgentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (UsageError, EvalInputError, TrajDataError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    out_dir = Path(args.out)
    ts = timestamp()
    # in-process runs reuse the agent built above (a checkpoint agent costs seconds to build)
    runner = agent if args.num_workers <= 1 else factory
    common = dict(
        max_steps=args.max_steps,
        max_fails=args.max_fails,
        num_workers=args.num_workers,
        backend=args.backend,
        frame_size=args.frame_size,
        progress=not args.quiet,
        mp_context=args.mp_context,
    )
    try:
        if subgoals:
            recs = evaluate_subgoals(runner, entries, args.data, subgoals, **common)
            res = {**subgoal_results(recs, splits[0]), "agent": run}
            path = write_json_atomic(out_dir / f"subgoal_results_{ts}.json", res, sort_keys=False)
            print(
                format_subgoal_table(
                    res["results"], f"subgoal evaluation: {splits[0]} ({len(recs)} evaluations)"
                )
            )
            print(f"wrote {path}")
            return 0
        recs = evaluate_tasks(runner, entries, args.data, **common)
    except (EvalInputError, EpisodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    written = []
    tables = []
    for split in splits:
        rs = [r for r in recs if r["split"] == split]
        if split in TEST_SPLITS:
            tables.append(
                f"{split}: {len(rs)} episodes run (test split: not scored, actions recorded)"
            )
            continue
        res = {**task_results(rs), "agent": run}
        written.append(
            write_json_atomic(out_dir / f"task_results_{split}_{ts}.json", res, sort_keys=False)
        )
        tables.append(
            format_task_table(res["results"], f"task evaluation: {split} ({len(rs)} episodes)")
        )
    if any(s in TEST_SPLITS for s in splits):
        written.append(
            write_json_atomic(
                out_dir / f"tests_actseqs_dump_{ts}.json", leaderboard_dump(recs), sort_keys=False
            )
        )
    print("\n\n".join(tables))
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    # SIGTERM/SIGINT stop the worker pool (forkserver/spawn processes) too, exit 128 + signum.
    run_main(main, stop_children_as="python -m alfred_task.evaluation")

"""Evaluate agents (a checkpoint, random, "done at step 0", the expert) on a split.

    python -m rearrange.eval --config baseline_configs/one_phase/one_phase_rgb_dagger.py \
        --checkpoint out/.../exp_...pt --agents checkpoint random done --stage val \
        --episodes-per-scene 2 --gif out/episode.gif --submission out/submission.json.gz

Writes a markdown metrics table, a leaderboard-format `submission.json.gz` (§8) and a GIF of
one episode (current view | goal view). `--year 2023 --stage val` evaluates on the official
2023 val file instead (fetched once with `python -m rearrange.download data --years 2023`).
"""

from __future__ import annotations

import abc
import argparse
import importlib.util
import inspect
import json
import pickle
import random
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
from tqdm import tqdm

from common.atomic_io import atomic_open, write_text_atomic
from common.checkpoint_card import CardError, card_path, read_card
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_file,
    check_int,
    check_output_dir,
    check_output_file,
    parse_json_object,
    print_error,
    report_usage_errors,
)
from common.procs import stop_children_on_signals
from backends import BACKENDS, DEFAULT_BACKEND

from .constants import REPO_ROOT
from .harness import play_episode
from .official_eval import LEADERBOARD_WARNING
from .official_files import CHECKPOINT_BASE_URL_ENV, CHECKPOINTS, DATA_BASE_URL_ENV, YEARS

HEADLINE = (
    "unshuffle/prop_fixed_strict",
    "unshuffle/success",
    "unshuffle/prop_fixed",
    "unshuffle/energy_prop",
    "unshuffle/num_newly_misplaced",
    "unshuffle/ep_length",
)


class Agent(abc.ABC):
    def reset(self, task) -> None:
        """Called at the start of every task."""

    @abc.abstractmethod
    def act(self, task, observations) -> int:
        """The index of the next action."""


class RandomAgent(Agent):
    """Uniform over all actions (as the official example's random agent)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def act(self, task, observations) -> int:
        return self.rng.randrange(task.action_space.n)


class DoneAgent(Agent):
    def act(self, task, observations) -> int:
        return task.discrete_actions.index("done")


class ExpertAgent(Agent):
    def act(self, task, observations) -> int:
        action, ok = task.query_expert()
        return action if ok else task.discrete_actions.index("done")


class CheckpointAgent(Agent):
    """A trained policy through allenact's InferenceAgent (actions sampled, as in --eval)."""

    def __init__(self, config, checkpoint: str, seed: int = 0) -> None:
        import torch
        from allenact.utils.inference import InferenceAgent

        torch.manual_seed(seed)
        self.agent = InferenceAgent.from_experiment_config(config, device=torch.device("cpu"))
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        self.agent.actor_critic.load_state_dict(state["model_state_dict"])

    def reset(self, task) -> None:
        self.agent.reset()

    def act(self, task, observations) -> int:
        return int(self.agent.act(observations))


def load_config(path: str, config_kwargs: Optional[Dict[str, Any]] = None):
    """Import an experiment config module by path and instantiate its ExperimentConfig."""
    from allenact.base_abstractions.experiment_config import ExperimentConfig

    p = Path(path).resolve()
    spec = importlib.util.spec_from_file_location(p.stem, p)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"cannot import config {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = [
        c
        for c in vars(mod).values()
        if inspect.isclass(c) and issubclass(c, ExperimentConfig) and c.__module__ == mod.__name__
    ]
    if len(classes) != 1:
        raise ValueError(
            f"{path}: expected exactly one ExperimentConfig defined there, found {len(classes)}"
        )
    return classes[0](**(config_kwargs or {}))


def run_agent(
    config,
    agent: Agent,
    stage: str,
    episodes_per_scene: Optional[int] = None,
    scenes: Optional[Sequence[str]] = None,
    gif_path: Optional[Path] = None,
    desc: str = "episodes",
) -> List[Dict[str, Any]]:
    """Run every episode of `stage` (optionally limited) and return per-task metrics dicts."""
    args = config.stagewise_task_sampler_args(stage, 0, 1)
    data = args["scenes_to_task_spec_dicts"]
    if scenes:
        data = OrderedDict((s, data[s]) for s in scenes)
    if episodes_per_scene:
        data = OrderedDict((s, eps[:episodes_per_scene]) for s, eps in data.items())
    args["scenes_to_task_spec_dicts"] = data
    if isinstance(agent, ExpertAgent):
        args["sensors"] = type(args["sensors"])(config.sensors())
    sampler = config.make_sampler_fn(**args)
    total = int(sampler.length)
    results: List[Dict[str, Any]] = []
    frames: List[np.ndarray] = []
    try:
        with tqdm(total=total, desc=desc, unit="task") as bar:
            while True:
                task = sampler.next_task()
                if task is None:
                    break
                agent.reset(task)
                record = gif_path is not None and not frames and hasattr(task, "unshuffle_env")
                m = play_episode(task, agent.act, frames if record else None)
                if m:
                    results.append(m)
                bar.update(1)
    finally:
        sampler.close()
    if gif_path is not None and frames:
        write_gif(frames, gif_path)
    return results


def write_gif(frames: List[np.ndarray], path: Path, fps: int = 4) -> None:
    """Encoded in memory, then written atomically (the same bytes as a direct GIF write).

    imageio's pillow GIF writer reads `duration` in milliseconds per frame.
    """
    import imageio.v2 as imageio

    with atomic_open(path, "wb") as f:
        imageio.mimsave(f, frames, format="GIF", duration=1000.0 / fps, loop=0)


def summarize(results: List[Dict[str, Any]]) -> Dict[str, float]:
    out: Dict[str, float] = {"episodes": float(len(results))}
    for k in HEADLINE:
        vals = [r[k] for r in results if k in r]
        out[k] = float(np.mean(vals)) if vals else float("nan")
    return out


def metrics_table(rows: Dict[str, Dict[str, float]]) -> str:
    head = "| agent | episodes | % Fixed Strict | % success | % fixed | energy remaining | newly misplaced | steps |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in rows.items():
        lines.append(
            f"| {name} | {int(s['episodes'])} | {100 * s['unshuffle/prop_fixed_strict']:.1f} | "
            f"{100 * s['unshuffle/success']:.1f} | {100 * s['unshuffle/prop_fixed']:.1f} | "
            f"{s['unshuffle/energy_prop']:.2f} | {s['unshuffle/num_newly_misplaced']:.2f} | "
            f"{s['unshuffle/ep_length']:.1f} |"
        )
    return "\n".join(lines)


def write_submission(results: List[Dict[str, Any]], path: Path) -> None:
    """Leaderboard format: {unique_id: {**task_info, **metrics}} as gzipped JSON (§8)."""
    sub = {}
    for m in results:
        m = dict(m)
        info = m.pop("task_info")
        sub[info["unique_id"]] = {**info, **m}
    with atomic_open(path, "wb", gzip_mtime=0) as f:
        f.write(json.dumps(sub, default=_json_default).encode())


def _json_default(o: Any):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"cannot serialise {type(o).__name__}")


PROG = "python -m rearrange.eval"
DEFAULT_CONFIG = "baseline_configs/one_phase/one_phase_rgb_dagger.py"


def _load_config_checked(path: str, kwargs: Dict[str, Any]):
    check_input_file("--config", path)
    try:
        return load_config(path, kwargs)
    except (TypeError, ValueError, SyntaxError, ImportError) as e:
        raise UsageError(
            f"--config {path} with --config-kwargs {json.dumps(kwargs)}: {e}"
        ) from None


def _check_data(config, stage: str, scenes: Optional[Sequence[str]]) -> None:
    """Load the stage's episodes once: a missing, corrupt or empty split fails here, not mid-run."""
    from .dataset import STAGES, DatasetError

    if stage not in STAGES:
        raise UsageError(f"--stage {stage!r}: unknown stage (expected one of {', '.join(STAGES)})")
    try:
        data = config.stagewise_task_sampler_args(stage, 0, 1)["scenes_to_task_spec_dicts"]
    except DatasetError as e:
        raise UsageError(f"--stage {stage}: {e}") from None
    unknown = [s for s in scenes or () if s not in data]
    if unknown:
        raise UsageError(
            f"--scenes: {unknown[0]!r} has no episodes in stage {stage} "
            f"(it has {len(data)} scenes, e.g. {next(iter(data))})"
        )


def _checkpoint_agent(
    config, path: str, seed: int, card: Optional[Dict[str, Any]] = None
) -> "CheckpointAgent":
    """A checkpoint that is missing, unreadable or made for another model is a user error."""
    check_input_file("--checkpoint", path)
    try:
        return CheckpointAgent(config, path, seed=seed)
    except KeyError as e:
        raise UsageError(
            f"--checkpoint {path}: not an allenact checkpoint (no {e} entry)"
        ) from None
    except RuntimeError as e:
        if "state_dict" in str(e):
            first = str(e).strip().splitlines()[-1].strip()
            hint = (
                f"; its card {card_path(path)} names --config {card['config']} with "
                f"--config-kwargs '{json.dumps(card['config_kwargs'])}'"
                if card
                else ""
            )
            raise UsageError(
                f"--checkpoint {path}: does not fit the config's model ({first}){hint}"
            ) from None
        raise UsageError(f"--checkpoint {path}: not a readable torch checkpoint ({e})") from None
    except (
        EOFError,
        OSError,
        ValueError,
        TypeError,
        AttributeError,
        ImportError,
        pickle.UnpicklingError,
    ) as e:
        raise UsageError(
            f"--checkpoint {path}: not a readable torch checkpoint ({type(e).__name__}: {e})"
        ) from None


def _prepare(args: argparse.Namespace):
    """Every check before the first episode: outputs, numbers, config, data, checkpoint."""
    for flag in ("gif", "submission", "table"):
        if getattr(args, flag) is not None:
            check_output_file(f"--{flag}", getattr(args, flag))
    check_int("--episodes-per-scene", args.episodes_per_scene, 1)
    if "checkpoint" in args.agents and not args.checkpoint:
        raise UsageError("--agents checkpoint needs --checkpoint")
    if args.scenes is not None and not args.scenes:
        raise UsageError("--scenes needs at least one scene name")
    explicit = parse_json_object("--config-kwargs", args.config_kwargs)
    card = _card_of(args)
    config_path, kwargs = _config_choice(args.config, explicit, card, args.checkpoint)
    args.config = config_path
    if (
        args.year is not None
    ):  # the official files of that year: <data_dir or data>/<year>/<stage>.pkl.gz
        from .dataset import STAGES, dataset_path

        if args.stage in STAGES:
            kwargs["data_dir"] = str(
                dataset_path(args.stage, kwargs.get("data_dir"), args.year).parent
            )
    config = _load_config_checked(args.config, kwargs)
    if card and card.get("config_class") and _same_config(args.config, card):
        if type(config).__name__ != card["config_class"]:
            raise UsageError(
                f"{card_path(args.checkpoint)}: field 'config_class' is "
                f"{card['config_class']!r} but {args.config} defines {type(config).__name__!r}"
            )
    _check_data(config, args.stage, args.scenes)
    ckpt_agent = (
        _checkpoint_agent(config, args.checkpoint, args.seed, card)
        if "checkpoint" in args.agents
        else None
    )
    return config, ckpt_agent


def _card_of(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """The checkpoint's card (`<checkpoint>.json`), when a checkpoint is evaluated and has one."""
    if "checkpoint" not in args.agents or not args.checkpoint:
        return None
    try:
        card = read_card(args.checkpoint)
    except CardError as e:
        raise UsageError(str(e)) from None
    if card is not None and card["task"] != "rearrangement":
        raise UsageError(
            f"--checkpoint {args.checkpoint}: its card {card_path(args.checkpoint)} says "
            f"task {card['task']!r}; evaluate it with its own evaluator"
        )
    return card


def _resolve_repo_path(path: str) -> str:
    """A card names repository-relative paths; they work from any working directory."""
    return path if Path(path).exists() or Path(path).is_absolute() else str(REPO_ROOT / path)


def _same_config(path: str, card: Dict[str, Any]) -> bool:
    return Path(path).resolve() == Path(_resolve_repo_path(card["config"])).resolve()


def _config_choice(
    flag: Optional[str],
    explicit: Dict[str, Any],
    card: Optional[Dict[str, Any]],
    checkpoint: Optional[str],
) -> tuple:
    """(config path, kwargs): --config, else the card's config, else the default; the card's
    kwargs apply to its own config only, and --config-kwargs entries replace them."""
    if card is None:
        return flag or DEFAULT_CONFIG, explicit
    path = flag or _resolve_repo_path(card["config"])
    if not _same_config(path, card):
        return path, explicit
    kwargs = {**card["config_kwargs"], **explicit}
    print(
        f"{PROG}: config {card['config']} with kwargs {json.dumps(kwargs)} "
        f"(from {card_path(checkpoint)})",
        file=sys.stderr,
    )
    return path, kwargs


def _official_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group(
        "official checkpoints",
        "--official NAME fetches the official checkpoint of baseline_configs/**/NAME.py and the "
        "official split of --year (default 2023) and --stage, then evaluates it; mirrors: "
        f"${CHECKPOINT_BASE_URL_ENV}, ${DATA_BASE_URL_ENV}",
    )
    g.add_argument("--official", metavar="NAME", help=f"one of: {', '.join(CHECKPOINTS)}")
    g.add_argument(
        "--list", action="store_true", help="the known configs and where their files would go"
    )
    g.add_argument("--dry-run", action="store_true", help="say what would be fetched and run")
    g.add_argument("--fetch-only", action="store_true", help="fetch the files, evaluate nothing")
    g.add_argument(
        "--backend",
        choices=BACKENDS,
        help=f"simulator (default {DEFAULT_BACKEND}; 'thor' for leaderboard-comparable numbers)",
    )
    g.add_argument("--data-root", type=Path, default=None, help="official splits (default data/)")
    g.add_argument(
        "--checkpoint-dir", type=Path, default=None, help="default pretrained_model_ckpts/"
    )
    g.add_argument("--no-progress", action="store_true", help="no download progress bar")


def _backend_of(args: argparse.Namespace) -> str:
    return args.backend or DEFAULT_BACKEND


def _official(args: argparse.Namespace) -> Optional[int]:
    """--official/--list: an exit status when done here, None to go on and evaluate."""
    from common.download import DownloadError

    from . import official_eval as oe

    year = args.year or 2023
    where = dict(data_root=args.data_root, ckpt_dir=args.checkpoint_dir)
    with report_usage_errors(PROG):
        if args.official and (args.checkpoint or args.config):
            raise UsageError(
                f"--official {args.official} names its own config and checkpoint; "
                "drop --config/--checkpoint"
            )
        if args.list:
            names = [args.official] if args.official else list(CHECKPOINTS)
            print("\n".join(oe.list_lines(names, year, args.stage, **where)))
            return 0
        p = oe.plan(args.official, year, args.stage, _backend_of(args), **where)
        if args.dry_run:
            print("\n".join(oe.dry_run_lines(p)))
            return 0
        check_output_dir("--data-root", p.data_root)
        check_output_dir("--checkpoint-dir", p.checkpoint.parent)
    try:
        oe.fetch(p, progress=not args.no_progress)
    except DownloadError as e:
        print_error(PROG, e)
        return 1
    if args.fetch_only:
        return 0
    if p.backend == DEFAULT_BACKEND:
        print(oe.LEADERBOARD_WARNING, file=sys.stderr)
    args.config, args.checkpoint, args.year = str(p.config), str(p.checkpoint), p.year
    kwargs = {
        "data_dir": str(p.data_root),
        **parse_json_object("--config-kwargs", args.config_kwargs),
    }
    args.config_kwargs = json.dumps(kwargs)
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--config",
        help="experiment config file (default: the checkpoint's card, else " + DEFAULT_CONFIG + ")",
    )
    ap.add_argument(
        "--config-kwargs",
        default="{}",
        help="JSON kwargs for the config; they replace entries of the checkpoint card's kwargs",
    )
    ap.add_argument("--checkpoint")
    ap.add_argument(
        "--agents",
        nargs="+",
        default=["checkpoint", "random", "done"],
        choices=["checkpoint", "random", "done", "expert"],
    )
    ap.add_argument("--stage", default="val")
    ap.add_argument(
        "--year",
        type=int,
        choices=YEARS,
        help="read the official split of that year (python -m rearrange.download data) "
        "from <data_dir or data>/<year>/<stage>.pkl.gz instead of our thor_lite one",
    )
    ap.add_argument("--episodes-per-scene", type=int, default=None)
    ap.add_argument("--scenes", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gif", type=Path)
    ap.add_argument("--submission", type=Path)
    ap.add_argument("--table", type=Path)
    _official_arguments(ap)
    proto = ap.add_argument_group(
        "learning protocol (rearrange/protocol.py)",
        "--protocol: the agent, its goal-blind self, the scan-and-open heuristic (fitted on "
        "--train-episodes), random and done on the --held-out episodes, paired comparisons",
    )
    proto.add_argument("--protocol", action="store_true")
    proto.add_argument("--held-out", type=Path, help="the held-out episode file (.pkl.gz)")
    proto.add_argument("--train-episodes", type=Path, help="the agent's training episode file")
    proto.add_argument("--json", type=Path, help="write the protocol report (JSON) here")
    proto.add_argument("--processes", type=int, default=1)
    args = ap.parse_args(argv)
    if args.official or args.list:
        rc = _official(args)
        if rc is not None:
            return rc
    elif args.dry_run or args.fetch_only:
        with report_usage_errors(PROG):
            raise UsageError("--dry-run and --fetch-only go with --official <config name>")
    if args.backend:
        merged = {
            "backend": args.backend,
            **parse_json_object("--config-kwargs", args.config_kwargs),
        }
        args.config_kwargs = json.dumps(merged)
    if args.protocol:
        return protocol_main(args)
    with report_usage_errors(PROG):
        config, ckpt_agent = _prepare(args)
    rows: Dict[str, Dict[str, float]] = {}
    with stop_children_on_signals(PROG):
        for name in args.agents:
            if name == "checkpoint":
                agent: Agent = ckpt_agent
            else:
                agent = {
                    "random": lambda: RandomAgent(args.seed),
                    "done": DoneAgent,
                    "expert": ExpertAgent,
                }[name]()
            res = run_agent(
                config,
                agent,
                args.stage,
                args.episodes_per_scene,
                args.scenes,
                gif_path=args.gif if name == args.agents[0] else None,
                desc=name,
            )
            rows[name] = summarize(res)
            if name == args.agents[0] and args.submission:
                write_submission(res, args.submission)
    table = metrics_table(rows)
    print(table)
    if args.official and _backend_of(args) == DEFAULT_BACKEND:
        print(LEADERBOARD_WARNING)
    if args.table:
        write_text_atomic(args.table, table + "\n")
    return 0


def protocol_main(args: argparse.Namespace) -> int:
    """--protocol: the five-row table (markdown) and, with --json, the full report."""
    from . import protocol as proto

    with report_usage_errors(PROG):
        for flag in ("checkpoint", "held_out", "train_episodes"):
            if getattr(args, flag) is None:
                raise UsageError(f"--protocol needs --{flag.replace('_', '-')}")
        for flag in ("table", "json"):
            if getattr(args, flag) is not None:
                check_output_file(f"--{flag}", getattr(args, flag))
        check_int("--processes", args.processes, 1)
        kwargs = parse_json_object("--config-kwargs", args.config_kwargs)
        source, held, train, horizon = proto.prepare(
            args.checkpoint,
            args.held_out,
            args.train_episodes,
            Path.cwd(),
            args.config,
            kwargs,
            args.seed,
        )
    with stop_children_on_signals(PROG):
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
    table = proto.protocol_table(report) + "\n\n" + proto.verdict_words(report)
    print(table)
    if args.table:
        write_text_atomic(args.table, table + "\n")
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=1, default=_json_default) + "\n")
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

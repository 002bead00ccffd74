"""The learning protocol: an agent is compared with what it could do without learning the task.

Every learning table has five rows on the same held-out episodes: the agent; the agent with its
goal view replaced by its current view (goal-blind: what it does without ever comparing goal and
current); a no-learning heuristic whose only choices are fitted on the training episodes
(`ScanAndOpen`); a seeded random agent; "done" at step 0. Each baseline is compared with the
agent episode by episode: exact McNemar on success and a paired bootstrap of the Fixed Strict
difference, with 95 % intervals. The held-out and training files are named with their sha256
in the results, so a table says exactly which episodes it was measured on.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from common.procs import ignore_sigint
from common.stats import (
    bootstrap_ratio_ci,
    mcnemar_exact,
    paired_bootstrap_mean_difference,
    wilson_interval,
)

from .constants import snake_case
from .harness import Act

CURRENT_UUID = "rgb"  # RGBRearrangeSensor: the unshuffle agent's own frame
GOAL_UUID = "unshuffled_rgb"  # UnshuffledRGBRearrangeSensor: the goal room from the same pose
AGENT, GOAL_BLIND, HEURISTIC, RANDOM, DONE = (
    "agent",
    "agent, goal := current view",
    "scan-and-open heuristic",
    "random",
    "done at step 0",
)
ROWS = (AGENT, GOAL_BLIND, HEURISTIC, RANDOM, DONE)
BOOTSTRAP_SEED = 0
Reset = Callable[[Any], None]
Episodes = "OrderedDict[str, List[Dict[str, Any]]]"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def goal_blind(act: Act) -> Act:
    """`act` fed its current view where it reads the goal view: an agent that uses the goal
    acts differently under this wrapper; one that ignores it acts the same."""

    def blind(task, obs: Dict[str, Any]) -> int:
        if CURRENT_UUID not in obs or GOAL_UUID not in obs:
            raise KeyError(f"goal-blind needs observations {CURRENT_UUID!r} and {GOAL_UUID!r}")
        return act(task, {**obs, GOAL_UUID: obs[CURRENT_UUID]})

    return blind


# --- the no-learning heuristic ----------------------------------------------------------------


def _type_of(entry: Dict[str, Any]) -> str:
    """Object type from an episode entry (`objectId` "Type|x|y|z", else name "Type_hash")."""
    oid = entry.get("objectId")
    return oid.split("|")[0] if oid else str(entry["name"]).split("_")[0]


def changed_open_types(ep: Dict[str, Any]) -> List[str]:
    """Types of the objects whose openness the episode changes."""
    return [
        _type_of(o)
        for o in ep.get("openable_data", [])
        if abs(float(o["start_openness"]) - float(o["target_openness"])) > 1e-6
    ]


@dataclass
class ScanAndOpen:
    """Turn up to `turns` times; as soon as an openable of the scene's most often changed type
    (counted on training episodes only) is in view, `open_by_type` it; then "done".

    A scene without training episodes uses the type most often changed over all training
    episodes among the openable types the scene has."""

    scene_types: Dict[str, str]
    overall: Tuple[str, ...]  # training types, most often changed first
    turns: int = 3
    turn_action: str = "rotate_right"
    _state: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def fit(cls, train: Episodes, turns: int = 3) -> "ScanAndOpen":
        per_scene = {}
        total: Counter = Counter()
        for scene, eps in train.items():
            c = Counter(t for ep in eps for t in changed_open_types(ep))
            total.update(c)
            if c:
                per_scene[scene] = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        if not total:
            raise ValueError("no openness change in the training episodes: nothing to fit")
        overall = tuple(t for t, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))
        return cls(per_scene, overall, turns)

    def reset(self, task) -> None:
        scene = task.task_info["scene"]
        target = self.scene_types.get(scene)
        if target is None:
            present = {
                o["objectType"] for o in task.env.last_event.metadata["objects"] if o["openable"]
            }
            target = next((t for t in self.overall if t in present), self.overall[0])
        self._state = {"type": target, "turned": 0, "opened": False}

    def act(self, task, obs: Dict[str, Any]) -> int:
        s, actions = self._state, task.discrete_actions
        if s["opened"]:
            return actions.index("done")
        in_view = any(
            o["visible"] and o["openable"] and o["objectType"] == s["type"]
            for o in task.env.last_event.metadata["objects"]
        )
        name = f"open_by_type_{snake_case(s['type'])}"
        if in_view and name in actions:
            s["opened"] = True
            return actions.index(name)
        if s["turned"] < self.turns:
            s["turned"] += 1
            return actions.index(self.turn_action)
        return actions.index("done")

    def describe(self) -> Dict[str, Any]:
        return {
            "rule": f"turn ({self.turn_action}) up to {self.turns} times; when an openable of the "
            "scene's most often changed training type is in view, open_by_type it; done",
            "scene_types": dict(sorted(self.scene_types.items())),
            "overall": list(self.overall),
        }


# --- running the five rows ---------------------------------------------------------------------


@dataclass(frozen=True)
class AgentSource:
    """How a worker builds the agent: a checkpoint of scripts/train_rearrange_curriculum.py
    (argmax policy) or an allenact checkpoint with its config (sampled, as `--eval`)."""

    checkpoint: Path
    repo: Path
    config: Optional[str] = None  # allenact checkpoints only
    config_kwargs: Optional[Dict[str, Any]] = None
    seed: int = 0


def _agent_act(source: AgentSource) -> Tuple[Any, Act, Reset]:
    """(config, act, reset) of the agent in this process (torch on one thread: small policy
    steps, more threads fight the simulator)."""
    import torch

    torch.set_num_threads(1)
    if source.config is None:
        from .curriculum import MODEL_UUIDS, load_agent
        from .imitation import PolicyRunner

        config, model, _ = load_agent(source.checkpoint, source.repo)
        runner = PolicyRunner(model, MODEL_UUIDS)
        return config, (lambda task, obs: runner.act(obs)), (lambda task: runner.reset())
    from .eval import CheckpointAgent, load_config

    config = load_config(source.config, source.config_kwargs)
    agent = CheckpointAgent(config, str(source.checkpoint), seed=source.seed)
    return config, agent.act, agent.reset


def _run_row(job: Tuple[str, AgentSource, Any, int, int, Optional[ScanAndOpen]]):
    """One row over the held-out episodes, in a worker process (module level, for a pool)."""
    from .curriculum import done_act, noop_reset, run_episodes, seeded_random_act

    name, source, held, horizon, seed, heuristic = job
    if name in (AGENT, GOAL_BLIND):
        config, act, reset = _agent_act(source)
    elif source.config is None:
        from .curriculum import load_agent

        config = load_agent(source.checkpoint, source.repo)[0]
    else:
        from .eval import load_config

        config = load_config(source.config, source.config_kwargs)
    if name == GOAL_BLIND:
        act = goal_blind(act)
    elif name == HEURISTIC:
        act, reset = heuristic.act, heuristic.reset
    elif name == RANDOM:
        act, reset = seeded_random_act(seed), noop_reset
    elif name == DONE:
        act, reset = done_act, noop_reset
    return run_episodes(config, held, act, reset, horizon, desc=name)


def play_rows(
    source: AgentSource,
    held: Episodes,
    heuristic: ScanAndOpen,
    horizon: Optional[int],
    seed: int,
    processes: int = 1,
) -> Dict[str, List[Dict[str, Any]]]:
    """Per-episode results of the five rows. Each row plays its episodes in the serial order in
    its own process, so the numbers do not depend on `processes`; the longest rows go first."""
    order = (RANDOM, AGENT, GOAL_BLIND, HEURISTIC, DONE)
    jobs = [(name, source, held, horizon, seed, heuristic) for name in order]
    if processes > 1:
        import multiprocessing as mp

        with mp.get_context("forkserver").Pool(
            min(processes, len(jobs)), initializer=ignore_sigint
        ) as pool:
            runs = pool.map(_run_row, jobs, chunksize=1)
    else:
        runs = [_run_row(job) for job in jobs]
    by_name = dict(zip(order, runs))
    return {name: by_name[name] for name in ROWS}


# --- the table ---------------------------------------------------------------------------------


def _rate(values: Sequence[float], seed: int) -> Dict[str, Any]:
    """Mean in % with a 95 % interval: Wilson for 0/1 values, else a percentile bootstrap."""
    v = np.asarray(values, float)
    n = len(v)
    if n == 0:
        return {"pct": float("nan"), "ci": [float("nan")] * 2, "count": 0}
    if np.all((v == 0) | (v == 1)):
        lo, hi = wilson_interval(int(v.sum()), n)
    else:
        lo, hi = bootstrap_ratio_ci(v, np.ones(n), seed)
    return {"pct": 100 * float(v.mean()), "ci": [100 * lo, 100 * hi], "count": float(v.sum())}


def _paired(results: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Dict[Tuple[str, Any], Dict]]:
    """Per-row results keyed by episode; every row must hold exactly the same episodes."""
    keyed = {n: {(r["scene"], r["index"]): r for r in res} for n, res in results.items()}
    keys = set(keyed[AGENT])
    for name, rows in keyed.items():
        if set(rows) != keys or len(rows) != len(results[name]):
            raise ValueError(f"row {name!r} was not played on exactly the agent's episodes")
    return keyed


def compare(results: Dict[str, List[Dict[str, Any]]], seed: int = BOOTSTRAP_SEED) -> Dict:
    """Rows (rates with 95 % intervals) and the agent against each other row, paired by episode."""
    keyed = _paired(results)
    keys = sorted(keyed[AGENT], key=str)
    col = {
        n: {k: [keyed[n][e][k] for e in keys] for k in ("fixed_strict", "success", "steps")}
        for n in keyed
    }
    rows = {
        n: {
            "episodes": len(keys),
            "fixed_strict": _rate(col[n]["fixed_strict"], seed),
            "success": _rate(col[n]["success"], seed),
            "mean_steps": float(np.mean(col[n]["steps"])) if keys else float("nan"),
        }
        for n in ROWS
    }
    comparisons = {}
    a_s = np.asarray(col[AGENT]["success"]) > 0.5
    for n in ROWS[1:]:
        b_s = np.asarray(col[n]["success"]) > 0.5
        only_a, only_b = int(np.sum(a_s & ~b_s)), int(np.sum(b_s & ~a_s))
        d_fs, ci_fs = paired_bootstrap_mean_difference(
            col[AGENT]["fixed_strict"], col[n]["fixed_strict"], seed
        )
        d_s, ci_s = paired_bootstrap_mean_difference(a_s, b_s, seed)
        comparisons[n] = {
            "fixed_strict_diff_pct": 100 * d_fs,
            "fixed_strict_diff_ci": [100 * ci_fs[0], 100 * ci_fs[1]],
            "success_diff_pct": 100 * d_s,
            "success_diff_ci": [100 * ci_s[0], 100 * ci_s[1]],
            "agent_only_successes": only_a,
            "row_only_successes": only_b,
            "mcnemar_p": mcnemar_exact(only_a, only_b),
            "same_actions": _same_actions(keyed[AGENT], keyed[n], keys),
            "verdict": _verdict(ci_fs, only_a, only_b),
        }
    return {"rows": rows, "comparisons": comparisons}


def _same_actions(a: Dict, b: Dict, keys: Sequence) -> Optional[int]:
    """Episodes where both rows took identical action sequences (None if not recorded)."""
    if not keys or "actions" not in a[keys[0]]:
        return None
    return int(sum(a[k]["actions"] == b[k]["actions"] for k in keys))


def _verdict(ci_fs: Tuple[float, float], only_a: int, only_b: int) -> str:
    """ "better"/"worse" only when the Fixed Strict interval excludes 0 and McNemar agrees at 5 %."""
    p = mcnemar_exact(only_a, only_b)
    if ci_fs[0] > 0 and (p < 0.05 or only_a + only_b == 0):
        return "better"
    if ci_fs[1] < 0 and (p < 0.05 or only_a + only_b == 0):
        return "worse"
    return "not distinguishable"


def protocol_table(report: Dict[str, Any]) -> str:
    """Markdown: the five rows, then the agent minus each row, paired over the same episodes."""

    def cell(s: Dict[str, Any]) -> str:
        return f"{s['pct']:.1f} [{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]"

    lines = [
        "| row | episodes | % Fixed Strict [95% CI] | % success [95% CI] | successes | mean steps "
        "| agent - row: Δ % Fixed Strict [95% CI] | agent-only / row-only successes (McNemar p) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in report["rows"].items():
        c = report["comparisons"].get(name)
        diff = (
            f"{c['fixed_strict_diff_pct']:+.1f} [{c['fixed_strict_diff_ci'][0]:+.1f}, "
            f"{c['fixed_strict_diff_ci'][1]:+.1f}]"
            if c
            else "-"
        )
        mc = (
            f"{c['agent_only_successes']} / {c['row_only_successes']} ({c['mcnemar_p']:.2g})"
            if c
            else "-"
        )
        lines.append(
            f"| {name} | {r['episodes']} | {cell(r['fixed_strict'])} | {cell(r['success'])} | "
            f"{r['success']['count']:.0f} | {r['mean_steps']:.1f} | {diff} | {mc} |"
        )
    return "\n".join(lines)


def verdict_words(report: Dict[str, Any]) -> str:
    """What the table shows, in words: for each baseline, better / worse / not distinguishable."""
    parts = []
    for name, c in report["comparisons"].items():
        v = c["verdict"]
        if v == "better":
            parts.append(f'beats "{name}" beyond the 95 % intervals')
        elif v == "worse":
            parts.append(f'is WORSE than "{name}" beyond the 95 % intervals')
        else:
            parts.append(f'does NOT beat "{name}" beyond the 95 % intervals')
        if name == GOAL_BLIND and c["same_actions"] is not None:
            parts[-1] += (
                f"; it takes identical actions with and without its goal view in "
                f"{c['same_actions']} of {report['rows'][AGENT]['episodes']} episodes"
            )
    return "The agent " + "; ".join(parts) + "."


def evaluate_protocol(
    source: AgentSource,
    held_file: Path,
    held: Episodes,
    train_file: Path,
    train: Episodes,
    horizon: Optional[int],
    seed: int,
    processes: int = 1,
) -> Dict[str, Any]:
    """The whole protocol: fit the heuristic on `train`, play the five rows on `held`, compare.
    The returned report (JSON-ready) names both files with their sha256."""
    heuristic = ScanAndOpen.fit(train)
    results = play_rows(source, held, heuristic, horizon, seed, processes)
    report = compare(results)
    report.update(overlap=overlap(held, train))
    report.update(
        held_out={
            "file": str(held_file),
            "sha256": sha256_of(held_file),
            "scenes": list(held),
            "episodes": sum(len(v) for v in held.values()),
        },
        training_episodes={
            "file": str(train_file),
            "sha256": sha256_of(train_file),
            "scenes": list(train),
            "episodes": sum(len(v) for v in train.values()),
        },
        heuristic=heuristic.describe(),
        horizon=horizon,
        random_seed=seed,
        bootstrap_seed=BOOTSTRAP_SEED,
        episodes={n: results[n] for n in ROWS},
    )
    return report


def _start(ep: Dict[str, Any]) -> Tuple:
    p = ep["agent_position"]
    return round(p["x"], 3), round(p["z"], 3), round(float(ep["agent_rotation"])) % 360


def overlap(held: Episodes, train: Episodes) -> Dict[str, Any]:
    """What the held-out episodes share with the training ones: scenes, and start poses (scene,
    x, z, yaw) - held-out episodes in training scenes measure new placements, not new rooms."""
    starts = {(s, _start(e)) for s, eps in train.items() for e in eps}
    return {
        "scenes_in_training": sorted(set(held) & set(train)),
        "start_poses_in_training": sum(
            (s, _start(e)) in starts for s, eps in held.items() for e in eps
        ),
    }


def slice_inputs(state: Dict[str, Any], held_data: Episodes, train_data: Episodes):
    """(held, train, horizon) of a scripts/train_rearrange_curriculum.py checkpoint: its slice's
    scenes (held-out scenes for the held-out part), kinds and per-scene counts taken from the
    two files, and its horizon."""
    from .curriculum import SliceSpec, episode_kind

    spec = SliceSpec(**state["slice"])

    def part(data: Episodes, per_scene: int, scenes: Sequence[str]) -> Episodes:
        return OrderedDict(
            (s, [e for e in data[s] if episode_kind(e) in spec.kinds][:per_scene])
            for s in scenes
            if s in data
        )

    return (
        part(held_data, spec.held_out_per_scene, spec.eval_scenes),
        part(train_data, spec.train_per_scene, spec.scenes),
        int(spec.max_steps),
    )


def prepare(
    checkpoint: Path,
    held_file: Path,
    train_file: Path,
    repo: Path,
    config: Optional[str] = None,
    config_kwargs: Optional[Dict[str, Any]] = None,
    seed: int = 0,
) -> Tuple[AgentSource, Episodes, Episodes, Optional[int]]:
    """Everything checked before the first episode: (source, held, train, horizon). A checkpoint
    of scripts/train_rearrange_curriculum.py names its config and slice; any other is an allenact
    checkpoint of `config`, played on the whole files at the config's horizon. Raises
    common.cli.UsageError with one line on bad input."""
    import torch

    from common.cli import UsageError, check_input_file

    from .dataset import DatasetError, load_dataset

    for flag, path in (
        ("--checkpoint", checkpoint),
        ("--held-out", held_file),
        ("--train-episodes", train_file),
    ):
        check_input_file(flag, path)
    try:
        held_data, train_data = load_dataset(held_file), load_dataset(train_file)
    except (DatasetError, OSError, EOFError, ValueError) as e:
        raise UsageError(
            f"--held-out/--train-episodes: not a rearrangement episode file ({e})"
        ) from None
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    except Exception as e:  # any unreadable file is the user's input, reported in one line
        raise UsageError(
            f"--checkpoint {checkpoint}: not a readable torch checkpoint ({e})"
        ) from None
    if isinstance(state, dict) and "slice" in state and "config" in state:
        held, train, horizon = slice_inputs(state, held_data, train_data)
        source = AgentSource(Path(checkpoint), Path(repo))
    elif config is None:
        raise UsageError(f"--checkpoint {checkpoint}: names no config and slice; pass --config")
    else:
        held, train, horizon = held_data, train_data, None
        source = AgentSource(Path(checkpoint), Path(repo), config, config_kwargs or {}, seed)
    if not any(held.values()):
        raise UsageError(f"--held-out {held_file}: holds no episodes of the agent's slice")
    try:
        ScanAndOpen.fit(train)
    except ValueError as e:
        raise UsageError(f"--train-episodes {train_file}: {e}") from None
    return source, held, train, horizon


__all__ = [
    "AgentSource",
    "ScanAndOpen",
    "ROWS",
    "compare",
    "changed_open_types",
    "evaluate_protocol",
    "goal_blind",
    "play_rows",
    "prepare",
    "protocol_table",
    "sha256_of",
    "verdict_words",
]

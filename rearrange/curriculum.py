"""An easier, stated slice of the 1-phase task, and agent evaluation on it with 95 % CIs.

The slice: one-object episodes (one moved object or one openness change, as
`rearrange.gen` makes its first 10 indices) of a few training scenes, with a shorter horizon.
Training and held-out episodes come from disjoint generator seeds; by default of the same
scenes (held-out numbers then measure new placements and starts), or, with `held_out_scenes`,
of other scenes (e.g. the official val scenes), so that they measure rooms never trained on.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from common.procs import ignore_sigint
from common.stats import wilson_interval

from .dataset import load_dataset, save_dataset
from .gen import EpisodeGenerator, stage_seed

MODEL_UUIDS = ("rgb", "unshuffled_rgb")  # the 1-phase RGB configs' model inputs
ONE_OBJECT_INDICES = tuple(range(10))  # rearrange.gen: index < 10 changes exactly one object
HELD_OUT_SEED_OFFSET = 1_000_003  # held-out generator seeds never meet the training ones


@dataclass(frozen=True)
class SliceSpec:
    """What the slice is; `max_steps` is its unshuffle horizon (the official one is 500)."""

    scenes: Tuple[str, ...]
    train_per_scene: int
    held_out_per_scene: int
    kinds: Tuple[str, ...] = ("move", "open")
    max_steps: int = 50
    max_expert_steps: int = (
        0  # > 0: keep only episodes the expert solves in at most this many steps
    )
    held_out_scenes: Tuple[str, ...] = ()  # empty: held-out episodes come from `scenes`

    def __post_init__(self) -> None:
        shared = sorted(set(self.scenes) & set(self.held_out_scenes))
        if shared:
            raise ValueError(f"held-out scenes must not be training scenes: {', '.join(shared)}")
        object.__setattr__(self, "scenes", tuple(self.scenes))
        object.__setattr__(self, "held_out_scenes", tuple(self.held_out_scenes))

    @property
    def eval_scenes(self) -> Tuple[str, ...]:
        """The scenes the held-out episodes come from."""
        return self.held_out_scenes or self.scenes

    def describe(self) -> str:
        easy = (
            f", kept where the expert needs at most {self.max_expert_steps} steps (the changed object "
            f"is in reach from the start)"
            if self.max_expert_steps
            else ""
        )
        if self.held_out_scenes:
            return (
                f"one-object episodes ({' + '.join(self.kinds)}); {self.train_per_scene} training "
                f"episodes per scene of {', '.join(self.scenes)}; {self.held_out_per_scene} held-out "
                f"episodes per scene of the unseen scenes {', '.join(self.held_out_scenes)} "
                f"(disjoint generator seeds){easy}; horizon {self.max_steps} steps"
            )
        return (
            f"one-object episodes ({' + '.join(self.kinds)}) of {', '.join(self.scenes)}; "
            f"{self.train_per_scene} training and {self.held_out_per_scene} held-out episodes per scene "
            f"(disjoint generator seeds){easy}; horizon {self.max_steps} steps"
        )


def episode_kind(ep: Dict[str, Any]) -> str:
    return "open" if ep.get("open_diff_count", 0) else "move"


def _generate(scene: str, count: int, seed_base: int, kinds: Sequence[str]) -> List[Dict[str, Any]]:
    """`count` episodes of `scene` from generator seeds seed_base, seed_base + 1, ...; in each,
    only the one-object indices of the wanted kinds (rearrange.gen: odd indices change an
    openness where the scene has openables, even ones move an object)."""
    eps: List[Dict[str, Any]] = []
    gen = EpisodeGenerator("train", seed=seed_base)
    try:
        k = 0
        while len(eps) < count and k < 100:
            gen.seed = seed_base + k
            wanted = [i for i in ONE_OBJECT_INDICES if ("open" if i % 2 else "move") in kinds]
            for ep in gen.scene_episodes(scene, wanted[: count - len(eps)]):
                if episode_kind(ep) in kinds:
                    ep["index"] = len(eps)
                    eps.append(ep)
            k += 1
    finally:
        gen.env.stop()
    if len(eps) < count:
        raise RuntimeError(
            f"{scene}: only {len(eps)} one-object episodes of kinds {kinds} in 100 seeds"
        )
    return eps


def _select(data, spec: SliceSpec, per_scene: int, scenes: Sequence[str]):
    """The first `per_scene` episodes of the wanted kinds of each of `scenes`, or None if short."""
    out = OrderedDict()
    for scene in scenes:
        eps = [e for e in data.get(scene, []) if episode_kind(e) in spec.kinds][:per_scene]
        if len(eps) < per_scene:
            return None
        out[scene] = eps
    return out


def _shortfall(data, spec: SliceSpec, per_scene: int, scenes: Sequence[str]) -> Optional[str]:
    """Why `data` cannot hold `per_scene` episodes of each of `scenes` (first short one), or None."""
    for scene in scenes:
        have = sum(episode_kind(e) in spec.kinds for e in data.get(scene, []))
        if have < per_scene:
            return f"{scene} has {have} episodes of kinds {'+'.join(spec.kinds)}, the slice asks for {per_scene}"
    return None


class SliceDataError(ValueError):
    """The slice files exist but do not hold the requested slice (they are never overwritten)."""


def held_out_of(spec: SliceSpec, data) -> "OrderedDict[str, List[Dict[str, Any]]]":
    """The slice's part of a held-out file (its scenes and kinds, at most its count per scene)."""
    return OrderedDict(
        (s, [e for e in data[s] if episode_kind(e) in spec.kinds][: spec.held_out_per_scene])
        for s in spec.eval_scenes
        if s in data
    )


def slice_episodes(spec: SliceSpec, out_dir: Path):
    """(train, held-out) episodes of the slice from the files under `out_dir`, or None when
    neither file exists. Raises SliceDataError when they exist but do not hold the slice (a
    narrower slice - fewer scenes, kinds or episodes - is a subset), so that asking for more
    episodes than a tracked file holds never regenerates and overwrites it."""
    paths = {"train": Path(out_dir) / "train.pkl.gz", "val": Path(out_dir) / "val.pkl.gz"}
    present = [p for p in paths.values() if p.exists()]
    if not present:
        return None
    if len(present) == 1:
        raise SliceDataError(
            f"{present[0]} exists without its partner {(set(paths.values()) - set(present)).pop()}; "
            f"generate the slice into a new folder (scripts/train_rearrange_curriculum.py --data-dir)"
        )
    found = []
    for part, per_scene, scenes in (
        ("train", spec.train_per_scene, spec.scenes),
        ("val", spec.held_out_per_scene, spec.eval_scenes),
    ):
        data = load_dataset(paths[part])
        why = _shortfall(data, spec, per_scene, scenes)
        if why is not None:
            raise SliceDataError(
                f"{paths[part]}: {why}; existing slice files are never overwritten: generate this "
                f"slice into a new folder (scripts/train_rearrange_curriculum.py --data-dir)"
            )
        found.append(_select(data, spec, per_scene, scenes))
    return found[0], found[1]


def make_slice(spec: SliceSpec, out_dir: Path):
    """(train, held-out) episodes of the slice: read from `out_dir` (`train.pkl.gz`,
    `val.pkl.gz`) when the files exist, else generated into it (generation is seeded, so the
    episodes never change)."""
    found = slice_episodes(spec, out_dir)
    if found is not None:
        return found
    base = stage_seed("train")
    train: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    val: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    for scene in tqdm(spec.scenes, desc="generate slice (train)", unit="scene"):
        train[scene] = _generate(scene, spec.train_per_scene, base + 1, spec.kinds)
    for scene in tqdm(spec.eval_scenes, desc="generate slice (held-out)", unit="scene"):
        val[scene] = _generate(
            scene, spec.held_out_per_scene, base + HELD_OUT_SEED_OFFSET, spec.kinds
        )
        for ep in val[scene]:
            ep["stage"] = "val"
    save_dataset(train, Path(out_dir) / "train.pkl.gz")
    save_dataset(val, Path(out_dir) / "val.pkl.gz")
    return train, val


def episode_key(task) -> Tuple[str, Any]:
    """(scene, index) of a task: samplers shuffle or reverse episodes, so never go by order."""
    return task.task_info["scene"], task.task_info["index"]


def expert_steps(config, episodes) -> Dict[Tuple[str, Any], int]:
    """How many steps the expert needs for each episode, "done" included, by (scene, index)."""
    from .imitation import EXPERT_UUID, sampler_for

    sampler = sampler_for(config, episodes, stage="train")
    out = {}
    try:
        for _ in tqdm(
            range(sum(len(v) for v in episodes.values())), desc="expert lengths", unit="ep"
        ):
            task = sampler.next_task()
            obs, n = task.get_observations(), 0
            while not task.is_done():
                obs, n = task.step(int(obs[EXPERT_UUID][0])).observation, n + 1
            out[episode_key(task)] = n
    finally:
        sampler.close()
    return out


def keep_short(config, episodes, max_expert_steps: int):
    """Only the episodes the expert solves in at most `max_expert_steps` steps."""
    lengths = expert_steps(config, episodes)
    kept = OrderedDict(
        (s, [e for e in eps if lengths[(s, e["index"])] <= max_expert_steps])
        for s, eps in episodes.items()
    )
    return OrderedDict((s, v) for s, v in kept.items() if v)


def run_episodes(
    config,
    episodes,
    act: Callable[[Any, Dict[str, Any]], int],
    reset: Callable[[Any], None],
    max_steps: int,
    desc: str,
    frames: Optional[List[np.ndarray]] = None,
) -> List[Dict[str, Any]]:
    """Play every episode once with `act(task, obs)`; per-episode metrics plus the episode kind.
    `frames`, when given, receives the first episode's (current view | goal view) frames."""
    from .harness import play_episode
    from .imitation import sampler_for

    sampler = sampler_for(config, episodes, stage="val", max_steps=max_steps)
    kinds = {(s, ep["index"]): episode_kind(ep) for s, eps in episodes.items() for ep in eps}
    results: List[Dict[str, Any]] = []
    try:
        for _ in tqdm(range(len(kinds)), desc=desc, unit="ep"):
            task = sampler.next_task()
            key = episode_key(task)
            kind = kinds[key]
            reset(task)
            record = frames is not None and not results
            m = play_episode(task, act, frames if record else None)
            results.append(
                {
                    "scene": key[0],
                    "index": key[1],
                    "kind": kind,
                    "fixed_strict": float(m["unshuffle/prop_fixed_strict"]),
                    "success": float(m["unshuffle/success"]),
                    "steps": float(m["unshuffle/ep_length"]),
                    "actions": list(m["task_info"]["unshuffle_actions"]),
                }
            )
    finally:
        sampler.close()
    return results


def summarize_ci(results: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """% Fixed Strict and % success with 95 % Wilson CIs (one object: Fixed Strict is 0 or 1).

    With no results the rate and its interval are both NaN (an empty row, "-" in `ci_table`),
    not `wilson_interval`'s "no evidence" (0, 1): results.json has always written it so."""
    n = len(results)
    out: Dict[str, Any] = {"episodes": n}
    for key in ("fixed_strict", "success"):
        k = int(round(sum(r[key] for r in results)))
        lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
        out[key] = {
            "pct": 100.0 * k / n if n else float("nan"),
            "ci": [100 * lo, 100 * hi],
            "count": k,
        }
    out["mean_steps"] = float(np.mean([r["steps"] for r in results])) if n else float("nan")
    return out


def seeded_random_act(seed: int) -> Callable[[Any, Dict[str, Any]], int]:
    rng = random.Random(seed)
    return lambda task, obs: rng.randrange(task.action_space.n)


def done_act(task, obs) -> int:
    return task.discrete_actions.index("done")


def load_slice(out_dir: Path, part: str) -> "OrderedDict[str, List[Dict[str, Any]]]":
    return load_dataset(Path(out_dir) / f"{part}.pkl.gz")


def beats(a: Dict[str, Any], b: Dict[str, Any], key: str = "fixed_strict") -> bool:
    """`a`'s lower CI bound is above `b`'s upper one."""
    return bool(a[key]["ci"][0] > b[key]["ci"][1])


def evaluate_agents(
    config,
    model,
    held,
    horizon: int,
    seed: int,
    trained_name: str = "trained (argmax)",
    preprocess=None,
    baselines: bool = True,
) -> Dict[str, Dict[str, Any]]:
    """The argmax policy of `model`, a seeded uniform random agent and "done at step 0" (unless
    `baselines` is false) on the same held-out episodes; CIs overall and per episode kind."""
    names = [trained_name, "random", "done at step 0"] if baselines else [trained_name]
    runs = [
        _evaluate_one(
            (name, name == trained_name, (config, model, preprocess), held, horizon, seed)
        )
        for name in names
    ]
    return _agent_rows(names, runs)


def evaluate_checkpoint(
    checkpoint: Path,
    repo: Path,
    held,
    horizon: int,
    seed: int,
    trained_name: str,
    processes: int = 1,
) -> Dict[str, Dict[str, Any]]:
    """`evaluate_agents` for a saved agent, the three agents side by side in `processes` worker
    processes (each loads the checkpoint; each agent plays its episodes in the serial order, so
    the numbers do not depend on `processes`)."""
    names = [trained_name, "random", "done at step 0"]
    jobs = [
        (name, name == trained_name, (Path(checkpoint), Path(repo)), held, horizon, seed)
        for name in names
    ]
    if processes > 1:
        import multiprocessing as mp

        with mp.get_context("forkserver").Pool(
            min(processes, len(jobs)), initializer=ignore_sigint
        ) as pool:
            runs = pool.map(_evaluate_one, jobs, chunksize=1)
    else:
        runs = [_evaluate_one(job) for job in jobs]
    return _agent_rows(names, runs)


def _agent_rows(
    names: Sequence[str], runs: Sequence[List[Dict[str, Any]]]
) -> Dict[str, Dict[str, Any]]:
    return {
        name: {
            "all": summarize_ci(res),
            **{k: summarize_ci([x for x in res if x["kind"] == k]) for k in ("move", "open")},
        }
        for name, res in zip(names, runs)
    }


def _evaluate_one(job: Tuple[Any, ...]) -> List[Dict[str, Any]]:
    """One agent over the held-out episodes; `source` is (config, model, preprocess) or, in a
    worker process, (checkpoint, repo) to load them from (module-level, so a pool can run it)."""
    name, is_trained, source, held, horizon, seed = job
    if isinstance(source[0], Path):
        config, model, _ = load_agent(*source)
        preprocess = None
    else:
        config, model, preprocess = source
    if is_trained:
        import torch

        from .imitation import PolicyRunner

        torch.set_num_threads(1)  # small policy steps; more threads fight the simulator
        runner = PolicyRunner(model, MODEL_UUIDS, preprocess)
        act, reset = (lambda task, obs: runner.act(obs)), (lambda task: runner.reset())
    elif name == "random":
        act, reset = seeded_random_act(seed), noop_reset
    else:
        act, reset = done_act, noop_reset
    return run_episodes(config, held, act, reset, horizon, desc=name)


def ci_table(rows: Dict[str, Dict[str, Any]]) -> str:
    """Markdown: % Fixed Strict / % success with [95 % CI] per agent, and per episode kind."""

    def cell(s: Dict[str, Any]) -> str:
        return f"{s['pct']:.1f} [{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]" if s["episodes"] else "-"

    head = (
        "| agent | held-out episodes | % Fixed Strict [95% CI] | % success [95% CI] | "
        "move episodes: % FS | open episodes: % FS | mean steps |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows.items():
        a = r["all"]
        lines.append(
            f"| {name} | {a['episodes']} | {cell({**a['fixed_strict'], 'episodes': a['episodes']})} | "
            f"{cell({**a['success'], 'episodes': a['episodes']})} | "
            f"{cell({**r['move']['fixed_strict'], 'episodes': r['move']['episodes']})} | "
            f"{cell({**r['open']['fixed_strict'], 'episodes': r['open']['episodes']})} | "
            f"{a['mean_steps']:.1f} |"
        )
    return "\n".join(lines)


RESNET_UUIDS = ("rgb_resnet", "unshuffled_rgb_resnet")


def resnet18_features(screen_size: int, seed: int):
    """(preprocess, observation space) turning the two frames into ResNet-18 layer4 maps
    through AllenAct's ResNetPreprocessor; the ResNet is torchvision's, randomly initialised
    from `seed` (ImageNet weights cannot be downloaded here) and frozen, as the official
    configs freeze theirs."""
    import gym
    import torch
    from allenact.embodiedai.preprocessors.resnet import ResNetPreprocessor
    from torchvision.models import resnet18

    def make(pretrained: bool = False, **_: Any):
        torch.manual_seed(seed)
        return resnet18(weights=None)

    side = -(-screen_size // 32)  # layer4 has stride 32
    pres = {
        out: ResNetPreprocessor(
            input_uuids=[inp],
            output_uuid=out,
            input_height=screen_size,
            input_width=screen_size,
            output_height=side,
            output_width=side,
            output_dims=512,
            pool=False,
            torchvision_resnet_model=make,
        )
        for inp, out in zip(MODEL_UUIDS, RESNET_UUIDS)
    }

    def preprocess(obs: Dict[str, "torch.Tensor"]) -> Dict[str, "torch.Tensor"]:
        out = {}
        for p in pres.values():
            x = obs[p.input_uuids[0]]
            flat = p.process({p.input_uuids[0]: x.reshape((-1,) + tuple(x.shape[-3:]))})
            out[p.uuid] = flat.reshape(tuple(x.shape[:-3]) + tuple(flat.shape[1:]))
        return out

    space = gym.spaces.Dict({p.uuid: p.observation_space for p in pres.values()})
    return preprocess, space


def load_agent(checkpoint: Path, repo: Path):
    """(config, model, metadata) from a checkpoint written by scripts/train_rearrange_curriculum.py
    --ship: the config file and kwargs it names, its model with the weights loaded strictly."""
    import torch

    from .eval import load_config

    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    config = load_config(str(Path(repo) / state["config"]), state["config_kwargs"])
    model = config.create_model()
    model.load_state_dict(state["model_state_dict"])
    model.eval()
    return config, model, state


def noop_reset(task) -> None:
    """Agents without per-task state."""


__all__ = [
    "SliceSpec",
    "SliceDataError",
    "make_slice",
    "slice_episodes",
    "held_out_of",
    "load_slice",
    "run_episodes",
    "summarize_ci",
    "seeded_random_act",
    "done_act",
    "beats",
    "noop_reset",
    "episode_kind",
    "evaluate_agents",
    "evaluate_checkpoint",
    "ci_table",
    "load_agent",
    "keep_short",
    "expert_steps",
    "resnet18_features",
    "RESNET_UUIDS",
    "MODEL_UUIDS",
]

"""Training throughput of the Active Neural SLAM map configs on thor_lite (CPU, random init).

    python benchmarks/rearrange_map_fps.py [--configs walkthrough one_phase two_phase]
        [--num-steps 8] [--rollouts 3] [--update-repeats 1] [--samplers 1]

Each rollout is what an AllenAct trainer does per update, in one process: `--num-steps` steps
of every sampler (observations, a no-grad policy step, the environment step), then
`--update-repeats` passes of forward + backward + Adam over the whole rollout with the config's
losses (walkthrough: the map losses plus an advantage-weighted policy term standing in for
PPO, whose own arithmetic is negligible; 1-/2-phase: cross-entropy against the expert). The
first rollout (warm-up) is dropped; the script prints medians over the rest of frames/s for
acting only (`act fps`) and for acting + updating (`train fps`), and the ms per step of each
part and the process CPU seconds per frame, and writes `benchmarks/results/rearrange_map_fps.md`.
224x224 frames (the map needs them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Dict, List, Tuple

import torch
from tqdm import tqdm

from _common import RESULTS_DIR, markdown_table, write_markdown

CONFIGS = {
    "walkthrough": "baseline_configs.walkthrough.walkthrough_rgb_mapping_ppo:WalkthroughRGBMappingPPOExperimentConfig",
    "one_phase": "baseline_configs.one_phase.one_phase_rgb_resnet_frozen_map_dagger:"
    "OnePhaseRGBResNetFrozenMapDaggerExperimentConfig",
    "two_phase": "baseline_configs.two_phase.two_phase_rgb_resnet_frozen_map_ppowalkthrough_ilunshuffle:"
    "TwoPhaseRGBResNetFrozenMapPPOWalkthroughILUnshuffleExperimentConfig",
}
SMALL = {"pretrained": False, "train_split": "train_subset", "episodes_per_scene": 2}


def _config(name: str, samplers: int):
    import importlib

    module, cls = CONFIGS[name].split(":")
    scenes = ["FloorPlan1", "FloorPlan201", "FloorPlan301", "FloorPlan401"][:samplers]
    return getattr(importlib.import_module(module), cls)(
        num_train_processes=samplers, train_scenes=scenes, **SMALL
    )


def _stack_time(steps: List[Any]) -> Any:
    if isinstance(steps[0], dict):
        return {k: _stack_time([s[k] for s in steps]) for k in steps[0]}
    return torch.stack(steps)


def _cat_time(steps: List[Any]) -> Any:
    if isinstance(steps[0], dict):
        return {k: _cat_time([s[k] for s in steps]) for k in steps[0]}
    return torch.cat(steps)


def _memory(model, n: int):
    from allenact.base_abstractions.misc import Memory

    mem = Memory()
    for key, (dims, dtype) in model.recurrent_memory_specification.items():
        names = [a for a, _ in dims]
        mem.check_append(
            key,
            torch.zeros([n if a == "sampler" else s for a, s in dims], dtype=dtype),
            names.index("sampler"),
        )
    return mem


class Runner:
    """Samplers + model + optimizer of one config, stepping like an AllenAct trainer."""

    def __init__(self, cfg, samplers: int) -> None:
        torch.manual_seed(0)
        self.cfg, self.model = cfg, cfg.create_model()
        self.samplers = [
            cfg.make_sampler_fn(**cfg.train_task_sampler_args(i, samplers)) for i in range(samplers)
        ]
        self.tasks = [s.next_task() for s in self.samplers]
        self.obs = [t.get_observations() for t in self.tasks]
        self.mem = _memory(self.model, samplers)
        self.prev = torch.zeros(1, samplers, dtype=torch.long)
        self.masks = torch.zeros(1, samplers, 1)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optim = torch.optim.Adam(params, lr=3e-4)

    def rollout(self, num_steps: int) -> Dict[str, Any]:
        from allenact.utils.tensor_utils import batch_observations

        from allenact.base_abstractions.misc import Memory

        steps = []
        start_mem = Memory(
            {k: (self.mem.tensor(k).clone(), self.mem.sampler_dim(k)) for k in self.mem}
        )
        for _ in range(num_steps):
            batch = _stack_time([batch_observations(self.obs)])
            with torch.no_grad():
                out, self.mem = self.model(batch, self.mem, self.prev, self.masks)
            actions = out.distributions.sample()[0]
            steps.append(
                {"obs": batch, "actions": actions, "prev": self.prev[0], "masks": self.masks[0]}
            )
            self._env_step(actions)
        return {"steps": steps, "memory": start_mem}

    def _env_step(self, actions: torch.Tensor) -> None:
        for i, task in enumerate(self.tasks):
            result = task.step(int(actions[i]))
            self.obs[i], self.masks[0, i] = result.observation, 1.0
            if task.is_done():
                self.tasks[i] = self.samplers[i].next_task()
                self.obs[i], self.masks[0, i] = self.tasks[i].get_observations(), 0.0
        self.prev = actions.view(1, -1)

    def update(self, rollout: Dict[str, Any]) -> float:
        steps = rollout["steps"]
        obs = _cat_time([s["obs"] for s in steps])
        prev = torch.stack([s["prev"] for s in steps])
        masks = torch.stack([s["masks"] for s in steps])
        out, _ = self.model(obs, rollout["memory"], prev, masks)
        loss = self._loss(obs, out, torch.stack([s["actions"] for s in steps]))
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.detach().item()

    def _loss(self, obs: Dict[str, Any], out, actions: torch.Tensor) -> torch.Tensor:
        from allenact.embodiedai.mapping.mapping_losses import (
            BinnedPointCloudMapLoss,
            SemanticMapFocalLoss,
        )

        logp = out.distributions.log_prob(actions)
        if "expert_action" in obs:
            return torch.nn.functional.cross_entropy(
                out.distributions.logits.flatten(0, 1),
                obs["expert_action"][..., 0].flatten().long(),
            )
        batch = {"observations": obs}
        height = BinnedPointCloudMapLoss("binned_pc_map", "ego_height_binned_map_logits").loss(
            0, batch, out
        )[0]
        semantic = SemanticMapFocalLoss("semantic_map", "ego_semantic_map_logits").loss(
            0, batch, out
        )[0]
        advantage = torch.randn_like(logp)  # stands in for GAE advantages: same graph, same cost
        return -(logp * advantage).mean() + out.values.pow(2).mean() + height + 100 * semantic

    def close(self) -> None:
        for s in self.samplers:
            s.close()


def measure(name: str, args) -> Dict[str, float]:
    cfg = _config(name, args.samplers)
    runner = Runner(cfg, args.samplers)
    act, cpu = [], []
    try:
        for i in tqdm(range(args.rollouts + 1), desc=name):
            t0, c0 = time.perf_counter(), time.process_time()
            rollout = runner.rollout(args.num_steps)
            t1 = time.perf_counter()
            for _ in range(args.update_repeats):
                runner.update(rollout)
            t2, c2 = time.perf_counter(), time.process_time()
            if i:  # the first rollout warms up caches and allocators
                act.append((t1 - t0, t2 - t1))
                cpu.append(c2 - c0)
    finally:
        runner.close()
    frames = args.num_steps * args.samplers
    act_s = statistics.median(a for a, _ in act)
    upd_s = statistics.median(u for _, u in act)
    train_s = statistics.median(a + u for a, u in act)
    return {
        "act fps": frames / act_s,
        "train fps": frames / train_s,
        "act ms/frame": 1000 * act_s / frames,
        "update ms/frame": 1000 * upd_s / frames,
        "cpu s/frame": statistics.median(cpu) / frames,
        "tag": cfg.tag(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS))
    ap.add_argument("--num-steps", type=int, default=8)
    ap.add_argument("--rollouts", type=int, default=3)
    ap.add_argument("--update-repeats", type=int, default=1)
    ap.add_argument("--samplers", type=int, choices=[1, 2, 3, 4], default=1)
    args = ap.parse_args(argv)
    if min(args.num_steps, args.rollouts, args.update_repeats) < 1:
        ap.error("--num-steps, --rollouts and --update-repeats must be at least 1")
    rows: List[Tuple] = []
    for name in args.configs:
        r = measure(name, args)
        rows.append(
            (
                r["tag"],
                f"{r['act fps']:.2f}",
                f"{r['train fps']:.2f}",
                f"{r['act ms/frame']:.0f}",
                f"{r['update ms/frame']:.0f}",
                f"{r['cpu s/frame']:.2f}",
            )
        )
        print(
            f"{name}: act {r['act fps']:.2f} fps, train {r['train fps']:.2f} fps (median of {args.rollouts})"
        )
    header = (
        "config",
        "act fps",
        "train fps",
        "act ms/frame",
        "update ms/frame",
        "CPU s/frame (all threads)",
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = "\n".join(
        [
            "# Map configs: training throughput on thor_lite (224x224, random init)",
            "",
            f"`python benchmarks/rearrange_map_fps.py --num-steps {args.num_steps} --rollouts {args.rollouts} "
            f"--update-repeats {args.update_repeats} --samplers {args.samplers}`; {os.cpu_count()} CPUs, "
            f"torch threads {torch.get_num_threads()}, 1-min load average at the end {load:.1f}; medians over rollouts.",
            "",
            *markdown_table(header, rows, "lrrrrr"),
            "",
            "Wall-clock numbers are only comparable at a similar load; CPU seconds per frame (acting +",
            "updating, summed over torch's threads) are less sensitive to other processes.",
        ]
    )
    print(text)
    write_markdown(RESULTS_DIR / "rearrange_map_fps.md", text)
    return 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)

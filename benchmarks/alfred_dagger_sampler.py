"""Where one DAgger sampler's time goes: `alfred_seq2seq_pm_dagger.py`'s task sampler and policy, in-process.

    python benchmarks/alfred_dagger_sampler.py --data out/alfred_s2s_big --steps 150 --threads 1 [--profile]

What an AllenAct DAgger sampler plus the policy's rollout step do for every frame, measured
without AllenAct's processes around them: the config's train sampler (its sensors: language ids,
inline ResNet-18 features, the online expert's action / mask / subgoal / progress labels), the
config's lite policy acting one step at a time under ``torch.no_grad`` with its recurrent memory,
and the DAgger choice (the expert's action with probability ``--tf``, else the policy's argmax;
seeded). Reports ms per frame split into observations (sensors, including the expert), the
simulator step, and the policy step; ``--threads`` sets torch's intra-op threads (the config's
``sampler_torch_threads`` / ``trainer_torch_threads``; AllenAct alone leaves one per core); ``--profile`` adds cProfile's top functions.
Writes ``benchmarks/results/alfred_dagger_sampler_<threads>t.{json,md}``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from pathlib import Path
from typing import Any, Dict

import numpy as np
import torch

from _common import RESULTS_DIR, markdown_table, write_json, write_markdown


def _batch(obs: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """One sampler's observations as AllenAct's [T=1, B=1, ...] batch."""
    return {k: torch.as_tensor(np.asarray(v)).unsqueeze(0).unsqueeze(0) for k, v in obs.items()}


def _memory(model: Any) -> Any:
    from allenact.base_abstractions.misc import Memory

    mem = Memory()
    for key, (dims, dtype) in model.recurrent_memory_specification.items():
        mem.check_append(
            key, torch.zeros(*[d if d is not None else 1 for _, d in dims], dtype=dtype), 1
        )
    return mem


def run(args: argparse.Namespace) -> Dict[str, Any]:
    from baseline_configs.alfred.alfred_seq2seq_pm_dagger import AlfredSeq2SeqPMDaggerConfig

    cfg = AlfredSeq2SeqPMDaggerConfig(
        data_root=args.data,
        visual_encoder="random_resnet18",
        model_size="lite",
        num_train_processes=2,
        sampler_torch_threads=args.threads,
        trainer_torch_threads=args.threads,
    )
    sampler = cfg.make_sampler_fn(
        **cfg.train_task_sampler_args(0, 2, seeds=[args.seed, args.seed + 1])
    )
    model = cfg.create_model().eval()
    rng = np.random.default_rng(args.seed)
    t_obs = t_env = t_pol = 0.0
    frames = episodes = 0
    task = None
    while frames < args.steps:
        if task is None or task.is_done():
            t0 = time.perf_counter()
            task = sampler.next_task()
            obs = task.get_observations()
            t_obs += time.perf_counter() - t0
            memory, prev, mask = (
                _memory(model),
                torch.zeros(1, 1, dtype=torch.long),
                torch.zeros(1, 1, 1),
            )
            episodes += 1
        t0 = time.perf_counter()
        with torch.no_grad():
            out, memory = model(_batch(obs), memory, prev, mask)
        learner = int(out.distributions.logits[0, 0].argmax())
        t1 = time.perf_counter()
        expert, ok = obs["expert_action"]
        action = int(expert) if ok and rng.random() < args.tf else learner
        t_pol += t1 - t0
        t0 = time.perf_counter()
        res = task.step(action)  # the simulator step, then every sensor (expert labels, ResNet)
        t_env += time.perf_counter() - t0
        obs, prev, mask = res.observation, torch.tensor([[action]]), torch.ones(1, 1, 1)
        frames += 1
    sampler.close()
    return {
        "frames": frames,
        "episodes": episodes,
        "ms_per_frame": {
            "step_and_observations": 1000 * t_env / frames,
            "policy": 1000 * t_pol / frames,
            "episode_starts": 1000 * t_obs / frames,
            "total": 1000 * (t_env + t_pol + t_obs) / frames,
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", required=True, help="dataset with train split (python -m alfred_task.gen)"
    )
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument(
        "--tf", type=float, default=0.5, help="probability of taking the expert's action"
    )
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    prof = cProfile.Profile() if args.profile else None
    wall = time.perf_counter()
    if prof:
        prof.enable()
    res = run(args)
    if prof:
        prof.disable()
    res.update(
        wall_s=time.perf_counter() - wall,
        threads=args.threads,
        tf=args.tf,
        load_avg=round(__import__("os").getloadavg()[0], 1),
    )
    ms = res["ms_per_frame"]
    lines = [
        f"# One DAgger sampler + policy step, in-process ({args.threads} torch thread(s))",
        "",
        f"{res['frames']} frames, {res['episodes']} episodes, teacher forcing {args.tf}, "
        f"load average {res['load_avg']}; {1000 / ms['total']:.1f} frames/s",
        "",
    ]
    lines += markdown_table(["part", "ms / frame"], [[k, f"{v:.1f}"] for k, v in ms.items()], "lr")
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        res["profile"] = s.getvalue()
        lines += ["", "```", *s.getvalue().splitlines()[:60], "```"]
    text = "\n".join(lines)
    print(text)
    out = Path(RESULTS_DIR) / f"alfred_dagger_sampler_{args.threads}t"
    write_json(out.with_suffix(".json"), res)
    write_markdown(out.with_suffix(".md"), text)


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)

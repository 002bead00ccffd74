"""How to use the rearrangement task samplers (mirrors the official example.py), on thor_lite.

    python example.py                  # all three parts, small and quick
    python example.py --part submission --max-episodes 0    # full combined submission

1. A 2-phase sampler on `train` driven by random actions (walkthrough, then unshuffle).
2. A 1-phase sampler on `val` with the same random agent.
3. Running every `combined` episode and writing `submission.json.gz` in the leaderboard format.

`--backend thor` runs the same code through the `ai2thor` package's Controller: on the real
AI2-THOR build, or on thor_lite's own build with `THOR_EXECUTABLE=thor_lite` (no GPU needed).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Optional

from baseline_configs.one_phase.one_phase_rgb_dagger import OnePhaseRGBDaggerExperimentConfig
from baseline_configs.two_phase.two_phase_rgb_ppowalkthrough_ilunshuffle import (
    TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig,
)
from rearrange.eval import RandomAgent, run_agent, summarize, write_submission
from rearrange.tasks import UnshuffleTask, WalkthroughTask


def two_phase_random_on_train(
    num_tasks: int = 2, seed: int = 0, backend: str = "thor_lite"
) -> None:
    config = TwoPhaseRGBPPOWalkthroughILUnshuffleExperimentConfig(
        episodes_per_scene=1, train_split="train_subset", backend=backend
    )
    args = config.stagewise_task_sampler_args("train", process_ind=0, total_processes=1)
    args["scenes_to_task_spec_dicts"] = OrderedDict(
        list(args["scenes_to_task_spec_dicts"].items())[:num_tasks]
    )
    args["epochs"] = 1
    sampler = config.make_sampler_fn(**args)
    rng = random.Random(seed)
    try:
        for _ in range(2 * num_tasks):  # each episode = a walkthrough task then an unshuffle task
            task = sampler.next_task()
            if task is None:
                break
            kind = "walkthrough" if isinstance(task, WalkthroughTask) else "unshuffle"
            while not task.is_done():
                obs = task.step(rng.randrange(task.action_space.n)).observation
            print(
                f"[2-phase/train] {kind:11s} {task.task_info['unique_id']}: {task.num_steps_taken()} steps, "
                f"observations {sorted(obs)}"
            )
            if isinstance(task, UnshuffleTask):
                m = task.metrics()
                print(
                    f"    % fixed strict {m['unshuffle/prop_fixed_strict']:.2f}, walkthrough saw "
                    f"{m['walkthrough/num_obj_seen']} objects"
                )
    finally:
        sampler.close()


def one_phase_random_on_val(
    episodes_per_scene: int = 1, seed: int = 0, backend: str = "thor_lite"
) -> None:
    config = OnePhaseRGBDaggerExperimentConfig(backend=backend)
    res = run_agent(
        config,
        RandomAgent(seed),
        "val",
        episodes_per_scene=episodes_per_scene,
        scenes=["FloorPlan21", "FloorPlan221"],
        desc="1-phase val",
    )
    s = summarize(res)
    print(
        f"[1-phase/val] random agent on {len(res)} episodes: % fixed strict "
        f"{100 * s['unshuffle/prop_fixed_strict']:.1f}, energy remaining {s['unshuffle/energy_prop']:.2f}"
    )


def submission_on_combined(
    out: Path, max_episodes: Optional[int], seed: int = 0, backend: str = "thor_lite"
) -> None:
    config = OnePhaseRGBDaggerExperimentConfig(test_stage="combined", backend=backend)
    res = run_agent(
        config, RandomAgent(seed), "combined", episodes_per_scene=max_episodes, desc="combined"
    )
    write_submission(res, out)
    print(f"[submission] {len(res)} episodes -> {out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--part", choices=["all", "two_phase", "one_phase", "submission"], default="all"
    )
    ap.add_argument(
        "--max-episodes",
        type=int,
        default=1,
        help="episodes per scene for the submission (0 = all 2800)",
    )
    ap.add_argument("--out", type=Path, default=Path("out/submission.json.gz"))
    ap.add_argument(
        "--backend",
        choices=["thor_lite", "thor"],
        default="thor_lite",
        help="thor: through ai2thor's Controller (a Unity build, or THOR_EXECUTABLE=thor_lite)",
    )
    args = ap.parse_args(argv)
    if args.part in ("all", "two_phase"):
        two_phase_random_on_train(backend=args.backend)
    if args.part in ("all", "one_phase"):
        one_phase_random_on_val(backend=args.backend)
    if args.part in ("all", "submission"):
        submission_on_combined(args.out, args.max_episodes or None, backend=args.backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does a curriculum checkpoint use its goal view on its own TRAINING episodes? (if not even
there, its training signal did not need the goal, and no transfer to unseen rooms is expected)

    python -m experiments.rearrange_heldout_scenes.goal_use_on_training \
        --checkpoint <dir>/thor_lite_one_object_slice.pt --per-scene 5

Plays the protocol's agent and goal-blind rows (rearrange.protocol) on the first `--per-scene`
episodes of each training scene of the checkpoint's slice and prints successes and the number
of episodes with identical action sequences.
"""

from __future__ import annotations

import argparse
from collections import OrderedDict
from pathlib import Path

import torch

from rearrange import protocol as P
from rearrange.curriculum import SliceSpec, episode_kind
from rearrange.dataset import load_dataset

REPO = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--train-episodes", type=Path, default=None, help="default: the slice's file")
    ap.add_argument("--per-scene", type=int, default=5)
    args = ap.parse_args(argv)
    spec = SliceSpec(**torch.load(args.checkpoint, map_location="cpu", weights_only=False)["slice"])
    path = args.train_episodes or REPO / "data" / "rearrange_heldout_bathrooms" / "train.pkl.gz"
    data = load_dataset(path)
    episodes = OrderedDict(
        (s, [e for e in data[s] if episode_kind(e) in spec.kinds][: args.per_scene])
        for s in spec.scenes
    )
    source = P.AgentSource(args.checkpoint, REPO)
    rows = {
        name: P._run_row((name, source, episodes, spec.max_steps, 0, None))
        for name in (P.AGENT, P.GOAL_BLIND)
    }
    for name, res in rows.items():
        print(
            f"{name}: {sum(r['success'] for r in res):.0f} of {len(res)} training episodes solved"
        )
    same = sum(a["actions"] == b["actions"] for a, b in zip(*rows.values()))
    print(
        f"identical action sequences with and without the goal view: {same} of {len(rows[P.AGENT])}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does any learning rate / batch size generalise across TRAINING scenes? (hyper-parameters are
chosen here, never on the held-out scenes)

    python -m experiments.rearrange_heldout_scenes.split_check 3e-3,8,12 1e-3,8,12 1e-3,4,30

Plays the expert once on the training file of `data/rearrange_heldout_bathrooms` (25-step cap,
as the trainer's DAgger rollouts), fits the config's SimpleConv GRU (with `visual_layer_norm`)
on all but the last `--check-scenes` training scenes and prints, after every epoch, the fit
cross-entropy and the cross-entropy on the left-out training scenes. Each `lr,batch,epochs`
argument is one seeded run from the same initial weights.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import torch

from rearrange import curriculum as cur
from rearrange import imitation as im
from rearrange.eval import load_config

REPO = Path(__file__).resolve().parents[2]
CONFIG = "baseline_configs/one_phase/one_phase_rgb_dagger.py"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("runs", nargs="+", help="lr,batch_episodes,epochs")
    ap.add_argument("--data-dir", type=Path, default=REPO / "data" / "rearrange_heldout_bathrooms")
    ap.add_argument("--check-scenes", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    train = cur.load_slice(args.data_dir, "train")
    config = load_config(
        str(REPO / CONFIG),
        {
            "screen_size": 64,
            "train_split": "train_subset",
            "num_train_processes": 1,
            "visual_layer_norm": True,
        },
    )
    torch.manual_seed(args.seed)
    runner = im.PolicyRunner(config.create_model(), cur.MODEL_UUIDS)
    trajs = im.play_all(config, train, runner, 1.0, random.Random(args.seed), max_steps=25)
    scene_of = [s for s, eps in train.items() for _ in eps]
    held = set(list(train)[-args.check_scenes :])
    fit = [t for t, s in zip(trajs, scene_of) if s not in held]
    check = [t for t, s in zip(trajs, scene_of) if s in held]
    print(f"fit on {len(fit)} episodes, check on {len(check)} ({', '.join(sorted(held))})")
    for spec in args.runs:
        lr, batch, epochs = float(spec.split(",")[0]), *map(int, spec.split(",")[1:])
        torch.manual_seed(args.seed)
        model = config.create_model()
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        rng, t0 = random.Random(args.seed), time.perf_counter()
        for epoch in range(1, epochs + 1):
            model.train()
            fit_ce = im.train_epochs(model, opt, fit, 1, batch, rng)
            model.eval()
            with torch.no_grad():
                check_ce = float(im.imitation_loss(model, im.batch_tensors(check)))
            print(
                f"lr {lr:g} batch {batch} epoch {epoch}: fit CE {fit_ce:.3f}, "
                f"check CE {check_ce:.3f} ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Learning curves and training throughput of the lite ALFRED Seq2Seq+PM (imitation), and DAgger throughput.

    python benchmarks/alfred_seq2seq_learning.py --data out/alfred_s2s --encoder random_resnet18 \\
        [--updates 60] [--batch 4] [--eval-every 10] [--dagger-frames 64]

Imitation runs the same pieces as ``baseline_configs/alfred/alfred_seq2seq_pm_il.py`` (config,
`AlfredDemoStorage`, `AlfredSeq2SeqOfflineLoss`, Adam 1e-4) in-process, so every update is timed
without AllenAct's process start; every ``--eval-every`` updates it computes the same losses on the
whole valid_seen split (teacher-forced, eval mode). DAgger throughput comes from a real
``allenact`` run of ``alfred_seq2seq_pm_dagger.py`` (its ``approx_fps``, process start excluded).
Writes TensorBoard events, a PNG of action CE and mask loss (train and held-out), JSON and markdown
under benchmarks/results/.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any, Dict, List

import torch
from tqdm import tqdm

from _common import REPO, RESULTS_DIR, markdown_table, write_json, write_markdown

TERMS = ("action_low", "action_low_mask")


def _setup(args: argparse.Namespace):
    from allenact.base_abstractions.misc import Memory  # noqa: F401  (fail early without allenact)

    from alfred_task.il_dataset import AlfredILDataset
    from alfred_task.il_storage import AlfredDemoStorage, to_allenact_batch
    from alfred_task.models.allenact_losses import AlfredSeq2SeqOfflineLoss
    from alfred_task.online import ACTION_NAMES
    from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

    cfg = AlfredSeq2SeqPMILConfig(data_root=args.data, visual_encoder=args.encoder, model_size="lite",
                                  batch_size=args.batch, eval_storage=False)
    model = cfg.create_model().train()
    pframe = cfg.dims["pframe"]
    store = AlfredDemoStorage(args.data, str(cfg.splits), split="train", batch_size=args.batch, seed=args.seed,
                              mask_size=pframe, vocab=cfg.vocab)
    held = AlfredILDataset(Path(args.data), cfg.splits, "valid_seen", vocab=cfg.vocab, mask_size=pframe)
    held_batches = [to_allenact_batch(b) for b in held.batches(args.batch, shuffle=False)]
    loss = AlfredSeq2SeqOfflineLoss(cfg.loss_weights(), ACTION_NAMES)
    return cfg, model, store, held_batches, loss


def _step(model, loss, batch) -> Dict[str, float]:
    from allenact.base_abstractions.misc import Memory

    return loss.loss(model=model, batch=batch, batch_memory=Memory(), stream_memory=Memory())


@torch.no_grad()
def _held_out(model, loss, batches) -> Dict[str, float]:
    """Mean loss terms over `batches`: dropout and batch norm in eval mode, the wrapper itself in
    training mode (it decodes masks, which the mask loss needs, only then)."""
    model.eval()
    model.training = True
    sums: Dict[str, float] = {}
    for b in batches:
        for k, v in _step(model, loss, b).info.items():
            sums[k] = sums.get(k, 0.0) + v / len(batches)
    model.train()
    return sums


def run_imitation(args: argparse.Namespace, tb_dir: Path) -> Dict[str, Any]:
    from tensorboardX import SummaryWriter

    torch.manual_seed(args.seed)
    cfg, model, store, held, loss = _setup(args)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    writer = SummaryWriter(str(tb_dir))
    train: List[Dict[str, float]] = []
    valid: List[Dict[str, Any]] = [{"update": 0, **_held_out(model, loss, held)}]
    frames, seconds = 0, 0.0
    for u in tqdm(range(1, args.updates + 1), desc="imitation updates", unit="update"):
        try:
            batch = store.next_batch()
        except EOFError:
            store.reset_stream()
            batch = store.next_batch()
        t = time.perf_counter()
        out = _step(model, loss, batch)
        opt.zero_grad()
        out.value.backward()
        opt.step()
        seconds += time.perf_counter() - t
        frames += out.bsize
        train.append({"update": u, **out.info})
        for k in TERMS:
            writer.add_scalar(f"train/{k}", out.info.get(k, float("nan")), u)
        if u % args.eval_every == 0 or u == args.updates:
            valid.append({"update": u, **_held_out(model, loss, held)})
            for k in TERMS:
                writer.add_scalar(f"valid_seen/{k}", valid[-1].get(k, float("nan")), u)
    writer.close()
    return {"train": train, "valid_seen": valid, "frames": frames, "seconds": seconds,
            "frames_per_s": frames / max(seconds, 1e-9), "run": cfg.run_record(), "dims": cfg.dims}


def run_dagger(args: argparse.Namespace) -> Dict[str, Any]:
    kwargs = {"data_root": args.data, "visual_encoder": args.encoder, "model_size": "lite",
              "training_frames": args.dagger_frames, "num_steps": 16, "num_train_processes": 2}
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(Path(sys.executable).with_name("allenact")), "-b", ".",
                               "baseline_configs/alfred/alfred_seq2seq_pm_dagger.py", "-o", out, "-s", str(args.seed),
                               "--config_kwargs", json.dumps(kwargs)], cwd=REPO, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    fps = [float(v) for v in re.findall(r"approx_fps ([0-9.]+)", proc.stdout + proc.stderr)]
    if proc.returncode != 0 or not fps:
        raise SystemExit(f"DAgger run failed (exit {proc.returncode}): {(proc.stdout + proc.stderr)[-500:]}")
    return {"frames": args.dagger_frames, "samplers": 2, "approx_fps": fps, "median_fps": median(fps)}


def _plot(res: Dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k in zip(axes, TERMS):
        ax.plot([r["update"] for r in res["train"]], [r.get(k) for r in res["train"]], alpha=0.5, label="train")
        ax.plot([r["update"] for r in res["valid_seen"]], [r.get(k) for r in res["valid_seen"]], "o-",
                label="valid_seen (held-out)")
        ax.set_title(k), ax.set_xlabel("update"), ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="out/alfred_s2s")
    ap.add_argument("--encoder", default="random_resnet18")
    ap.add_argument("--updates", type=int, default=60)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--dagger-frames", type=int, default=0, help="0: skip the DAgger throughput run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest for the lite model)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    stem = RESULTS_DIR / "alfred_seq2seq_learning"
    res = run_imitation(args, Path(str(stem) + "_tb"))
    if args.dagger_frames:
        res["dagger"] = run_dagger(args)
    _plot(res, stem.with_suffix(".png"))
    write_json(stem.with_suffix(".json"), {"args": vars(args), **res})
    first, last = res["valid_seen"][0], res["valid_seen"][-1]
    tr0, tr1 = res["train"][: max(1, len(res["train"]) // 10)], res["train"][-max(1, len(res["train"]) // 10):]
    rows = [[k, f"{median(r[k] for r in tr0):.3f}", f"{median(r[k] for r in tr1):.3f}", f"{first[k]:.3f}",
             f"{last[k]:.3f}"] for k in TERMS]
    lines = ["# ALFRED Seq2Seq+PM (lite) imitation: losses and throughput", "",
             f"data {args.data}, encoder {args.encoder}, dims {res['dims']}, batch {args.batch}, "
             f"{args.updates} updates, {res['frames']} teacher-forced frames", "",
             *markdown_table(["term", "train first 10% (median)", "train last 10% (median)", "valid_seen start",
                              "valid_seen end"], rows, "lrrrr"), "",
             f"imitation throughput: {res['frames_per_s']:.1f} frames/s (update time only, "
             f"{torch.get_num_threads()} threads)"]
    if "dagger" in res:
        lines.append(f"DAgger throughput: median approx_fps {res['dagger']['median_fps']:.2f} frames/s "
                     f"(2 samplers, allenact's own measure, {args.dagger_frames} frames)")
    write_markdown(stem.with_suffix(".md"), "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()

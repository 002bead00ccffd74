"""Learning curves and training throughput of the lite ALFRED Seq2Seq+PM (imitation), and DAgger throughput.

    python -m experiments.alfred_seq2seq.learning --data out/alfred_s2s --encoder random_resnet18 \\
        [--variant seq2seq_pm] [--updates 60] [--batch 4] [--lr 1e-4] [--decay-at N] [--eval-every 10] \\
        [--save CKPT] [--save-best CKPT] [--tag NAME] [--dagger-frames 64]

Imitation runs the same pieces as ``baseline_configs/alfred/alfred_seq2seq_*_il.py`` (config, its
policy, the teacher-forced batches `AlfredDemoStorage` serves, `AlfredSeq2SeqOfflineLoss`, Adam with
ALFRED's x0.1 step decay) in-process through `experiments.alfred_seq2seq.il_fit`, so every update is timed without
AllenAct's process start; every ``--eval-every`` updates it computes the same losses on valid_seen
(teacher-forced, eval mode). ``--variant`` picks Seq2Seq+PM, Seq2Seq or the no-language ablation;
``--save`` writes the final policy, ``--save-best`` the one with the lowest valid_seen total loss
(ALFRED's best_seen), as checkpoints that ``python -m alfred_task.evaluation --agent
checkpoint`` and ``experiments/alfred_seq2seq/compare.py --checkpoint`` evaluate. DAgger throughput
comes from a real ``allenact`` run of ``alfred_seq2seq_pm_dagger.py`` (its ``approx_fps``, process
start excluded).
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
from pathlib import Path
from statistics import median
from typing import Any, Dict, List

import torch
from tqdm import tqdm

from benchmarks._common import REPO, RESULTS_DIR, markdown_table, write_json, write_markdown

TERMS = ("action_low", "action_low_mask")


#: variant -> (config class path, ablation); the configs of experiments/alfred_seq2seq/compare.py
VARIANTS = {
    "seq2seq_pm": ("alfred_seq2seq_pm_il", "AlfredSeq2SeqPMILConfig", "none"),
    "seq2seq": ("alfred_seq2seq_il", "AlfredSeq2SeqILConfig", "none"),
    "no_language": ("alfred_seq2seq_pm_il", "AlfredSeq2SeqPMILConfig", "no_language"),
}


def _setup(args: argparse.Namespace):
    import importlib

    from alfred_task.data.il_dataset import AlfredILDataset
    from alfred_task.models.allenact_losses import AlfredSeq2SeqOfflineLoss
    from alfred_task.alfred_tasks import ACTION_NAMES

    module, cls, ablation = VARIANTS[args.variant]
    config = getattr(importlib.import_module(f"baseline_configs.alfred.{module}"), cls)
    cfg = config(
        data_root=args.data,
        visual_encoder=args.encoder,
        model_size="lite",
        batch_size=args.batch,
        ablation=ablation,
        lr=args.lr,
        eval_storage=False,
        prev_action_input=args.prev_action_input,
        mask_dice_weight=args.mask_dice_weight,
        spatial_mask=args.spatial_mask,
        subcell_mask=args.subcell_mask,
    )
    torch.manual_seed(args.seed)
    model = cfg.create_model().train()
    if args.init:
        _load_init(model, args.init, cfg.vocab)
    pframe = cfg.dims["pframe"]
    train = AlfredILDataset(
        Path(args.data),
        cfg.splits,
        "train",
        vocab=cfg.vocab,
        mask_size=pframe,
        max_examples=args.max_examples,
    )
    held = AlfredILDataset(
        Path(args.data),
        cfg.splits,
        "valid_seen",
        vocab=cfg.vocab,
        mask_size=pframe,
        max_examples=args.held_out_examples,
    )
    loss = AlfredSeq2SeqOfflineLoss(cfg.loss_weights(), ACTION_NAMES)
    return cfg, model, train, held, loss


def _load_init(model: torch.nn.Module, path: Path, vocab: Any) -> None:
    """Start from a ``--save`` checkpoint; when the data's vocabulary has grown since, the words the
    checkpoint knew keep their embedding rows (matched by word) and new words keep their fresh ones;
    the evaluation record (vocabulary, config) stays this run's."""
    from alfred_task.evaluation.agents import CheckpointAgent
    from alfred_task.models.trained import EXTRA_STATE_KEY

    sd = torch.load(path, map_location="cpu", weights_only=True)["model_state_dict"]
    key = "seq2seq.emb_word.weight"
    own = model.state_dict()[key]
    if sd[key].shape != own.shape:
        old = CheckpointAgent(path).inner.vocab.word
        old_ids = {old.index2word(j): j for j in range(len(old))}
        new_rows = own.clone()
        kept = 0
        for i in range(len(vocab.word)):
            j = old_ids.get(vocab.word.index2word(i))
            if j is not None:
                new_rows[i], kept = sd[key][j], kept + 1
        print(
            f"--init: vocabulary {len(old)} -> {len(vocab.word)} words, {kept} embeddings kept",
            flush=True,
        )
        sd = {**sd, key: new_rows}
    model.load_state_dict(
        {**sd, EXTRA_STATE_KEY: model.state_dict()[EXTRA_STATE_KEY]}
    )  # this run's record


def run_imitation(args: argparse.Namespace, tb_dir: Path) -> Dict[str, Any]:
    """`il_fit.fit` with TensorBoard, a held-out evaluation every `--eval-every` updates and
    (``--save``) the final policy as a checkpoint `--agent checkpoint` evaluates."""
    from tensorboardX import SummaryWriter

    from experiments.alfred_seq2seq.il_fit import fit, held_out_losses, save_policy

    cfg, model, train, held, loss = _setup(args)
    # reads features first: a dataset without them stops here, before any output exists
    valid: List[Dict[str, Any]] = [{"update": 0, **held_out_losses(model, held, loss, args.batch)}]
    writer = SummaryWriter(str(tb_dir))
    best: Dict[str, Any] = {}
    bar = tqdm(total=None if args.frames else args.updates, desc="imitation updates", unit="update")

    def on_update(u: int, info: Dict[str, float]) -> None:
        bar.update(1)
        bar.set_postfix(
            ce=f"{info['action_low']:.3f}", mask=f"{info.get('action_low_mask', float('nan')):.3f}"
        )
        for k in TERMS:
            writer.add_scalar(f"train/{k}", info.get(k, float("nan")), u)
        if u % args.eval_every == 0 or u == args.updates:
            valid.append({"update": u, **held_out_losses(model, held, loss, args.batch)})
            for k in TERMS:
                writer.add_scalar(f"valid_seen/{k}", valid[-1].get(k, float("nan")), u)
            writer.flush()
            if args.save_best and valid[-1]["total"] < best.get("total", float("inf")):
                best.update(update=u, total=valid[-1]["total"], checkpoint=str(args.save_best))
                save_policy(model, args.save_best, total_steps=u)

    res = fit(
        model,
        train,
        loss,
        updates=args.updates,
        lr=args.lr,
        batch_size=args.batch,
        seed=args.seed,
        decay_at=args.decay_at,
        max_frames=args.frames,
        on_update=on_update,
    )
    if (
        args.frames and res.history and res.history[-1]["update"] % args.eval_every
    ):  # the stopping point
        valid.append(
            {"update": res.history[-1]["update"], **held_out_losses(model, held, loss, args.batch)}
        )
    bar.close()
    writer.close()
    out = {
        "train": res.history,
        "valid_seen": valid,
        "frames": res.frames,
        "seconds": res.seconds,
        "frames_per_s": res.frames_per_s,
        "run": cfg.run_record(),
        "dims": cfg.dims,
        "train_examples": len(train),
        "train_frames_per_epoch": train.num_frames,
    }
    if args.save:
        out["checkpoint"] = str(save_policy(model, args.save, total_steps=res.frames))
    if best:
        out["best_seen"] = best
    return out


def run_dagger(args: argparse.Namespace) -> Dict[str, Any]:
    kwargs = {
        "data_root": args.data,
        "visual_encoder": args.encoder,
        "model_size": "lite",
        "training_frames": args.dagger_frames,
        "num_steps": 16,
        "num_train_processes": 2,
    }
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run(
            [
                str(Path(sys.executable).with_name("allenact")),
                "-b",
                ".",
                "baseline_configs/alfred/alfred_seq2seq_pm_dagger.py",
                "-o",
                out,
                "-s",
                str(args.seed),
                "--config_kwargs",
                json.dumps(kwargs),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    fps = [float(v) for v in re.findall(r"approx_fps ([0-9.]+)", proc.stdout + proc.stderr)]
    if proc.returncode != 0 or not fps:
        raise SystemExit(
            f"DAgger run failed (exit {proc.returncode}): {(proc.stdout + proc.stderr)[-500:]}"
        )
    return {
        "frames": args.dagger_frames,
        "samplers": 2,
        "approx_fps": fps,
        "median_fps": median(fps),
    }


def _plot(res: Dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k in zip(axes, TERMS):
        ax.plot(
            [r["update"] for r in res["train"]],
            [r.get(k) for r in res["train"]],
            alpha=0.5,
            label="train",
        )
        ax.plot(
            [r["update"] for r in res["valid_seen"]],
            [r.get(k) for r in res["valid_seen"]],
            "o-",
            label="valid_seen (held-out)",
        )
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
    ap.add_argument(
        "--dagger-frames", type=int, default=0, help="0: skip the DAgger throughput run"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", default="seq2seq_pm", choices=sorted(VARIANTS))
    ap.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (ALFRED: 1e-4)")
    ap.add_argument(
        "--decay-at", type=int, default=None, help="update after which lr x 0.1 (ALFRED: halfway)"
    )
    ap.add_argument(
        "--max-examples",
        type=int,
        default=None,
        help="first K train (trajectory, annotation) pairs",
    )
    ap.add_argument(
        "--held-out-examples",
        type=int,
        default=None,
        help="first K valid_seen pairs for held-out loss",
    )
    ap.add_argument(
        "--save", type=Path, default=None, help="write the trained policy here (AllenAct layout)"
    )
    ap.add_argument(
        "--tag", default="", help="suffix of the result files (several runs side by side)"
    )
    ap.add_argument(
        "--prev-action-input",
        default="argmax",
        choices=("argmax", "taken"),
        help="decoder's previous-action input in training: its own argmax (ALFRED's default) or the "
        "demonstration's action (ALFRED's --dec_teacher_forcing; what evaluation feeds)",
    )
    ap.add_argument(
        "--mask-dice-weight",
        type=float,
        default=0.0,
        help="soft Dice term added to ALFRED's balanced mask BCE (0 = ALFRED's loss)",
    )
    ap.add_argument(
        "--spatial-mask",
        action="store_true",
        help="the mask decoder also reads the frame's 7x7 features (config kwarg spatial_mask; not ALFRED's)",
    )
    ap.add_argument(
        "--subcell-mask",
        action="store_true",
        help="the mask decoder adds a 28x28 sub-cell head on the frame's features (config kwarg "
        "subcell_mask; not ALFRED's)",
    )
    ap.add_argument(
        "--save-best",
        type=Path,
        default=None,
        help="also keep the policy with the lowest held-out total loss (ALFRED's best_seen)",
    )
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from this --save checkpoint (short fine-tunes)",
    )
    ap.add_argument(
        "--frames",
        type=int,
        default=None,
        help="stop once this many teacher-forced frames were served (--updates is then a cap): "
        "imitation at the frame budget of an online (DAgger) run",
    )
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (1 is fastest for the lite model)"
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    stem = RESULTS_DIR / ("alfred_seq2seq_learning" + (f"_{args.tag}" if args.tag else ""))
    res = run_imitation(args, Path(str(stem) + "_tb"))
    if args.dagger_frames:
        res["dagger"] = run_dagger(args)
    files = {
        ext: Path(f"{stem}{ext}") for ext in (".png", ".json", ".md")
    }  # a tag may hold dots ("dice1.0")
    _plot(res, files[".png"])
    write_json(
        files[".json"],
        {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, **res},
    )
    first, last = res["valid_seen"][0], res["valid_seen"][-1]
    tr0, tr1 = (
        res["train"][: max(1, len(res["train"]) // 10)],
        res["train"][-max(1, len(res["train"]) // 10) :],
    )
    rows = [
        [
            k,
            f"{median(r[k] for r in tr0):.3f}",
            f"{median(r[k] for r in tr1):.3f}",
            f"{first[k]:.3f}",
            f"{last[k]:.3f}",
        ]
        for k in TERMS
    ]
    lines = [
        "# ALFRED Seq2Seq+PM (lite) imitation: losses and throughput",
        "",
        f"variant {args.variant}, data {args.data} ({res['train_examples']} train pairs, "
        f"{res['train_frames_per_epoch']} frames per epoch), encoder {args.encoder}, dims {res['dims']}, "
        f"batch {args.batch}, Adam {args.lr:g} (x0.1 after update {args.decay_at}), {len(res['train'])} updates, "
        f"{res['frames']} teacher-forced frames",
        "",
        *markdown_table(
            [
                "term",
                "train first 10% (median)",
                "train last 10% (median)",
                "valid_seen start",
                "valid_seen end",
            ],
            rows,
            "lrrrr",
        ),
        "",
        f"imitation throughput: {res['frames_per_s']:.1f} frames/s (update time only, "
        f"{torch.get_num_threads()} threads)",
    ]
    if "best_seen" in res:
        b = res["best_seen"]
        lines.append(
            f"best_seen (lowest valid_seen total loss among the evaluations): update {b['update']}, "
            f"total {b['total']:.3f}, saved to {b['checkpoint']}"
        )
    if "dagger" in res:
        lines.append(
            f"DAgger throughput: median approx_fps {res['dagger']['median_fps']:.2f} frames/s "
            f"(2 samplers, allenact's own measure, {args.dagger_frames} frames)"
        )
    write_markdown(files[".md"], "\n".join(lines))
    print("\n".join(lines))


def _main_one_line_errors() -> None:
    """`main`, with a dataset it cannot use (e.g. generated without features) as one line, no traceback."""
    from alfred_task.data.il_dataset import DemoDataError

    try:
        main()
    except DemoDataError as e:
        sys.exit(f"experiments/alfred_seq2seq/learning.py: {e}")


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(_main_one_line_errors)

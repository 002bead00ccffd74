"""Can the lite Seq2Seq+PM memorise a few demonstrations and replay them closed-loop?

    python -m experiments.alfred_seq2seq.memorise --data out/alfred_s2s_mem --examples 3 \\
        [--updates 200] [--lr 1e-3] [--max-steps 200]

The project's rule before blaming capacity or compute: the pipeline must overfit a few episodes.
Trains the lite Seq2Seq+PM of ``baseline_configs/alfred/alfred_seq2seq_pm_il.py`` in-process
(`experiments.alfred_seq2seq.il_fit`: the config's policy, teacher-forced batches, ALFRED's losses, Adam) on the
first ``--examples`` (trajectory, annotation) pairs of the train split, all in one batch, until the
action CE is below ``--stop-ce``; then ALFRED's evaluator runs the saved checkpoint closed-loop on
those same pairs (task evaluation and subgoal evaluation of every subgoal type). Writes
``benchmarks/results/alfred_seq2seq_memorise.{md,json}`` and the checkpoint next to them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict

import torch
from tqdm import tqdm

from benchmarks._common import RESULTS_DIR, markdown_table, write_json, write_markdown


def train(args: argparse.Namespace, ckpt: Path) -> Dict[str, Any]:
    from alfred_task.data.il_dataset import AlfredILDataset
    from experiments.alfred_seq2seq.il_fit import fit, held_out_losses, save_policy
    from alfred_task.models.allenact_losses import AlfredSeq2SeqOfflineLoss
    from alfred_task.alfred_tasks import ACTION_NAMES
    from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

    cfg = AlfredSeq2SeqPMILConfig(
        data_root=str(args.data), visual_encoder=args.encoder, model_size="lite", eval_storage=False
    )
    torch.manual_seed(args.seed)
    model = cfg.create_model()
    data = AlfredILDataset(
        args.data,
        cfg.splits,
        "train",
        vocab=cfg.vocab,
        mask_size=cfg.dims["pframe"],
        max_examples=args.examples,
    )
    loss = AlfredSeq2SeqOfflineLoss(cfg.loss_weights(), ACTION_NAMES)
    bar = tqdm(total=args.updates, desc="memorising", unit="update")

    def show(u: int, info: Dict[str, float]) -> None:
        bar.update(1)
        bar.set_postfix(ce=f"{info['action_low']:.4f}", mask=f"{info['action_low_mask']:.3f}")

    res = fit(
        model,
        data,
        loss,
        updates=args.updates,
        lr=args.lr,
        batch_size=len(data),
        seed=args.seed,
        stop_action_ce=args.stop_ce,
        on_update=show,
    )
    bar.close()
    save_policy(model, ckpt, total_steps=res.frames)
    return {
        "examples": [{"task": ex.task, "repeat_idx": ex.repeat_idx} for ex in data.examples],
        "frames_per_epoch": data.num_frames,
        "updates": len(res.history),
        "first": res.history[0],
        "last": res.history[-1],
        "eval_mode": held_out_losses(model, data, loss, len(data)),
        "frames_per_s": res.frames_per_s,
        "dims": cfg.dims,
    }


def closed_loop(args: argparse.Namespace, ckpt: Path, examples: list) -> Dict[str, Any]:
    from alfred_task.evaluation import cli as ev
    from alfred_task.evaluation.agents import agent_factory

    factory = agent_factory("checkpoint", path=str(ckpt))
    common = dict(split="train", max_steps=args.max_steps, num_workers=args.workers, progress=True)
    tasks = ev.evaluate_tasks(factory, examples, args.data, **common)
    subgoals = ev.evaluate_subgoals(factory, examples, args.data, "all", **common)
    return {
        "task": ev.task_results(tasks)["results"],
        "subgoal": ev.subgoal_results(subgoals, "train")["results"],
        "episodes": [
            {k: r.get(k) for k in ("trial", "repeat_idx", "success", "path_len", "num_fails")}
            for r in tasks
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("out/alfred_s2s_mem"))
    ap.add_argument("--encoder", default="random_resnet18")
    ap.add_argument(
        "--examples", type=int, default=3, help="first K train (trajectory, annotation) pairs"
    )
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument(
        "--stop-ce", type=float, default=1e-3, help="stop once a batch's action CE is below this"
    )
    ap.add_argument("--max-steps", type=int, default=200)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    stem = RESULTS_DIR / "alfred_seq2seq_memorise"
    fitted = train(args, stem.with_suffix(".pt"))
    evald = closed_loop(args, stem.with_suffix(".pt"), fitted["examples"])
    write_json(
        stem.with_suffix(".json"),
        {"args": {k: str(v) for k, v in vars(args).items()}, **fitted, **evald},
    )
    f, l, e = fitted["first"], fitted["last"], fitted["eval_mode"]
    sg = evald["subgoal"]
    rows = [
        ["action CE", f"{f['action_low']:.3f}", f"{l['action_low']:.4f}", f"{e['action_low']:.4f}"],
        [
            "mask loss",
            f"{f['action_low_mask']:.3f}",
            f"{l['action_low_mask']:.4f}",
            f"{e['action_low_mask']:.4f}",
        ],
    ]
    lines = [
        "# Memorisation: lite Seq2Seq+PM on its own training episodes",
        "",
        f"data {args.data}, first {args.examples} train pairs ({fitted['frames_per_epoch']} frames), dims "
        f"{fitted['dims']}, Adam {args.lr:g}, {fitted['updates']} updates (full batch), "
        f"{fitted['frames_per_s']:.0f} frames/s",
        "",
        *markdown_table(
            ["term", "update 1 (train mode)", "last update (train mode)", "after (eval mode)"],
            rows,
            "lrrr",
        ),
        "",
        f"closed loop on the same episodes (max_steps {args.max_steps}): task SR "
        f"{100 * evald['task']['all']['sr']:.1f} % (N={len(evald['episodes'])}), "
        f"GC {100 * evald['task']['all']['gc']:.1f} %, PLW-SR {100 * evald['task']['all']['plw_sr']:.1f} %",
        "",
        *markdown_table(
            ["subgoal", "evals", "SR", "PLW-SR"],
            [
                [k, str(v["evals"]), f"{100 * v['sr']:.1f}", f"{100 * v['sr_plw']:.1f}"]
                for k, v in sg.items()
            ],
            "lrrr",
        ),
    ]
    write_markdown(stem.with_suffix(".md"), "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)

"""Interaction masks learnt on the agent's own states: DAgger for the mask decoder alone.

Why: a Seq2Seq(+PM) trained on demonstrations sees interaction frames only from the expert's
interaction poses. In ALFRED's task evaluation the agent's own GotoLocation ends elsewhere (the
object smaller, off-centre), and there its pickup mask missed the target 64 of 73 times on
valid_seen although the target was in view in 53 (docs/logs/alfred_seq2seq_experiments.md).
Here the trained agent acts
exactly as in the task evaluation (`evaluation.episodes.run_task_episode`, its inference options, the
10-failure limit, a step cap) on *train* trajectories, and before every decision taken while the
subgoal tracker is on an object interaction whose object is in view, the step is labelled with
that object's instance mask in the current frame (what an expert pointing at the object it wants
would give; PutObject: the receptacle). The decoder features of those steps come from the agent's
own history. ``fit`` then trains only the mask decoder on these labels plus the demonstrations'
interaction steps (so the expert-pose masks are kept), with ALFRED's balanced mask BCE; everything
else is frozen, so actions, navigation and stopping are exactly the original checkpoint's.

    python -m experiments.alfred_masks.closed_loop_masks collect --checkpoint CKPT --data out/alfred_s2s_thor520 \\
        --split train --episodes 700 --seed 0 --shard 0/2 --out DIR      # and --shard 1/2 beside it
    python -m experiments.alfred_masks.closed_loop_masks fit --checkpoint CKPT --rollouts DIR \\
        --demos out/alfred_s2s_thor520 --seed 0 --out NEW_CKPT

``collect`` writes ``DIR/rollouts_<k>of<n>.pt`` (decoder features, frames, packed target masks,
and the task records of the rollouts); ``fit`` writes the new checkpoint (the original's record,
options and every other tensor unchanged, in the original's dtype), ``NEW_CKPT.json`` (settings,
losses, held-out hit rates) and a PNG of the curves beside it.
"""

from __future__ import annotations

import argparse
import json
import random
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_file,
    check_int,
    check_output_dir,
    check_output_file,
    parse_json_object,
    print_error,
)
from common.procs import stop_children_on_signals

from alfred_task import constants as C

__all__ = [
    "LABELLED_SUBGOALS",
    "MIN_TARGET_PIXELS",
    "StepLabeller",
    "collect",
    "fit",
    "shift_cells",
    "top_k_precision",
    "main",
]

#: interaction subgoals whose mask target is one object, and the planner field that names it
LABELLED_SUBGOALS = {
    "PickupObject": "objectId",
    "SliceObject": "objectId",
    "ToggleObject": "objectId",
    "PutObject": "receptacleObjectId",
}
#: fewer target pixels than this (of 300×300) and the step is not labelled: barely in view
MIN_TARGET_PIXELS = 25
#: the pickup mask rule of the shipped checkpoints (`top_k:700@PickupObject+SliceObject`): the
#: held-out hit rate counts a mask as on target when most of its 700 most confident pixels are
HIT_TOP_K = 700
ROLLOUT_GLOB = "rollouts_*of*.pt"
#: where the mask decoder's tensors live in a checkpoint's ``model_state_dict``
MASK_DECODER_PREFIX = "seq2seq.dec.mask_dec."


class StepLabeller:
    """`run_task_episode`'s ``before_step``: records (subgoal, decoder features, frame features,
    target mask) for the steps defined in the module doc, and the target's object type (and, with
    `keep_rgb`, the RGB frame: for probes of other visual inputs). The agent's decoder step is
    repeated here without changing its state (its features are memoised by frame)."""

    def __init__(self, env, agent, keep_rgb: bool = False) -> None:
        self.env, self.agent, self.keep_rgb = env, agent, keep_rgb
        self.rows: List[Tuple[str, Any, Any, np.ndarray, int]] = []
        self.target_types: List[str] = []
        self.rgb: List[Any] = []

    def __call__(self, tracker) -> None:
        import torch

        if tracker is None:
            return
        cur = tracker.current() or {}
        field = LABELLED_SUBGOALS.get(cur.get("action"))
        target = tracker.rid(cur.get(field)) if field else None
        mask = self.env.last_event.instance_masks.get(target) if target else None
        if mask is None:
            return
        mask = np.asarray(mask, dtype=bool)
        if int(mask.sum()) < MIN_TARGET_PIXELS:
            return
        with torch.no_grad():
            _lo, cont, _h, _c, feat = self.agent._decode(np.asarray(self.env.last_event.frame))  # noqa: SLF001
        self.rows.append(
            (cur["action"], cont[0].clone(), feat[0].half(), np.packbits(mask), mask.shape[0])
        )
        self.target_types.append(target.split("|")[0])
        if self.keep_rgb:
            self.rgb.append(torch.from_numpy(np.array(self.env.last_event.frame, dtype=np.uint8)))


def _shard(text: str) -> Tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard must be K/N with 0 <= K < N, got {text!r}") from None
    if not 0 <= k < n:
        raise UsageError(f"--shard must be K/N with 0 <= K < N, got {text!r}")
    return k, n


def _sample(entries: Sequence, episodes: int, seed: int) -> List[int]:
    """A seeded subset of entry indices, in split-file order (annotations of a trajectory stay adjacent)."""
    n = min(episodes, len(entries))
    return sorted(random.Random(seed).sample(range(len(entries)), n))


def _episodes_in(folder: Path) -> set:
    """(trial, repeat_idx) of every episode the rollout files in `folder` hold."""
    import torch

    files = sorted(folder.glob(ROLLOUT_GLOB))
    if not files:
        raise UsageError(f"--exclude-from {folder}: no {ROLLOUT_GLOB} files")
    return {
        (r["trial"], r["repeat_idx"])
        for f in files
        for r in torch.load(f, map_location="cpu", weights_only=False, mmap=True)["records"]
    }


def collect(
    checkpoint: Path,
    data: Path,
    split: str,
    episodes: int,
    seed: int,
    out: Path,
    shard: Tuple[int, int] = (0, 1),
    max_steps: int = 60,
    agent_kwargs: Optional[Dict[str, Any]] = None,
    keep_rgb: bool = False,
    exclude_from: Optional[Path] = None,
) -> Dict[str, Any]:
    """Roll the checkpoint's agent out on a seeded subset of `split` (this shard's part) and save
    the labelled steps (module doc; `keep_rgb` adds their RGB frames, 270 kB each). Episodes that
    the rollouts in `exclude_from` already hold are left out (to add the rest of a split later).
    Returns a summary."""
    import torch
    from tqdm import tqdm

    from common.atomic_io import atomic_open

    from alfred_task.evaluation.agents import CheckpointAgent
    from alfred_task.evaluation.episodes import run_task_episode
    from alfred_task.evaluation.inputs import load_traj, resolve_entries
    from alfred_task.evaluation.runner import make_env

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    agent = CheckpointAgent(checkpoint, **(agent_kwargs or {})).inner
    entries = resolve_entries(data, data / "splits.json", split)
    done = _episodes_in(exclude_from) if exclude_from is not None else set()
    keep = [
        i for i, e in enumerate(entries) if (Path(e.path).parent.name, e.repeat_idx) not in done
    ]
    picked = [keep[i] for i in _sample([entries[k] for k in keep], episodes, seed)][
        shard[0] :: shard[1]
    ]
    env = make_env("thor_lite", C.MASK_SHAPE[0])
    labeller = StepLabeller(env, agent, keep_rgb)
    records, episode_of_row = [], []
    for i in tqdm(picked, desc=f"rollouts {shard[0]}/{shard[1]}", unit="ep"):
        e = entries[i]
        before = len(labeller.rows)
        rec = run_task_episode(
            env, agent, load_traj(e.path), e.repeat_idx, max_steps=max_steps, before_step=labeller
        )
        records.append(rec)
        episode_of_row += [len(records) - 1] * (len(labeller.rows) - before)
    rows = labeller.rows
    side = rows[0][4] if rows else C.MASK_SHAPE[0]
    blob = {
        "meta": {
            "checkpoint": str(checkpoint),
            "data": str(data),
            "split": split,
            "episodes": episodes,
            "seed": seed,
            "shard": list(shard),
            "max_steps": max_steps,
            "agent_kwargs": agent_kwargs or {},
            "mask_side": side,
            "min_target_pixels": MIN_TARGET_PIXELS,
        },
        "records": records,
        "subgoal": [r[0] for r in rows],
        "episode": torch.tensor(episode_of_row, dtype=torch.long),
        "cont": torch.stack([r[1] for r in rows]) if rows else torch.zeros(0),
        "frames": torch.stack([r[2] for r in rows]) if rows else torch.zeros(0),
        "masks": torch.from_numpy(np.stack([r[3] for r in rows]))
        if rows
        else torch.zeros(0, dtype=torch.uint8),
        "target_type": list(labeller.target_types),
    }
    if keep_rgb:
        blob["rgb"] = torch.stack(labeller.rgb) if rows else torch.zeros(0, dtype=torch.uint8)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"rollouts_{shard[0]}of{shard[1]}.pt"
    with atomic_open(path, "wb") as f:
        torch.save(blob, f)
    by_type: Dict[str, int] = {}
    for r in rows:
        by_type[r[0]] = by_type.get(r[0], 0) + 1
    gc = [r["goal_condition_success"] for r in records if "goal_condition_success" in r]
    return {
        "file": str(path),
        "episodes": len(records),
        "labelled_steps": len(rows),
        "by_subgoal": by_type,
        "mean_gc": float(np.mean(gc)) if gc else None,
    }


# --- fitting --------------------------------------------------------------------------------------
def _unpack(packed: Any, side: int, size: int):
    """Packed bool masks [N, side*side/8] -> float masks [N, size, size] (nearest resize, as the
    demonstrations' masks are resized in `il_dataset`)."""
    import torch

    m = np.unpackbits(np.asarray(packed), axis=1)[:, : side * side].reshape(-1, side, side)
    t = torch.from_numpy(m.astype(np.float32))
    if side != size:
        t = torch.nn.functional.interpolate(t[:, None], size=(size, size), mode="nearest")[:, 0]
    return t


def load_rollouts(folder: Path, size: int) -> Dict[str, Any]:
    """Every ``rollouts_*of*.pt`` under `folder`, concatenated; episodes get ids unique across files."""
    import torch

    files = sorted(folder.glob(ROLLOUT_GLOB))
    if not files:
        raise UsageError(f"--rollouts {folder}: no {ROLLOUT_GLOB} files (run `collect` first)")
    parts, records, offset, extra = [], [], 0, {"target_type": [], "rgb": []}
    for f in files:
        b = torch.load(f, map_location="cpu", weights_only=False)
        if len(b["subgoal"]):
            parts.append(
                (
                    b["subgoal"],
                    b["episode"] + offset,
                    b["cont"],
                    b["frames"],
                    _unpack(b["masks"].numpy(), b["meta"]["mask_side"], size),
                )
            )
            extra["target_type"].append(b.get("target_type"))
            extra["rgb"].append(b.get("rgb"))
        offset += len(b["records"])
        records += b["records"]
    if not parts:
        raise UsageError(f"--rollouts {folder}: the rollouts have no labelled step")
    trial_of = [
        f"{r['trial']}#{r['repeat_idx']}" for r in records
    ]  # by episode id, over every file
    return {
        "subgoal": [s for p in parts for s in p[0]],
        "episode": torch.cat([p[1] for p in parts]),
        "cont": torch.cat([p[2] for p in parts]),
        "frames": torch.cat([p[3] for p in parts]),
        "masks": torch.cat([p[4] for p in parts]),
        "records": records,
        "files": [str(f) for f in files],
        "trial_of": trial_of,
        # only when every file has them (`collect --keep-rgb`; target types in newer files)
        "target_type": (
            None
            if any(t is None for t in extra["target_type"])
            else [t for ts in extra["target_type"] for t in ts]
        ),
        "rgb": None if any(r is None for r in extra["rgb"]) else torch.cat(extra["rgb"]),
    }


def demo_interaction_steps(
    policy, data: Path, vocab, limit: Optional[int], batch_size: int = 16
) -> Dict[str, Any]:
    """Decoder features, frames and gold masks of every interaction step of the demonstrations
    (`data`'s train split), computed with the frozen model teacher-forced as the agent acts: the
    previous-action input is the expert's action when the policy feeds the action taken
    (``prev_action_input="taken"``), else the model's own argmax."""
    import torch

    from alfred_task.data.il_dataset import AlfredILDataset

    model = policy.seq2seq
    ds = AlfredILDataset(
        data, data / "splits.json", "train", vocab=vocab, mask_size=model.pframe, max_examples=limit
    )
    saved = model.dec_teacher_forcing
    model.dec_teacher_forcing = policy.prev_action_input == "taken"
    try:
        conts, frames, masks = _demo_steps(model, ds, batch_size)
    finally:
        model.dec_teacher_forcing = saved
    return {"cont": torch.cat(conts), "frames": torch.cat(frames), "masks": torch.cat(masks)}


def _demo_steps(model, ds, batch_size: int):
    import torch
    from tqdm import tqdm

    conts, frames, masks = [], [], []
    with torch.no_grad():
        for b in tqdm(
            ds.batches(batch_size, shuffle=False),
            total=-(-len(ds) // batch_size),
            desc="demonstration interactions",
            unit="batch",
        ):
            sel = b["action_low_valid_interact"]
            out = model(
                b["lang_goal"], b["lang_instr"], b["frames"], b["action_low"], mask_steps=sel
            )
            conts.append(out.cont[sel])
            frames.append(model.prepare_frames(b["frames"])[sel].half())
            masks.append(b["action_low_mask"])
    return conts, frames, masks


def top_k_precision(logits, gold, k: int = HIT_TOP_K):
    """Per mask, the fraction of its k most confident pixels (after resizing to 300×300, as the
    agent's mask rule does) that lie on the gold mask [N, P, P]."""
    import torch

    from alfred_task.models.mask_rules import frame_logits

    big = frame_logits(logits, C.MASK_SHAPE).flatten(1)
    g = torch.nn.functional.interpolate(gold[:, None].float(), size=C.MASK_SHAPE, mode="nearest")[
        :, 0
    ].flatten(1)
    idx = big.topk(k, dim=1).indices
    return g.gather(1, idx).mean(1)


def _evaluate(mask_dec, data: Dict[str, Any], idx, batch: int = 64) -> Dict[str, float]:
    import torch

    from alfred_task.models.losses import balanced_mask_bce

    mask_dec.eval()
    losses, prec = [], []
    with torch.no_grad():
        for i in range(0, len(idx), batch):
            j = idx[i : i + batch]
            lo = mask_dec(data["cont"][j], data["frames"][j].float())
            losses.append(float(balanced_mask_bce(lo, data["masks"][j])) * len(j))
            prec.append(top_k_precision(lo, data["masks"][j]))
    p = torch.cat(prec) if prec else torch.zeros(0)
    return {
        "bce": sum(losses) / max(1, len(idx)),
        "top_k_on_target": float(p.mean()) if len(p) else float("nan"),
        "hit_rate": float((p > 0.5).float().mean()) if len(p) else float("nan"),
        "n": len(idx),
    }


def shift_cells(frames, masks, shifts):
    """Translate each frame's 7×7 feature map by (dy, dx) whole cells and its gold mask [P, P] by the
    same fraction of the image, filling with zeros (what nothing in view looks like after a ReLU).

    Why: at the expert's interaction poses the target sits near the image centre, so a mask decoder
    can fit the demonstrations with a position prior instead of finding the object in the features,
    and that prior misses after the agent's own approach. Shifted copies keep the object and its
    label together but move them, so only the features tell where the target is. (Convolutional
    features are close to translation-equivariant at cell granularity; the decoder state is left as
    computed on the unshifted frame, i.e. the instruction and history are unchanged.)"""
    import torch

    out_f, out_m = torch.zeros_like(frames), torch.zeros_like(masks)
    cells, side = frames.shape[-1], masks.shape[-1]
    for i, (dy, dx) in enumerate(shifts.tolist()):
        py, px = round(dy * side / cells), round(dx * side / cells)
        out_f[i, :, max(dy, 0) : cells + min(dy, 0), max(dx, 0) : cells + min(dx, 0)] = frames[
            i, :, max(-dy, 0) : cells - max(dy, 0), max(-dx, 0) : cells - max(dx, 0)
        ]
        out_m[i, max(py, 0) : side + min(py, 0), max(px, 0) : side + min(px, 0)] = masks[
            i, max(-py, 0) : side - max(py, 0), max(-px, 0) : side - max(px, 0)
        ]
    return out_f, out_m


def held_out_split(trials: Sequence[str], episode: Any, frac: float, seed: int):
    """Row indices of train / held-out rollout steps, split by trajectory (a stable hash), so the
    annotations of one trajectory are on one side."""
    import torch

    names = sorted({t.split("#")[0] for t in trials})
    held = {n for n in names if zlib.crc32(f"{seed}:{n}".encode()) % 1000 < frac * 1000}
    ep_held = torch.tensor([t.split("#")[0] in held for t in trials], dtype=torch.bool)
    rows_held = ep_held[episode]
    return torch.nonzero(~rows_held).flatten(), torch.nonzero(rows_held).flatten()


def fit(
    checkpoint: Path,
    rollouts: Path,
    demos: Path,
    out: Path,
    steps: int = 2000,
    batch: int = 32,
    lr: float = 3e-4,
    seed: int = 0,
    demo_fraction: float = 0.5,
    held_out: float = 0.1,
    demo_limit: Optional[int] = None,
    eval_every: int = 250,
    shift: int = 0,
) -> Dict[str, Any]:
    """Train the checkpoint's mask decoder on rollout labels + demonstration interactions (module
    doc) and save the new checkpoint at `out`. Returns the run's summary (also ``out``.json)."""
    import torch
    from tqdm import tqdm

    from common.atomic_io import write_json_atomic

    from alfred_task.evaluation.agents import CheckpointAgent
    from alfred_task.models.losses import balanced_mask_bce

    torch.manual_seed(seed)
    agent = CheckpointAgent(checkpoint).inner
    model = agent.model.eval()
    size = model.pframe
    cl = load_rollouts(rollouts, size)
    if cl["cont"].shape[1] != model.dec.cont_dim:
        raise UsageError(
            f"--rollouts {rollouts}: decoder features of width {cl['cont'].shape[1]}, but "
            f"{checkpoint} has {model.dec.cont_dim}: the rollouts were collected with another model"
        )
    demo = demo_interaction_steps(agent.policy, demos, agent.vocab, demo_limit)
    tr, ho = held_out_split(cl["trial_of"], cl["episode"], held_out, seed)
    if not len(tr):
        raise UsageError(
            f"--rollouts {rollouts}: every labelled step is held out ({held_out:.0%} of the "
            f"trajectories); collect more episodes"
        )
    gen = torch.Generator().manual_seed(seed)
    demo_ho = torch.randperm(len(demo["cont"]), generator=gen)[: len(ho)]
    demo_tr = torch.tensor(
        sorted(set(range(len(demo["cont"]))) - set(demo_ho.tolist())), dtype=torch.long
    )
    mask_dec = _only_mask_decoder_trains(model)
    opt = torch.optim.Adam(mask_dec.parameters(), lr=lr)
    n_demo = int(round(batch * demo_fraction))
    curve: List[Dict[str, Any]] = []
    tr_probe = tr[torch.randperm(len(tr), generator=gen)[:512]]

    def log(step: int) -> None:
        row = {
            "step": step,
            "rollouts_train": _evaluate(mask_dec, cl, tr_probe),
            "rollouts_held_out": _evaluate(mask_dec, cl, ho),
            "demos_held_out": _evaluate(mask_dec, demo, demo_ho),
        }
        pick = torch.tensor(
            [i for i in ho.tolist() if cl["subgoal"][i] in ("PickupObject", "SliceObject")],
            dtype=torch.long,
        )
        row["pickups_held_out"] = _evaluate(mask_dec, cl, pick)
        curve.append(row)

    log(0)
    train_losses = []
    for step in tqdm(range(1, steps + 1), desc="fit mask decoder", unit="step"):
        mask_dec.train()
        a = tr[torch.randint(len(tr), (batch - n_demo,), generator=gen)]
        d = demo_tr[torch.randint(len(demo_tr), (n_demo,), generator=gen)]
        cont = torch.cat([cl["cont"][a], demo["cont"][d]])
        frames = torch.cat([cl["frames"][a], demo["frames"][d]]).float()
        gold = torch.cat([cl["masks"][a], demo["masks"][d]])
        if shift:  # half of the batch moved by up to `shift` cells each way (`shift_cells`)
            moved = torch.rand(len(gold), generator=gen) < 0.5
            shifts = (
                torch.randint(-shift, shift + 1, (len(gold), 2), generator=gen) * moved[:, None]
            )
            frames, gold = shift_cells(frames, gold, shifts)
        loss = balanced_mask_bce(mask_dec(cont, frames), gold)
        opt.zero_grad()
        loss.backward()
        opt.step()
        train_losses.append(loss.item())
        if step % eval_every == 0 or step == steps:
            log(step)
            curve[-1]["train_bce"] = float(np.mean(train_losses[-eval_every:]))
    mask_dec.eval()

    _write_checkpoint(checkpoint, out, mask_dec.state_dict())
    summary = {
        "checkpoint": str(checkpoint),
        "out": str(out),
        "rollouts": cl["files"],
        "demos": str(demos),
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "seed": seed,
        "demo_fraction": demo_fraction,
        "shift": shift,
        "held_out": held_out,
        "rollout_steps": {"train": len(tr), "held_out": len(ho)},
        "demo_steps": {"train": len(demo_tr), "held_out": len(demo_ho)},
        "rollout_episodes": len(cl["records"]),
        "curve": curve,
    }
    write_json_atomic(out.with_suffix(".json"), summary)
    _plot(curve, out.with_suffix(".png"))
    return summary


def _only_mask_decoder_trains(model):
    """Freeze every parameter of the Seq2Seq `model` but its mask decoder's; returns the decoder."""
    for p in model.parameters():
        p.requires_grad_(False)
    for p in model.dec.mask_dec.parameters():
        p.requires_grad_(True)
    return model.dec.mask_dec


def _write_checkpoint(checkpoint: Path, out: Path, mask_dec_state: Dict[str, Any]) -> None:
    """`checkpoint` with its mask decoder's tensors replaced (each in the file's dtype), written
    atomically to `out`; everything else (other weights, the evaluation record) as it was."""
    import torch

    from common.atomic_io import atomic_open

    full = torch.load(checkpoint, map_location="cpu", weights_only=False)
    state = dict(full["model_state_dict"])
    new = {MASK_DECODER_PREFIX + k: v for k, v in mask_dec_state.items()}
    missing = [k for k in new if k not in state]
    if missing:
        raise RuntimeError(f"{checkpoint}: mask decoder keys {missing[:3]} not in its state dict")
    for k, v in new.items():
        state[k] = v.to(state[k].dtype) if state[k].is_floating_point() else v
    full["model_state_dict"] = state
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "wb") as f:
        torch.save(full, f)


def _plot(curve: List[Dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from common.atomic_io import atomic_open

    steps = [r["step"] for r in curve]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (
        ("rollouts_train", "own-state steps (fitted)"),
        ("rollouts_held_out", "own-state steps (held-out trajectories)"),
        ("pickups_held_out", "own-state pickups (held-out trajectories)"),
        ("demos_held_out", "demonstration steps (not fitted here)"),
    ):
        ax[0].plot(steps, [r[key]["bce"] for r in curve], label=label)
        ax[1].plot(steps, [r[key]["hit_rate"] for r in curve], label=label)
    ax[0].set(xlabel="update", ylabel="balanced mask BCE", title="mask loss")
    ax[1].set(
        xlabel="update",
        ylabel=f"share with most of the top {HIT_TOP_K} px on target",
        title="hit rate",
    )
    for a in ax:
        a.legend(fontsize=8)
    fig.tight_layout()
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="python -m experiments.alfred_masks.closed_loop_masks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="roll the agent out and label its interaction steps")
    c.add_argument("--checkpoint", type=Path, required=True)
    c.add_argument("--data", type=Path, required=True, help="dataset root with splits.json")
    c.add_argument("--split", default="train")
    c.add_argument(
        "--episodes", type=int, default=700, help="(trajectory, annotation) pairs, a seeded subset"
    )
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--shard", default="0/1", help="K/N: this process's share of the episodes")
    c.add_argument("--max-steps", type=int, default=60)
    c.add_argument(
        "--agent-kwargs",
        default=None,
        metavar="JSON",
        help="inference options (default: the checkpoint's)",
    )
    c.add_argument(
        "--keep-rgb", action="store_true", help="also store each labelled step's RGB frame"
    )
    c.add_argument(
        "--exclude-from",
        type=Path,
        default=None,
        help="leave out the episodes of the rollouts in this folder (collect the rest of a split)",
    )
    c.add_argument("--out", type=Path, required=True, help="folder for rollouts_<K>of<N>.pt")
    f = sub.add_parser(
        "fit", help="train the mask decoder on the collected labels + demonstrations"
    )
    f.add_argument("--checkpoint", type=Path, required=True)
    f.add_argument("--rollouts", type=Path, required=True, help="the folder `collect` wrote")
    f.add_argument(
        "--demos",
        type=Path,
        required=True,
        help="dataset root whose train split holds the demonstrations",
    )
    f.add_argument(
        "--demo-limit", type=int, default=None, help="first N demonstration sequences only"
    )
    f.add_argument("--steps", type=int, default=2000)
    f.add_argument("--batch", type=int, default=32)
    f.add_argument("--lr", type=float, default=3e-4)
    f.add_argument(
        "--demo-fraction",
        type=float,
        default=0.5,
        help="share of each batch from the demonstrations",
    )
    f.add_argument(
        "--shift",
        type=int,
        default=0,
        help="translate half of each batch by up to this many feature cells (see shift_cells)",
    )
    f.add_argument(
        "--eval-every", type=int, default=250, help="held-out evaluation every N updates"
    )
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", type=Path, required=True, help="the new checkpoint file")
    args = ap.parse_args(argv)
    try:
        check_input_file("--checkpoint", args.checkpoint)
        if args.cmd == "collect":
            check_int("--episodes", args.episodes, 1)
            check_int("--max-steps", args.max_steps, 1)
            shard = _shard(args.shard)
            kwargs = parse_json_object("--agent-kwargs", args.agent_kwargs, UsageError)
            if not (args.data / "splits.json").is_file():
                raise UsageError(f"--data {args.data}: no splits.json")
            check_output_dir("--out", args.out)
            with stop_children_on_signals(ap.prog):
                summary = collect(
                    args.checkpoint,
                    args.data,
                    args.split,
                    args.episodes,
                    args.seed,
                    args.out,
                    shard,
                    args.max_steps,
                    kwargs,
                    args.keep_rgb,
                    args.exclude_from,
                )
        else:
            check_int("--steps", args.steps, 1)
            check_int("--batch", args.batch, 2)
            check_int("--shift", args.shift, 0)
            check_int("--eval-every", args.eval_every, 1)
            if args.shift > 6:
                raise UsageError(f"--shift must be at most 6 (a 7×7 feature map), got {args.shift}")
            if not 0.0 <= args.demo_fraction < 1.0:
                raise UsageError(f"--demo-fraction must be in [0, 1), got {args.demo_fraction}")
            if not args.lr > 0:
                raise UsageError(f"--lr must be > 0, got {args.lr}")
            if not (args.demos / "splits.json").is_file():
                raise UsageError(f"--demos {args.demos}: no splits.json")
            if not sorted(args.rollouts.glob(ROLLOUT_GLOB)):
                raise UsageError(
                    f"--rollouts {args.rollouts}: no {ROLLOUT_GLOB} files (run `collect` first)"
                )
            check_output_file("--out", args.out)
            with stop_children_on_signals(ap.prog):
                summary = fit(
                    args.checkpoint,
                    args.rollouts,
                    args.demos,
                    args.out,
                    args.steps,
                    args.batch,
                    args.lr,
                    args.seed,
                    args.demo_fraction,
                    demo_limit=args.demo_limit,
                    eval_every=args.eval_every,
                    shift=args.shift,
                )
                summary = {k: v for k, v in summary.items() if k != "curve"} | {
                    "last": summary["curve"][-1],
                    "first": summary["curve"][0],
                }
    except (UsageError, FileNotFoundError, ValueError) as e:
        return print_error(ap.prog, e)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

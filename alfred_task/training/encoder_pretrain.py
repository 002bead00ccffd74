"""Train a ResNet-18 visual encoder on thor_lite frames (dense object-type prediction).

Why: without network access there are no ImageNet weights, and a randomly initialised ResNet-18
barely tells a pen from a countertop at 7×7 resolution, so the Seq2Seq mask decoder cannot find
small objects (teacher-forced pickup masks resolved to the right object 28 % of the time, on
train as on held-out frames). This module replays train-split demonstrations, labels every frame
with which object types cover each cell of a ``grid``×``grid`` lattice (from instance masks; the
same labels real THOR gives), and trains ResNet-18 from a seeded initialisation so that its
512×7×7 conv features predict that lattice through a 1×1 conv + pixel shuffle head: each 7×7
feature cell has to say *what* is where inside its patch. The file it writes is a plain
torchvision resnet18 ``state_dict`` (int8 conv weights, ~12 MB), accepted everywhere an encoder is named
(``--features <file>``, ``"visual_encoder": "<file>"``); a JSON record sits next to it.

Only train-split trajectories are read: valid_unseen floor plans stay unseen by the encoder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from common.cli import OneLineArgumentParser, UsageError, check_int, check_output_file, print_error
from common.procs import stop_children_on_signals

DEFAULT_GRID = 28
#: a type "covers" a lattice cell when it has at least this fraction of the cell's pixels
DEFAULT_MIN_FRACTION = 0.05
INPUT_SIZE = 224

__all__ = [
    "TypeVocab",
    "cell_targets",
    "collect_frames",
    "EncoderPretrainNet",
    "train_encoder",
    "main",
]


class TypeVocab:
    """Object type <-> index, grown while frames are collected (sorted at the end)."""

    def __init__(self) -> None:
        self.index: Dict[str, int] = {}

    def __call__(self, object_id: str) -> int:
        t = object_id.split("|")[0]
        if t not in self.index:
            self.index[t] = len(self.index)
        return self.index[t]

    def __len__(self) -> int:
        return len(self.index)

    def names(self) -> List[str]:
        return sorted(self.index, key=self.index.__getitem__)


def cell_targets(
    masks: Mapping[str, np.ndarray],
    vocab: TypeVocab,
    grid: int = DEFAULT_GRID,
    min_fraction: float = DEFAULT_MIN_FRACTION,
) -> np.ndarray:
    """Sparse labels of one frame: int32 array [K, 2] of (cell index, type index) pairs.

    Cell index is row * grid + col of the lattice cell containing a pixel; a (cell, type) pair
    is kept when the type's pixels fill at least `min_fraction` of the cell.
    """
    if not masks:
        return np.zeros((0, 2), np.int32)
    h, w = next(iter(masks.values())).shape
    rows = (np.arange(h) * grid) // h
    cols = (np.arange(w) * grid) // w
    cell_of_pixel = rows[:, None] * grid + cols[None, :]
    cell_area = np.bincount(cell_of_pixel.ravel(), minlength=grid * grid).astype(np.float64)
    pairs: Dict[Tuple[int, int], float] = {}
    for oid in sorted(masks):
        m = np.asarray(masks[oid], dtype=bool)
        if not m.any():
            continue
        counts = np.bincount(cell_of_pixel[m], minlength=grid * grid)
        t = vocab(oid)
        for c in np.flatnonzero(counts):
            pairs[(int(c), t)] = pairs.get((int(c), t), 0.0) + float(counts[c])
    keep = [(c, t) for (c, t), n in pairs.items() if n >= min_fraction * cell_area[c]]
    return np.asarray(sorted(keep), np.int32).reshape(-1, 2)


def _resize_224(frame: np.ndarray) -> np.ndarray:
    """The resize `ResnetFeatures.encode` applies (bilinear to 224×224), done once up front."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(frame)).permute(2, 0, 1)[None].float()
    x = torch.nn.functional.interpolate(
        x, size=(INPUT_SIZE, INPUT_SIZE), mode="bilinear", align_corners=False
    )
    return x[0].permute(1, 2, 0).round().clamp(0, 255).to(torch.uint8).numpy()


def train_trajectories(data_root: Path, split: str = "train") -> List[Path]:
    """Every ``traj_data.json`` under ``data_root/split``, sorted (deterministic order)."""
    root = Path(data_root) / split
    if not root.is_dir():
        raise FileNotFoundError(
            f"{root}: no such split folder (make one with python -m alfred_task.gen)"
        )
    files = sorted(
        p for p in root.glob("*/*/traj_data.json") if not p.parent.name.startswith(".tmp")
    )
    if not files:
        raise FileNotFoundError(f"{root}: no */*/traj_data.json files")
    return files


def collect_frames(
    files: Sequence[Path],
    every: int = 1,
    grid: int = DEFAULT_GRID,
    min_fraction: float = DEFAULT_MIN_FRACTION,
    backend: Optional[str] = None,
    progress: bool = True,
) -> Tuple[np.ndarray, List[np.ndarray], List[int], TypeVocab]:
    """Replay each trajectory; keep every `every`-th frame (resized to 224²) with its labels.

    Returns (frames uint8 [N, 224, 224, 3], labels per frame, trajectory index per frame, vocab).
    A trajectory whose replay fails is kept up to the failing step (its frames are still real).
    """
    from tqdm import tqdm

    from alfred_task.env.environment import AlfredEnv
    from alfred_task.data.masks import decompress_mask

    env = AlfredEnv() if backend is None else AlfredEnv(backend=backend)
    vocab = TypeVocab()
    frames: List[np.ndarray] = []
    labels: List[np.ndarray] = []
    owner: List[int] = []
    step = 0
    for ti, path in enumerate(tqdm(files, desc="replaying", unit="traj", disable=not progress)):
        traj = json.loads(Path(path).read_text())
        env.init_episode(traj)
        actions = traj["plan"]["low_actions"]
        for k in range(len(actions) + 1):
            if step % every == 0:
                ev = env.last_event
                frames.append(_resize_224(ev.frame))
                labels.append(cell_targets(ev.instance_masks, vocab, grid, min_fraction))
                owner.append(ti)
            step += 1
            if k == len(actions):
                break
            d = actions[k]["discrete_action"]
            mask = decompress_mask(d["args"]["mask"]) if d["args"].get("mask") else None
            if not env.va_interact(d["action"], mask)[0]:
                break
    return np.stack(frames), labels, owner, vocab


def EncoderPretrainNet(num_types: int, grid: int = DEFAULT_GRID, seed: int = 0):
    """ResNet-18 (seeded torchvision init) + 1×1 conv + pixel shuffle to [B, num_types, grid, grid]."""
    import torch
    import torchvision

    if grid % 7:
        raise ValueError(f"grid must be a multiple of 7 (the feature map is 7×7), got {grid}")
    up = grid // 7

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                self.resnet = torchvision.models.resnet18(weights=None)
                self.head = torch.nn.Conv2d(512, num_types * up * up, kernel_size=1)
            self.body = torch.nn.Sequential(*list(self.resnet.children())[:-2])
            self.shuffle = torch.nn.PixelShuffle(up)

        def forward(self, x):
            return self.shuffle(self.head(self.body(x)))

    return Net()


def _dense(labels: Sequence[np.ndarray], num_types: int, grid: int):
    import torch

    out = torch.zeros(len(labels), num_types, grid * grid)
    for i, lab in enumerate(labels):
        if len(lab):
            out[i, torch.from_numpy(lab[:, 1]).long(), torch.from_numpy(lab[:, 0]).long()] = 1.0
    return out.view(len(labels), num_types, grid, grid)


def _batch(frames: np.ndarray, idx: np.ndarray, flip: Optional[np.ndarray] = None):
    import torch

    from alfred_task.data.features import IMAGENET_MEAN, IMAGENET_STD

    x = torch.from_numpy(frames[idx]).permute(0, 3, 1, 2).float() / 255.0
    x = (x - torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)) / torch.tensor(IMAGENET_STD).view(
        1, 3, 1, 1
    )
    if flip is not None and flip.any():
        x[torch.from_numpy(flip)] = x[torch.from_numpy(flip)].flip(-1)
    return x


def _scores(logits, target) -> Dict[str, float]:
    """Cell-level precision/recall at 0.5 and the BCE, over all (cell, type) pairs."""
    import torch

    pred = logits > 0
    tp = float((pred & (target > 0.5)).sum())
    return {
        "bce": float(torch.nn.functional.binary_cross_entropy_with_logits(logits, target)),
        "precision": tp / max(1.0, float(pred.sum())),
        "recall": tp / max(1.0, float((target > 0.5).sum())),
    }


def train_encoder(
    frames: np.ndarray,
    labels: Sequence[np.ndarray],
    owner: Sequence[int],
    num_types: int,
    epochs: float = 2.0,
    batch: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    grid: int = DEFAULT_GRID,
    held_out_fraction: float = 0.1,
    log_dir: Optional[Path] = None,
    progress: bool = True,
) -> Tuple[Any, Dict[str, Any]]:
    """Train `EncoderPretrainNet`; held-out frames are whole trajectories (last `held_out_fraction`).

    Returns (net, record with per-evaluation train/held-out scores).
    """
    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    owner = np.asarray(owner)
    n_traj = int(owner.max()) + 1
    cut = n_traj - max(1, int(round(n_traj * held_out_fraction)))
    train_idx = np.flatnonzero(owner < cut)
    held_idx = np.flatnonzero(owner >= cut)
    if len(train_idx) == 0:
        raise ValueError("no training frames left after holding out trajectories")
    net = EncoderPretrainNet(num_types, grid, seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    total = int(math.ceil(epochs * len(train_idx) / batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, pct_start=0.1)
    writer = None
    if log_dir is not None:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(log_dir))
    held = (
        held_idx[np.linspace(0, len(held_idx) - 1, min(256, len(held_idx))).astype(int)]
        if len(held_idx)
        else held_idx
    )
    history: List[Dict[str, Any]] = []

    def evaluate(update: int, train_bce: float) -> None:
        rec: Dict[str, Any] = {"update": update, "train_bce_running": train_bce}
        if len(held):
            net.eval()
            with torch.no_grad():
                outs = [net(_batch(frames, held[i : i + 64])) for i in range(0, len(held), 64)]
            net.train()
            rec["held_out"] = _scores(
                torch.cat(outs), _dense([labels[i] for i in held], num_types, grid)
            )
        history.append(rec)
        if writer is not None:
            writer.add_scalar("train/bce", train_bce, update)
            for k, v in rec.get("held_out", {}).items():
                writer.add_scalar(f"held_out/{k}", v, update)

    order = np.concatenate([rng.permutation(train_idx) for _ in range(int(math.ceil(epochs)) + 1)])
    net.train()
    running = float("nan")
    eval_every = max(1, total // 8)
    bar = tqdm(range(total), desc="encoder", unit="upd", disable=not progress)
    for u in bar:
        idx = np.sort(order[u * batch : (u + 1) * batch])
        flip = rng.random(len(idx)) < 0.5
        x = _batch(frames, idx, flip)
        y = _dense([labels[i] for i in idx], num_types, grid)
        y[torch.from_numpy(flip)] = y[torch.from_numpy(flip)].flip(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        value = float(loss.detach())
        running = value if math.isnan(running) else 0.95 * running + 0.05 * value
        bar.set_postfix(bce=f"{running:.4f}")
        if (u + 1) % eval_every == 0 or u + 1 == total:
            evaluate(u + 1, running)
    if writer is not None:
        writer.close()
    net.eval()
    record = {
        "updates": total,
        "batch": batch,
        "lr": lr,
        "epochs": epochs,
        "seed": seed,
        "grid": grid,
        "train_frames": int(len(train_idx)),
        "held_out_frames": int(len(held_idx)),
        "held_out_trajectories": int(n_traj - cut),
        "history": history,
    }
    return net, record


def save_encoder(net: Any, out: Path, record: Mapping[str, Any]) -> Path:
    """Write the resnet18 state_dict (compact int8 form, `features.quantize_state`) to `out` and
    `out`.json atomically; returns the JSON path. The dequantized weights are the encoder."""
    import torch

    from common.atomic_io import write_json_atomic

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    from alfred_task.data.features import quantize_state

    # the classifier (fc) is never used for features; int8 conv weights keep the file at ~12 MB
    state = quantize_state(
        {k: v.detach().cpu() for k, v in net.resnet.state_dict().items() if not k.startswith("fc.")}
    )
    torch.save(state, tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    tmp.replace(out)
    meta = out.with_name(out.name + ".json")
    write_json_atomic(meta, {**record, "file_sha256": digest}, indent=2)
    return meta


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="python -m alfred_task.training.encoder_pretrain",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data",
        type=Path,
        required=True,
        help="dataset root with a train/ split (alfred_task.gen.generate)",
    )
    ap.add_argument(
        "--out", type=Path, required=True, help="where to write the resnet18 state_dict (.pt)"
    )
    ap.add_argument(
        "--every", type=int, default=2, help="keep every n-th replayed frame (default 2)"
    )
    ap.add_argument(
        "--max-trajectories", type=int, default=0, help="read at most this many (0: all)"
    )
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--grid", type=int, default=DEFAULT_GRID, help="label lattice (multiple of 7)")
    ap.add_argument("--min-fraction", type=float, default=DEFAULT_MIN_FRACTION)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--log-dir", type=Path, default=None, help="TensorBoard folder (default: <out>.tb)"
    )
    args = ap.parse_args(argv)
    try:
        check_int("--every", args.every, 1)
        check_int("--batch", args.batch, 1)
        check_int("--max-trajectories", args.max_trajectories, 0)
        check_int("--grid", args.grid, 7)
        if args.grid % 7:
            raise UsageError(f"--grid: must be a multiple of 7, got {args.grid}")
        if not args.epochs > 0:
            raise UsageError(f"--epochs: must be positive, got {args.epochs}")
        if not 0 < args.min_fraction <= 1:
            raise UsageError(f"--min-fraction: must be in (0, 1], got {args.min_fraction}")
        check_output_file("--out", args.out)
        files = train_trajectories(args.data)
    except (UsageError, FileNotFoundError) as e:
        return print_error(ap.prog, e)
    if args.max_trajectories:
        files = files[: args.max_trajectories]
    started = time.time()
    with stop_children_on_signals(ap.prog):
        frames, labels, owner, vocab = collect_frames(
            files, args.every, args.grid, args.min_fraction
        )
        net, record = train_encoder(
            frames,
            labels,
            owner,
            len(vocab),
            args.epochs,
            args.batch,
            args.lr,
            args.seed,
            args.grid,
            log_dir=args.log_dir or args.out.with_name(args.out.name + ".tb"),
        )
        record.update(
            {
                "data": str(args.data),
                "trajectories": len(files),
                "every": args.every,
                "min_fraction": args.min_fraction,
                "types": vocab.names(),
                "frames": int(len(frames)),
                "seconds": round(time.time() - started, 1),
                "command": "python -m alfred_task.training.encoder_pretrain "
                + " ".join(sys.argv[1:] if argv is None else argv),
            }
        )
        meta = save_encoder(net, args.out, record)
    last = record["history"][-1] if record["history"] else {}
    print(json.dumps({"encoder": str(args.out), "record": str(meta), "last": last}, indent=2))
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

"""ALFRED interaction-mask encoding (reference §2.4 "Mask RLE", §4 helpers).

An interaction mask is a 300x300 boolean image. ALFRED stores it in
``low_actions[i]['discrete_action']['args']['mask']`` as a run-length encoding of the
runs of 1s over the row-major flattening of the frame::

    [[start, run_length], ...]      idx = row * 300 + col

Decoding sets ``mask[idx // 300, idx % 300] = True`` for every idx in
``range(start, start + run_length)``. Encoding produces the canonical form: runs sorted
by start, each of length >= 1, maximal (two runs never touch or overlap). An all-False
mask encodes as ``[]``.

`bbox` is ``[x1, y1, x2, y2]`` (x = column, y = row) and `point` is ``[x, y]``.
"""
from __future__ import annotations

import numbers
from typing import Iterable, Sequence

import numpy as np

from alfred_task.constants import MASK_SHAPE


def _check_shape(shape) -> tuple[int, int]:
    try:
        h, w = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(f"mask shape must be (height, width), got {shape!r}") from None
    if h <= 0 or w <= 0:
        raise ValueError(f"mask shape must be positive, got {shape!r}")
    return h, w


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _as_bool_mask(mask, shape: tuple[int, int] | None) -> np.ndarray:
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise ValueError(f"mask must be a 2-D array, got shape {arr.shape}")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"mask must have shape {tuple(shape)}, got {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"mask must be boolean or 0/1 numeric, got dtype {arr.dtype}")
    if arr.size and not np.isin(arr, (0, 1)).all():
        bad = arr[~np.isin(arr, (0, 1))].flat[0]
        raise ValueError(f"mask values must be 0/1 (or bool), found {bad!r}")
    return arr.astype(bool)


def compress_mask(mask, shape: Sequence[int] | None = MASK_SHAPE) -> list[list[int]]:
    """Encode a boolean image as ALFRED RLE ``[[start, length], ...]`` (canonical form).

    `shape` is the required (height, width); pass ``None`` to accept any 2-D array
    (indices then use that array's width).
    """
    arr = _as_bool_mask(mask, None if shape is None else _check_shape(shape))
    flat = arr.reshape(-1).astype(np.int8)
    edges = np.diff(np.concatenate(([0], flat, [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return [[int(s), int(e - s)] for s, e in zip(starts, ends)]


def validate_rle(rle, shape: Sequence[int] = MASK_SHAPE) -> np.ndarray:
    """Check an RLE and return it as an (N, 2) int64 array of (start, length).

    Raises ValueError naming the first problem: not a list of pairs, non-integer values,
    negative start, length < 1, a run past the end of the image, or runs that are
    unsorted / overlapping.
    """
    h, w = _check_shape(shape)
    if isinstance(rle, np.ndarray):
        rle = rle.tolist()
    if isinstance(rle, (str, bytes)) or not isinstance(rle, (list, tuple)):
        raise ValueError(f"mask RLE must be a list of [start, length] pairs, got {type(rle).__name__}")
    out = np.empty((len(rle), 2), dtype=np.int64)
    for i, run in enumerate(rle):
        if isinstance(run, np.ndarray):
            run = run.tolist()
        if not isinstance(run, (list, tuple)) or len(run) != 2:
            raise ValueError(f"mask RLE run {i} must be a [start, length] pair, got {run!r}")
        start, length = run
        if not (_is_int(start) and _is_int(length)):
            raise ValueError(f"mask RLE run {i} must hold two integers, got {run!r}")
        out[i] = (start, length)
    if len(out):
        starts, lengths = out[:, 0], out[:, 1]
        if (starts < 0).any():
            i = int(np.flatnonzero(starts < 0)[0])
            raise ValueError(f"mask RLE run {i} has negative start {int(starts[i])}")
        if (lengths < 1).any():
            i = int(np.flatnonzero(lengths < 1)[0])
            raise ValueError(f"mask RLE run {i} has length {int(lengths[i])} (must be >= 1)")
        ends = starts + lengths
        if (ends > h * w).any():
            i = int(np.flatnonzero(ends > h * w)[0])
            raise ValueError(
                f"mask RLE run {i} = [{int(starts[i])}, {int(lengths[i])}] ends at {int(ends[i])}, "
                f"past the {h}x{w} image ({h * w} pixels)"
            )
        if len(out) > 1:
            bad = np.flatnonzero(starts[1:] < ends[:-1])
            if bad.size:
                i = int(bad[0]) + 1
                raise ValueError(
                    f"mask RLE run {i} starts at {int(starts[i])}, before the end of run {i - 1} "
                    f"({int(ends[i - 1])}): runs must be sorted and non-overlapping"
                )
    return out


def decompress_mask(rle, shape: Sequence[int] = MASK_SHAPE) -> np.ndarray:
    """Decode ALFRED RLE into a boolean array of `shape` (default 300x300)."""
    h, w = _check_shape(shape)
    runs = validate_rle(rle, (h, w))
    delta = np.zeros(h * w + 1, dtype=np.int32)
    if len(runs):
        np.add.at(delta, runs[:, 0], 1)
        np.add.at(delta, runs[:, 0] + runs[:, 1], -1)
    return (np.cumsum(delta[:-1]) > 0).reshape(h, w)


def mask_extent(mask) -> dict:
    """Pixel count and inclusive row/column extents of a boolean mask (None extents if empty)."""
    arr = _as_bool_mask(mask, None)
    rows = np.flatnonzero(arr.any(axis=1))
    cols = np.flatnonzero(arr.any(axis=0))
    if rows.size == 0:
        return {"pixels": 0, "row_min": None, "row_max": None, "col_min": None, "col_max": None}
    return {
        "pixels": int(arr.sum()),
        "row_min": int(rows[0]),
        "row_max": int(rows[-1]),
        "col_min": int(cols[0]),
        "col_max": int(cols[-1]),
    }


def _int_coords(values, n: int, what: str) -> list[int]:
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{what} must be a sequence of {n} integers, got {values!r}")
    values = list(values)
    if len(values) != n:
        raise ValueError(f"{what} must have {n} values, got {len(values)}: {values!r}")
    out = []
    for v in values:
        if _is_int(v):
            out.append(int(v))
        elif isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and float(v).is_integer():
            out.append(int(v))
        else:
            raise ValueError(f"{what} values must be integers, got {values!r}")
    return out


def bbox_to_mask(bbox, shape: Sequence[int] = MASK_SHAPE, inclusive: bool = False) -> np.ndarray:
    """Rectangle mask for ``bbox = [x1, y1, x2, y2]`` (x = column, y = row).

    By default the box is half-open like a numpy slice: rows ``y1 .. y2-1`` and columns
    ``x1 .. x2-1`` are set. With ``inclusive=True`` rows ``y1 .. y2`` and columns
    ``x1 .. x2`` are set. Coordinates must lie inside the image (no silent clipping).
    """
    h, w = _check_shape(shape)
    x1, y1, x2, y2 = _int_coords(bbox, 4, "bbox")
    if x1 > x2 or y1 > y2:
        raise ValueError(f"bbox must satisfy x1 <= x2 and y1 <= y2, got {[x1, y1, x2, y2]}")
    xmax, ymax = (w - 1, h - 1) if inclusive else (w, h)
    if x1 < 0 or y1 < 0 or x2 > xmax or y2 > ymax:
        raise ValueError(f"bbox {[x1, y1, x2, y2]} lies outside the {h}x{w} image")
    mask = np.zeros((h, w), dtype=bool)
    e = 1 if inclusive else 0
    mask[y1 : y2 + e, x1 : x2 + e] = True
    return mask


def point_to_mask(point, shape: Sequence[int] = MASK_SHAPE) -> np.ndarray:
    """Single-pixel mask for ``point = [x, y]`` (x = column, y = row)."""
    h, w = _check_shape(shape)
    x, y = _int_coords(point, 2, "point")
    if not (0 <= x < w and 0 <= y < h):
        raise ValueError(f"point {[x, y]} lies outside the {h}x{w} image")
    mask = np.zeros((h, w), dtype=bool)
    mask[y, x] = True
    return mask


def rle_pixel_count(rle, shape: Sequence[int] = MASK_SHAPE) -> int:
    """Number of pixels set by an RLE (validates it)."""
    runs = validate_rle(rle, shape)
    return int(runs[:, 1].sum()) if len(runs) else 0


__all__ = [
    "compress_mask",
    "decompress_mask",
    "validate_rle",
    "mask_extent",
    "bbox_to_mask",
    "point_to_mask",
    "rle_pixel_count",
]

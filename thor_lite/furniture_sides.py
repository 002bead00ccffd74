"""Room cells beside furniture that THOR 2.1.0's recorded layout leaves out.

ALFRED's reachable layouts were made with a wider body than THOR's moving capsule, so a
strip between a piece of furniture and a wall (FloorPlan329's 0.6 m between the bed and the
window wall, FloorPlan201's between the sofa and the dresser) is missing from them, two to
six cells from the nearest layout cell, although the recorded trajectories walk it. A cell
whose body the furniture touches is inside the room (the furniture stands in it); the layout
lacks it because of the furniture, not because of a wall. Those cells, grown by the same one
cell the layout is grown by, join the room; the full geometric test still decides whether
the agent's body fits there.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Tuple

import numpy as np

Cell = Tuple[int, int]
Footprint = Tuple[np.ndarray, np.ndarray, np.ndarray]


def touching_cells(
    footprints: Iterable[Footprint],
    grid: float,
    reach: float,
    lo: Sequence[float],
    hi: Sequence[float],
) -> frozenset:
    """Grid cells inside the floor rectangle (lo, hi on x and z) whose centre lies within
    `reach` of a footprint (centre_xz, half_xz, rot2), or inside it."""
    out = set()
    for c, h, rot in footprints:
        ext = np.abs(rot) @ h + reach  # axis-aligned half extent of the grown footprint
        i0, i1 = (
            int(np.ceil(max(c[0] - ext[0], lo[0]) / grid)),
            int(np.floor(min(c[0] + ext[0], hi[0]) / grid)),
        )
        k0, k1 = (
            int(np.ceil(max(c[1] - ext[1], lo[1]) / grid)),
            int(np.floor(min(c[1] + ext[1], hi[1]) / grid)),
        )
        for i in range(i0, i1 + 1):
            for k in range(k0, k1 + 1):
                q = np.maximum(np.abs(rot.T @ (np.array([i * grid, k * grid]) - c)) - h, 0.0)
                if q @ q < reach * reach:
                    out.add((i, k))
    return frozenset(out)


def with_furniture_sides(
    room: frozenset,
    footprints: Iterable[Footprint],
    grid: float,
    reach: float,
    grow: int,
    lo: Sequence[float],
    hi: Sequence[float],
) -> frozenset:
    """`room` plus the cells `touching_cells` finds, grown by `grow` cells (Chebyshev)."""
    touch = touching_cells(footprints, grid, reach, lo, hi)
    grown = {
        (i + di, k + dk)
        for i, k in touch
        for di in range(-grow, grow + 1)
        for dk in range(-grow, grow + 1)
    }
    return frozenset(room) | frozenset(grown)

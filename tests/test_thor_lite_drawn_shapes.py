"""How thor_lite draws furniture whose THOR box is not its mesh (no ../shared needed): a
television as a thin panel on a narrow stand, a shelf as its board (the real ALFRED cases are in
test_alfred_fidelity.py)."""

from __future__ import annotations

import numpy as np

from conftest import controller_fixture
from thor_lite.constants import TV_PANEL_BOTTOM, TV_PANEL_DEPTH

controller = controller_fixture("FloorPlan202")


def _inside(parts, p) -> bool:
    return any(b.contains(np.asarray(p, float)[None], margin=0.0).all() for b in parts)


def test_television_is_a_thin_panel_on_a_narrow_stand(controller):
    """A point on the furniture in front of the screen, beside the stand, is in the TV's box but
    in none of its drawn parts (a remote there stays in view); the screen's middle is drawn."""
    tv = next(o for o in controller._world.objects.values() if o.object_type == "Television")
    b, parts = tv.box, tv.parts
    assert len(parts) == 2
    d, wd = (0, 2) if b.half[0] <= b.half[2] else (2, 0)
    lo, hi = b.aabb()
    low = lo[1] + 0.5 * TV_PANEL_BOTTOM * (hi[1] - lo[1])  # at the stand's height
    beside_stand = b.center + b.rot[:, wd] * 0.9 * b.half[wd] + b.rot[:, d] * 0.5 * b.half[d]
    beside_stand[1] = low
    assert _inside([b], beside_stand) and not _inside(parts, beside_stand)
    assert b.half[d] * (1.0 - TV_PANEL_DEPTH) > 0.05  # THOR's box is far deeper than the screen
    before_screen = b.center + b.rot[:, d] * 0.9 * b.half[d]  # above the stand, screen height
    assert _inside([b], before_screen) and not _inside(parts, before_screen)
    assert _inside(parts, b.center + np.array([0.0, 0.3 * b.half[1], 0.0]))


def test_a_shelf_with_a_learned_surface_is_its_board(controller):
    """FloorPlan202's Shelf learns its surface from its contents: it is drawn as a board at
    most 2 cm thick just under that surface, so the side table's level below it shows."""
    shelf = next(
        o
        for o in controller._world.objects.values()
        if o.object_type == "Shelf" and o.surface_offset is not None
    )
    (board,) = shelf.parts
    lo, hi = shelf.aabb
    blo, bhi = board.aabb()
    assert abs(bhi[1] - (hi[1] - shelf.surface_offset)) < 1e-6
    assert bhi[1] - blo[1] <= 0.02 + 1e-9 and blo[1] > lo[1] + 0.05

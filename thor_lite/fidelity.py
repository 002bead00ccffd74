"""Which THOR build the world imitates, as one frozen record.

Today's rules (THOR 5, rearrangement and data generated here) and the rules of a trajectory
recorded in THOR 2.1.0 (ALFRED's) differ in a handful of places: the reachable layout, how
the body may overlap furniture boxes, how a held object hangs, how a visibility ray stops,
where PutObject lands. One profile, passed into the build and swapped by
`thor2_rules.use_thor2_rules`, says which rule applies; the modules read it, never flags of
their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .constants import LAYOUT_MODE_BOX_OVERLAP, MOVEABLE_LAYOUT_REACH, THOR2_BOX_OVERLAP


@dataclass(frozen=True)
class FidelityProfile:
    """The rules a world follows.

    `layout_clears_moveables`: the recorded THOR 2.1.0 layouts (ALFRED's) shape the reachable
    grid, their cells ignore moveable furniture too, 2.1.0's object types and furniture shapes
    are used (the Controller's `layoutClearsMoveables`). `thor2_rules`: PutObject follows
    2.1.0 (basin children, the held yaw first). `held_hangs`: the held object hangs from the
    hand (`world.drawn_held_box`). `first_hit_visibility`: a visibility ray stops at the first
    box it enters (`visibility.object_visibility`). `moveable_layout_reach`: moveable furniture
    a layout cell comes within this of blocks nothing. `box_overlap`: how far the body may
    overlap a box off the layout in layout mode.
    """

    layout_clears_moveables: bool = False
    thor2_rules: bool = False
    held_hangs: bool = False
    first_hit_visibility: bool = False
    moveable_layout_reach: float = 0.0
    box_overlap: float = LAYOUT_MODE_BOX_OVERLAP


#: today's THOR (5.x): rearrangement and everything generated on thor_lite
THOR_5 = FidelityProfile()

#: THOR 2.1.0's recorded layouts and shapes with today's interaction rules: an ALFRED scene
#: before an episode recorded in 2.1.0 switches to `THOR_2_1_0` (data generated here stays so)
THOR_2_1_0_LAYOUT = replace(THOR_5, layout_clears_moveables=True)

#: a trajectory recorded in THOR 2.1.0 (`thor2_rules.use_thor2_rules`)
THOR_2_1_0 = replace(
    THOR_2_1_0_LAYOUT,
    thor2_rules=True,
    held_hangs=True,
    first_hit_visibility=True,
    moveable_layout_reach=MOVEABLE_LAYOUT_REACH,
    box_overlap=THOR2_BOX_OVERLAP,
)


def profile_for(layout_clears_moveables: bool) -> FidelityProfile:
    """The profile a world is built with (the Controller's `layoutClearsMoveables`)."""
    return THOR_2_1_0_LAYOUT if layout_clears_moveables else THOR_5

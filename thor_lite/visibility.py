"""Which objects the camera sees (THOR's "Collider" scheme, ai2thor_api.md 4.5), and the THOR 2.1.0
variant ALFRED's trajectories were recorded with.

THOR casts a ray from the camera to each visibility point of an object; the object is visible when
the first collider the ray hits is the object. Today's rule (rearrangement, data generated here)
counts a point hidden by any other box its segment crosses. In THOR 2.1.0 mode
(the profile's `first_hit_visibility`, set by `thor2_rules.use_thor2_rules`) only boxes entered before
the segment enters the object's own boxes hide it, and a pickupable's points reach its surface
(`with_top_point`): 2.1.0's points lie on the mesh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple

import numpy as np

from .constants import AGENT_HEIGHT
from .geometry import ray_box_hits
from .objects import SimObject

if TYPE_CHECKING:
    from .world import AgentState, World

#: points per object tried before the rest (see `object_visibility`)
FIRST_PASS_POINTS = 3

#: at most this many candidate points are cast in a single pass
SINGLE_PASS_POINTS = 32

#: how far (of the half-extents) a THOR 2.1.0 pickupable's visibility lattice reaches: just
#: inside the drawn box (today's lattice stops at 75 %)
SURFACE_POINT_REACH = 0.95


def with_top_point(o: SimObject) -> np.ndarray:
    """`o`'s visibility lattice reaching its surface, plus the middle of its upper face, just
    inside: a thin thing seen only from above (a bread slice between its neighbours) or at the
    frame's edge (a spray bottle in pixel columns 0-4) is still seen."""
    b = o.box
    k = int(np.argmax(np.abs(b.rot[1])))
    top = b.center + b.rot[:, k] * np.sign(b.rot[1, k]) * b.half[k] * SURFACE_POINT_REACH
    return np.vstack([o.vis_lattice(SURFACE_POINT_REACH), top[None]])


def visibility_points(w: "World"):
    """All rendered objects' visibility points, packed, and whether each owner is static
    furniture (cached per world version)."""

    def build():
        ids, pts, owner, static = [], [], [], []
        for o in w.objects.values():
            if not o.rendered:
                continue
            ids.append(o.object_id)
            static.append(o.is_static)
            vp = (
                with_top_point(o)
                if w.profile.first_hit_visibility and o.pickupable
                else o.vis_points
            )
            pts.append(vp)
            owner.append(np.full(len(vp), len(ids) - 1))
        if not pts:
            return (), np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        return tuple(ids), np.vstack(pts), np.concatenate(owner), np.asarray(static, dtype=bool)

    return w.cached("vis_points", build)


def own_entry(
    w: "World", cam: np.ndarray, points: np.ndarray, near: np.ndarray, own: np.ndarray
) -> np.ndarray:
    """Per point, where its segment first enters its own object's drawn boxes (at most 0.999),
    as a (points, 1) column: THOR's ray stops at the first collider, so only what lies before
    that can hide the point."""
    occ = w.occluders()
    t = ray_box_hits(cam, points, occ.centers[near], occ.halves[near], occ.rots[near])
    t = np.where(own, t, np.inf).min(1, initial=np.inf)
    return np.minimum(t, 0.999)[:, None]


def object_visibility(
    w: "World",
    object_ids: Optional[Sequence[str]] = None,
    agent: Optional["AgentState"] = None,
    max_distance: Optional[float] = None,
) -> Dict[str, Tuple[bool, bool]]:
    """object_id -> (visible, interactable) from the agent's (or a given) pose.

    A point counts when it is within `visibilityDistance` of the agent's vertical axis, inside
    the viewport, and the segment from the camera reaches it without entering another object's
    box (in THOR 2.1.0 mode: before entering its own); glass lets sight through but not
    interaction.
    """
    a = agent or w.agent
    dist = w.visibility_distance if max_distance is None else max_distance
    cam = w.camera_position(a)
    wanted = list(w.objects) if object_ids is None else list(object_ids)
    result: Dict[str, Tuple[bool, bool]] = {oid: (False, False) for oid in wanted}
    ids, pts, owner, static = visibility_points(w)
    if len(pts) == 0:
        return result
    sel = _points_in_reach(w, ids, pts, owner, tuple(wanted), a.x, a.y, a.z, dist)
    if len(sel) == 0:
        return result
    sel = sel[w.in_viewport(pts[sel], a)]
    if len(sel) == 0:
        return result
    # Two passes give the same answer as one (an object counts when any of its points does):
    # the first few points of each object first, then the rest only for objects that are not
    # yet both seen and clear, which skips most points of the objects in plain sight.
    # A few points in all are cast in one pass (each pass costs more than its points then).
    if len(sel) <= SINGLE_PASS_POINTS:
        passes: Tuple[np.ndarray, ...] = (sel,)
    else:
        first = w.cached("vis_rank", lambda: _rank_in_owner(owner))[sel] < FIRST_PASS_POINTS
        passes = (sel[first], sel[~first])
    seen_obj = np.zeros(len(ids), dtype=bool)
    clear_obj = np.zeros(len(ids), dtype=bool)
    for part in passes:
        part = part[~(seen_obj & clear_obj)[owner[part]]]
        if len(part) == 0:
            continue
        seen, clear = _sight_lines(w, cam, pts, owner, static, ids, part)
        seen_obj[owner[part[seen]]] = True
        clear_obj[owner[part[clear]]] = True
    for k in np.flatnonzero(seen_obj | clear_obj):
        if ids[k] in result:
            result[ids[k]] = (bool(seen_obj[k]), bool(clear_obj[k]))
    return result


def _points_in_reach(w: "World", ids, pts, owner, wanted, x, y, z, dist) -> np.ndarray:
    """Indices of the wanted points within `dist` of the agent's vertical axis and not above
    its reach (remembered for the last standing place: turning and looking keep it)."""
    key = (wanted, w.held, x, y, z, dist)
    hit = w._cache.get("vis_reach")
    if hit is not None and hit[0] is ids and hit[1] == key:
        return hit[2]
    ok = _wanted_points(w, ids, owner, wanted)
    ok &= np.hypot(pts[:, 0] - x, pts[:, 2] - z) <= dist
    ok &= pts[:, 1] <= y + AGENT_HEIGHT / 2 + dist
    sel = np.flatnonzero(ok)
    sel.flags.writeable = False
    w._cache["vis_reach"] = (ids, key, sel)
    return sel


def _wanted_points(w: "World", ids, owner: np.ndarray, wanted: Tuple[str, ...]) -> np.ndarray:
    """Per visibility point, whether its owner is wanted and not in hand (a fresh array;
    the per-object mask is remembered per points table, wanted ids and hand)."""
    hit = w._cache.get("vis_wanted")
    if hit is None or hit[0] is not ids or hit[1] != w.held or hit[2] != wanted:
        want_idx = np.zeros(len(ids), dtype=bool)
        index = {oid: i for i, oid in enumerate(ids)}
        for oid in wanted:
            i = index.get(oid)
            if i is not None and oid != w.held:
                want_idx[i] = True
        hit = w._cache["vis_wanted"] = (ids, w.held, wanted, want_idx)
    return hit[3][owner]


def _occluder_of_owner(w: "World", occ, ids) -> np.ndarray:
    """Per visibility-point owner (index into `ids`), the index of its object in `occ.ids`
    (-1 when it draws no occluder); remembered per occluder and points tables."""
    hit = w._cache.get("vis_occ_of_owner")
    if hit is None or hit[0] is not occ or hit[1] is not ids:
        occ_index = {oid: i for i, oid in enumerate(occ.ids)}
        table = np.array([occ_index.get(oid, -1) for oid in ids], dtype=np.int64)
        hit = w._cache["vis_occ_of_owner"] = (occ, ids, table)
    return hit[2]


def _occluder_bounds(w: "World", occ) -> Tuple[np.ndarray, np.ndarray]:
    """Each occluder box's AABB corners (remembered per occluder table)."""
    hit = w._cache.get("vis_occ_bounds")
    if hit is None or hit[0] is not occ:
        hit = w._cache["vis_occ_bounds"] = (
            occ,
            occ.centers - occ.extents,
            occ.centers + occ.extents,
        )
    return hit[1], hit[2]


def _rank_in_owner(owner: np.ndarray) -> np.ndarray:
    """Each point's index among its own object's points (points are packed object by object)."""
    n = len(owner)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def _sight_lines(
    w: "World", cam, pts, owner, static, ids, sel, boxes: Optional[np.ndarray] = None
) -> Tuple[np.ndarray, np.ndarray]:
    """Per point of `sel`: (seen: nothing opaque hides it, clear: nothing at all hides it).

    `boxes` (occluder indices) restricts the casts to those boxes. Each (point, box) hit is
    judged on its own, so a point hidden among a subset that holds the point's own boxes is
    hidden among all of them (what lets an id image settle occluded points: see
    benchmarks/thor_lite_visibility_from_ids.py)."""
    occ = w.occluders()
    # Only boxes overlapping the bounding box of all the segments can block one (exact cull).
    seg_lo = np.minimum(cam, pts[sel].min(0))
    seg_hi = np.maximum(cam, pts[sel].max(0))
    occ_lo, occ_hi = _occluder_bounds(w, occ)
    if boxes is None:
        near = np.flatnonzero(
            np.all(occ_lo <= seg_hi, axis=1) & np.all(occ_hi >= seg_lo, axis=1) & occ.occludes
        )
    else:
        near = boxes[
            np.all(occ_lo[boxes] <= seg_hi, axis=1)
            & np.all(occ_hi[boxes] >= seg_lo, axis=1)
            & occ.occludes[boxes]
        ]
    # a static part (a cabinet door in a neighbour's box) is nobody's contents: never hidden inside
    t = ray_box_hits(
        cam,
        pts[sel],
        occ.centers[near],
        occ.halves[near],
        occ.rots[near],
        occ.porous[near][None, :] | static[owner[sel]][:, None],
    )
    occ.clear_over_rim(t, cam, pts[sel], near)
    owners, see_through = occ.owners[near], occ.see_through[near]
    tgt = _occluder_of_owner(w, occ, ids)[owner[sel]]
    own = owners[None, :] == tgt[:, None]
    reach = own_entry(w, cam, pts[sel], near, own) if w.profile.first_hit_visibility else 0.999
    t[own] = np.inf  # a point is never hidden by its own object
    hit = t < reach
    seen = ~(hit & ~see_through[None, :]).any(1)
    clear = seen & ~(hit & see_through[None, :]).any(1)
    return seen, clear

"""`metadata["objects"]` builds each object's bounding boxes on first use; whatever a reader
does with the dicts (index, iterate, compare, copy, pickle, JSON, mutate), they must be the dicts
the eager builder makes, over seeded random states in several scenes."""

from __future__ import annotations

import copy
import json
import pickle
import random

import pytest

from thor_lite import Controller
from thor_lite.metadata import ObjectMetadata, object_metadata

SCENES = ("FloorPlan1", "FloorPlan212", "FloorPlan305", "FloorPlan420")
ACTIONS = ("MoveAhead", "RotateLeft", "RotateRight", "LookUp", "LookDown")


def _eager(event, c) -> list:
    """The objects list as the eager builder makes it for the event's world."""
    from thor_lite.metadata import receptacle_contents

    w = c._world
    objs = [o for o in w.objects.values() if o.enabled]
    vis = w.visibility([o.object_id for o in objs])
    return [object_metadata(w, o, vis, receptacle_contents(w)) for o in objs]


def _states(scene: str, n: int, seed: int):
    """`n` seeded states: random navigation with pickups/opens/puts between them."""
    rng = random.Random(seed)
    c = Controller(scene=scene, width=64, height=64)
    try:
        for _ in range(n):
            for _ in range(rng.randint(1, 6)):
                c.step(action=rng.choice(ACTIONS))
            ev = c.last_event
            vis = [o for o in ev.metadata["objects"] if o["visible"]]
            if vis:
                o = rng.choice(vis)
                act = "PickupObject" if o["pickupable"] else "OpenObject"
                if c.last_event.metadata["inventoryObjects"] and o["receptacle"]:
                    act = "PutObject"
                c.step(action=act, objectId=o["objectId"])
            yield c, c.step(action="Pass")
    finally:
        c.stop()


@pytest.mark.parametrize("scene", SCENES)
def test_lazy_objects_equal_eager(scene):
    held_seen = 0
    for c, ev in _states(scene, 12, seed=len(scene)):
        lazy = ev.metadata["objects"]
        eager = _eager(ev, c)
        held_seen += bool(ev.metadata["inventoryObjects"])
        assert len(lazy) == len(eager)
        for a, b in zip(lazy, eager):
            assert list(a.keys()) == list(b.keys())
            assert a == b and b == a
            assert a["axisAlignedBoundingBox"] == b["axisAlignedBoundingBox"]
    assert held_seen or scene != "FloorPlan1"  # the held branch (eager dict) ran somewhere


def _fresh(c):
    return [o for o in c.step(action="Pass").metadata["objects"] if isinstance(o, ObjectMetadata)]


def test_every_way_of_reading_fills_the_boxes():
    c = Controller(scene="FloorPlan1", width=64, height=64)
    try:
        reference = [dict(o) for o in c.step(action="Pass").metadata["objects"]]
        by_id = {o["objectId"]: o for o in reference}
        readers = (
            lambda o: json.loads(json.dumps(o)),
            lambda o: pickle.loads(pickle.dumps(o)),
            copy.deepcopy,
            copy.copy,
            lambda o: {**o},
            lambda o: dict(o.items()),
            lambda o: {k: o[k] for k in o},
            lambda o: o.copy(),
            dict,
        )
        for read in readers:
            for o in _fresh(c):
                got = read(o)
                assert got == by_id[got["objectId"]]
                assert list(got) == list(by_id[got["objectId"]])
        o = _fresh(c)[0]
        assert "axisAlignedBoundingBox" in o and len(o) == len(by_id[o["objectId"]])
        o["position"]["x"] += 1.0  # each event's dicts are its own
        assert _fresh(c)[0]["position"] == by_id[o["objectId"]]["position"]
        o = _fresh(c)[0]
        o["axisAlignedBoundingBox"] = None  # a write is not undone by the late fill
        assert o["axisAlignedBoundingBox"] is None and o.get("axisAlignedBoundingBox") is None
        o = _fresh(c)[0]
        assert (
            o.get("objectOrientedBoundingBox") == by_id[o["objectId"]]["objectOrientedBoundingBox"]
        )
        with pytest.raises(KeyError):
            _fresh(c)[0]["noSuchKey"]
    finally:
        c.stop()


def test_remembered_visibility_follows_state_and_camera():
    """Revisited poses reuse the visibility answer; any change of objects, hand, camera or
    visibility distance (a reset with new settings, where versions start again) gives a fresh
    one (compared with the rule computed afresh)."""
    c = Controller(scene="FloorPlan1", width=64, height=64)
    try:
        seq = ["RotateLeft", "RotateRight", "LookDown", "LookUp", "RotateRight", "RotateLeft"]
        rng = random.Random(3)
        checked = interactions = 0
        for i in range(30):
            act = seq[i % len(seq)]
            vis = [o for o in c.last_event.metadata["objects"] if o["visible"]]
            if i % 7 == 3 and vis:
                o = rng.choice(vis)
                act = "PickupObject" if o["pickupable"] else "OpenObject"
                ev = c.step(action=act, objectId=o["objectId"], forceAction=True)
                interactions += ev.metadata["lastActionSuccess"]
            elif i == 20:
                ev = c.reset("FloorPlan1", width=96, height=80, fieldOfView=70)
            elif i == 24:
                ev = c.reset("FloorPlan1", visibilityDistance=0.75)
            else:
                ev = c.step(action=act)
            w = c._world
            fresh = w.visibility([o["objectId"] for o in ev.metadata["objects"]])
            for o in ev.metadata["objects"]:
                assert (o["visible"], o["isInteractable"]) == fresh[o["objectId"]]
                checked += 1
        assert checked > 0 and interactions >= 1
    finally:
        c.stop()


def test_fields_beyond_the_first_read_fill_in_order():
    """An object dict holds id, type, `visible`, `isInteractable` and `distance` at first; reading
    any other field (or testing for it, or writing) gives the eager dict, keys in THOR's order,
    and what one event's reader changes never reaches the next event's dicts."""
    c = Controller(scene="FloorPlan1", width=64, height=64)
    try:
        reference = {o["objectId"]: dict(o) for o in c.step(action="Pass").metadata["objects"]}
        first = ("objectId", "objectType", "visible", "isInteractable", "distance")
        for o in _fresh(c):
            ref = reference[o["objectId"]]
            assert [o[k] for k in first] == [ref[k] for k in first]
            assert "mass" in o and "axisAlignedBoundingBox" in o and "noSuchKey" not in o
            assert o["mass"] == ref["mass"] and list(o) == list(ref) and o == ref
        for o in _fresh(c):
            assert o.get("parentReceptacles") == reference[o["objectId"]]["parentReceptacles"]
            assert o.get("noSuchKey", 7) == 7
        victims = _fresh(c)
        for o in victims:
            o["visible"] = "changed"  # a write fills the dict first, then replaces the value
            assert list(o) == list(reference[o["objectId"]])
            o["position"]["x"] = 99.0
            if o["receptacleObjectIds"] is not None:
                o["receptacleObjectIds"].append("intruder")
            if o["parentReceptacles"] is not None:
                o["parentReceptacles"].append("intruder")
        for o in _fresh(c):
            assert o == reference[o["objectId"]]
    finally:
        c.stop()


def test_remembered_object_rows_follow_the_objects_state():
    """Object rows kept between steps are rebuilt when records, hand or the object filter change
    (compared with the eager builder after each change)."""
    c = Controller(scene="FloorPlan1", width=64, height=64)
    try:
        ev = c.step(action="Pass")
        ids = [o["objectId"] for o in ev.metadata["objects"]]
        opened = picked = False
        for _ in range(40):
            vis = [o for o in c.last_event.metadata["objects"] if o["visible"]]
            if not opened:
                for o in vis:
                    if o["openable"] and not o["isOpen"]:
                        opened = c.step(
                            action="OpenObject", objectId=o["objectId"], forceAction=True
                        ).metadata["lastActionSuccess"]
                        break
            if not picked:
                for o in vis:
                    if o["pickupable"]:
                        picked = c.step(
                            action="PickupObject", objectId=o["objectId"], forceAction=True
                        ).metadata["lastActionSuccess"]
                        break
            ev = c.step(action="Pass")
            assert [dict(o) for o in ev.metadata["objects"]] == _eager(ev, c)
            if opened and picked:
                break
            c.step(action="RotateRight")
        assert opened and picked
        ev = c.step(action="SetObjectFilter", objectIds=ids[:3])
        assert [o["objectId"] for o in ev.metadata["objects"]] == ids[:3]
        ev = c.step(action="ResetObjectFilter")
        assert [dict(o) for o in ev.metadata["objects"]] == _eager(ev, c)
    finally:
        c.stop()


def test_metadata_entries_built_one_at_a_time_match_the_whole():
    """Reading `objects` (or `colors`) alone builds only that entry; the whole metadata dict,
    used later, holds that same object, with every key in the order the whole build gives."""
    c = Controller(scene="FloorPlan1", width=64, height=64, renderInstanceSegmentation=True)
    try:
        whole = c.step(action="Pass").metadata
        keys = list(whole)
        for first in ("objects", "colors", "sceneBounds", "heldObjectPose"):
            meta = c.step(action="Pass").metadata
            got = meta[first]
            assert meta.get(first) is got and meta[first] is got
            assert got == whole[first]
            assert list(meta) == keys and dict(meta)[first] is got
            assert dict(meta) == dict(whole) | {
                k: meta[k] for k in ("currentTime", "actionReturn") if k in meta
            }
        assert whole["colors"] and whole["colorBounds"] is None
    finally:
        c.stop()

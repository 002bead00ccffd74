"""SetObjectPoses name matching across THOR builds is a function of the episode and the scene.

Dataset names recorded on another THOR build (other hash suffixes) are matched to scene objects
by `thor_lite.actions.scene_setup.match_pose_entries`. Whatever ran before in the controller
(other episodes of the same scene, other scenes), or in which process, an episode must come out
identical: the same names on the same objects, the same poses, openness and start energy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from thor_lite.controller import Controller

ROOT = Path(__file__).resolve().parents[1]
SHARED_VAL = ROOT.parent / "shared" / "data" / "rearrangement" / "2023_val.pkl.gz"
SCENE = "FloorPlan223"  # two Statues and two Vases of different sizes


def _signature(objects):
    """What a metadata reader sees of every enabled object, rounded past float noise."""
    out = []
    for o in objects:
        out.append(
            (
                o["objectId"],
                o["name"],
                tuple(round(o["position"][k], 6) for k in "xyz"),
                tuple(round(o["rotation"][k], 4) for k in "xyz"),
                round(float(o.get("openness") or 0.0), 6),
            )
        )
    return sorted(out)


# --- synthetic: no ../shared needed ---------------------------------------------------------
def _foreign_episode(canonical, swap: bool):
    """Pose entries naming every pickupable with a foreign hash suffix, as another build would.

    The two Statues are placed at each other's initial positions when `swap` is set, so a
    matching by distance to the current poses would pair the names differently per episode.
    """
    pick = [o for o in canonical if o["pickupable"]]
    statues = sorted((o for o in pick if o["objectType"] == "Statue"), key=lambda o: o["objectId"])
    assert len(statues) == 2
    spots = {
        statues[0]["objectId"]: statues[1 if swap else 0]["position"],
        statues[1]["objectId"]: statues[0 if swap else 1]["position"],
    }
    entries = []
    for i, o in enumerate(sorted(pick, key=lambda o: o["objectId"])):
        name = f"{o['objectType']}_{'%08x' % (0xABC000 + (7 * i) % 13)}"
        pos = spots.get(o["objectId"], o["position"])
        entries.append(
            {
                "name": name,
                "objectName": name,
                "position": dict(pos),
                "rotation": dict(o["rotation"]),
            }
        )
    return entries


def _run_synthetic(c: Controller, swap: bool):
    c.reset(SCENE)
    canonical = c.last_event.metadata["objects"]
    ev = c.step(
        "SetObjectPoses", objectPoses=_foreign_episode(canonical, swap), placeStationary=False
    )
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    return _signature(ev.metadata["objects"])


def test_synthetic_episode_same_whatever_ran_before():
    fresh = _run_synthetic(Controller(scene=SCENE), swap=True)
    c = Controller(scene=SCENE)
    _run_synthetic(c, swap=False)  # another episode of the same scene first
    c.reset("FloorPlan1")
    after = _run_synthetic(c, swap=True)
    assert after == fresh
    again = _run_synthetic(c, swap=True)
    assert again == fresh


def test_synthetic_pairing_is_sorted_names_to_sorted_object_ids():
    c = Controller(scene=SCENE)
    for swap in (False, True):  # entry positions do not change the pairing
        sig = _run_synthetic(c, swap)
        statues = [(oid, name) for oid, name, *_ in sig if oid.startswith("Statue|")]
        assert [n for _, n in statues] == sorted(n for _, n in statues)
        assert [oid for oid, _ in statues] == sorted(oid for oid, _ in statues)


def test_adopted_names_do_not_survive_reset():
    c = Controller(scene=SCENE)
    names = {o["name"] for o in c.last_event.metadata["objects"]}
    _run_synthetic(c, swap=False)
    ev = c.reset(SCENE)
    assert {o["name"] for o in ev.metadata["objects"]} == names


# --- official 2023 val episodes --------------------------------------------------------------
_OFFICIAL_SNIPPET = r"""
import gzip, json, pickle, sys
from rearrange.environment import RearrangeTHOREnvironment, RearrangeTaskSpec
from rearrange.pose_metrics import pose_difference_energy


def episode_signature(path, scene, order):
    eps = pickle.load(gzip.open(path, "rb"))[scene]
    env = RearrangeTHOREnvironment()
    try:
        for i in order:
            env.reset(RearrangeTaskSpec(scene=scene, stage="val", **dict(eps[i])))
            env.shuffle()
            u, g, _ = env.poses
            energy = sum(pose_difference_energy(gg, uu) for gg, uu in zip(g, u))
        sig = sorted([o["objectId"], o["name"], [round(o["position"][k], 6) for k in "xyz"],
                      [round(o["rotation"][k], 4) for k in "xyz"],
                      round(float(o.get("openness") or 0.0), 6)]
                     for o in env.last_event.metadata["objects"])
    finally:
        env.stop()
    return {"energy": round(float(energy), 9), "objects": sig}
"""


def _official(order, in_process=True):
    """Run the val episodes of SCENE in `order` in one controller; signature of the last one."""
    if in_process:
        ns: dict = {}
        exec(_OFFICIAL_SNIPPET, ns)
        return json.loads(json.dumps(ns["episode_signature"](str(SHARED_VAL), SCENE, order)))
    code = _OFFICIAL_SNIPPET + (
        "\nprint('SIG' + json.dumps(episode_signature(sys.argv[1], sys.argv[2], "
        "[int(i) for i in sys.argv[3].split(',')])))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", code, str(SHARED_VAL), SCENE, ",".join(map(str, order))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    return json.loads(out.split("SIG", 1)[1])


@pytest.mark.skipif(
    not SHARED_VAL.is_file(), reason="official 2023 val split not available (../shared)"
)
def test_official_episode_same_whatever_ran_before():
    # Val FloorPlan223 episode 0: its Statue names were paired differently after episode 2
    # (start energy 0.993383 instead of 1.0) when adopted names outlived reset().
    fresh = _official([0])
    assert _official([2, 0]) == fresh
    assert _official([1, 3, 2, 0]) == fresh
    assert _official([0], in_process=False) == fresh

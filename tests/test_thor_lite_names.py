"""Object names of the pinned THOR build (thor_lite.names): shipped tables applied at reset,
derivation from episodes, the CLI's refusals and bad input."""

from __future__ import annotations

import gzip
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from backends import THOR_COMMIT_ID
from thor_lite.controller import Controller
from thor_lite.constants import LAYOUT_CLEARS_MOVEABLES
from thor_lite.names import (
    DEFAULT_BUILD,
    TABLES_DIR,
    SceneEvidence,
    derive_scene,
    load_table,
    scene_objects,
)

ROOT = Path(__file__).resolve().parents[1]
VAL = ROOT.parent / "shared" / "data" / "rearrangement" / "2023_val.pkl.gz"
#: a release name the pinned build gives FloorPlan24's fridge (official 2023 val's openable_data)
FRIDGE = "Fridge_ab2776a0"


def _objects(c: Controller, scene: str):
    return c.reset(scene).metadata["objects"]


def test_default_build_is_the_pinned_release() -> None:
    assert DEFAULT_BUILD == THOR_COMMIT_ID
    table = load_table(DEFAULT_BUILD)
    assert table is not None and table["commit_id"] == THOR_COMMIT_ID
    assert {s["file"] for s in table["sources"]} == {"2023_val.pkl.gz", "2023_train.pkl.gz"}
    assert all(len(s["sha256"]) == 64 for s in table["sources"])
    assert (TABLES_DIR / f"{DEFAULT_BUILD}.json").is_file()


def test_shipped_table_applies_at_reset_with_consistent_ids() -> None:
    c = Controller(scene="FloorPlan24", commit_id=THOR_COMMIT_ID)
    objs = _objects(c, "FloorPlan24")
    names = [o["name"] for o in objs]
    ids = {o["objectId"] for o in objs}
    assert FRIDGE in names
    assert len(set(names)) == len(names) and len(ids) == len(objs)
    for o in objs:  # links follow renamed ids
        assert set(o["parentReceptacles"] or ()) <= ids
        assert set(o["receptacleObjectIds"] or ()) <= ids
    fridge = next(o for o in objs if o["name"] == FRIDGE)
    ev = c.step("OpenObject", objectId=fridge["objectId"], forceAction=True)
    assert ev.metadata["lastActionSuccess"], ev.metadata["errorMessage"]
    # the table's names survive a reset to another scene and back, identically
    _objects(c, "FloorPlan1")
    again = _objects(c, "FloorPlan24")
    assert [(o["name"], o["objectId"]) for o in again] == [(o["name"], o["objectId"]) for o in objs]


def test_release_ids_replace_ids_that_differ() -> None:
    """FloorPlan323's lower drawers sit 13 cm from where the pinned build puts them."""
    table = load_table(DEFAULT_BUILD)["scenes"]["FloorPlan323"]
    old, new = next(iter(table["ids"].items()))
    ids = {
        o["objectId"]
        for o in _objects(
            Controller(scene="FloorPlan323", commit_id=THOR_COMMIT_ID), "FloorPlan323"
        )
    }
    assert new in ids and old not in ids


def test_no_build_other_builds_and_alfred_keep_todays_names() -> None:
    """Without a commit_id (our own task code, whose splits were generated with thor_lite's
    names), with a build that has no table, and in ALFRED's scenes, names stay as they were."""
    plain = {o["name"] for o in _objects(Controller(commit_id="no-such-build"), "FloorPlan24")}
    assert FRIDGE not in plain
    assert FRIDGE not in {o["name"] for o in _objects(Controller(), "FloorPlan24")}
    alfred = Controller(
        scene="FloorPlan24", commit_id=THOR_COMMIT_ID, **{LAYOUT_CLEARS_MOVEABLES: True}
    )
    assert FRIDGE not in {o["name"] for o in alfred.last_event.metadata["objects"]}
    # the pinned build's names are deterministic
    a = _objects(Controller(commit_id=THOR_COMMIT_ID), "FloorPlan24")
    b = _objects(Controller(commit_id=THOR_COMMIT_ID), "FloorPlan24")
    assert [o["name"] for o in a] == [o["name"] for o in b]


def _pose(name, pos):
    x, y, z = (float(v) for v in pos)
    p = {"x": x, "y": y, "z": z}
    return {"name": name, "objectName": name, "position": p, "rotation": dict(x=0, y=0, z=0)}


def test_derivation_matches_by_position_and_refuses_ambiguity() -> None:
    objs = scene_objects("FloorPlan24")
    by_type = {}
    for o in objs:
        if o.pickupable:
            by_type.setdefault(o.object_type, []).append(o)
    single = next(v[0] for _, v in sorted(by_type.items()) if len(v) == 1)
    fridge = next(o for o in objs if o.object_type == "Fridge")
    far = [single.position[0] + 3, single.position[1], single.position[2]]
    ev = SceneEvidence()
    ev.add_episode(
        {
            "starting_poses": [_pose(f"{single.object_type}_00000001", far)],
            "target_poses": [_pose(f"{single.object_type}_00000001", single.position)],
            "openable_data": [{"name": "Fridge_00000002", "objectId": fridge.object_id}],
        }
    )
    table, refused = derive_scene("FloorPlan24", objs, ev)
    assert refused == []
    assert table["names"] == {
        single.name: f"{single.object_type}_00000001",
        fridge.name: "Fridge_00000002",
    }
    assert table["ids"] == {}
    # two names for two differently shaped objects of one type, neither ever in place: refused
    two = [o for o in scene_objects("FloorPlan223") if o.object_type == "Vase"]
    ev = SceneEvidence()
    ev.add_episode(
        {
            "starting_poses": [_pose("Vase_a", [9, 0, 9]), _pose("Vase_b", [8, 0, 8])],
            "target_poses": [_pose("Vase_a", [9, 0, 9]), _pose("Vase_b", [8, 0, 8])],
            "openable_data": [],
        }
    )
    table, refused = derive_scene("FloorPlan223", two, ev)
    assert table["names"] == {}
    assert len(refused) == 1 and refused[0].startswith("FloorPlan223: Vase: cannot tell")
    assert all(o.name in refused[0] for o in two)
    # once one of them is seen in place, the other follows
    ev.add_episode(
        {
            "starting_poses": [_pose("Vase_a", two[1].position), _pose("Vase_b", [8, 0, 8])],
            "target_poses": [_pose("Vase_a", two[1].position), _pose("Vase_b", [8, 0, 8])],
            "openable_data": [],
        }
    )
    table, refused = derive_scene("FloorPlan223", two, ev)
    assert refused == [] and table["names"] == {two[1].name: "Vase_a", two[0].name: "Vase_b"}


def _cli(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "thor_lite.names", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_writes_a_table_with_its_source(tmp_path) -> None:
    objs = scene_objects("FloorPlan24")
    fridge = next(o for o in objs if o.object_type == "Fridge")
    eps = {
        "FloorPlan24": [
            {
                "starting_poses": [],
                "target_poses": [],
                "openable_data": [
                    {"name": FRIDGE, "objectName": FRIDGE, "objectId": fridge.object_id}
                ],
            }
        ]
    }
    src = tmp_path / "eps.pkl.gz"
    with gzip.open(src, "wb") as f:
        pickle.dump(eps, f)
    r = _cli("--from", str(src), "--build", "testbuild", "--out", str(tmp_path / "t"))
    assert r.returncode == 0, r.stderr
    table = json.loads((tmp_path / "t" / "testbuild.json").read_text())
    assert table["scenes"]["FloorPlan24"]["names"] == {fridge.name: FRIDGE}
    assert table["sources"][0]["file"] == "eps.pkl.gz"


def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path) -> None:
    bad = tmp_path / "bad.pkl.gz"
    bad.write_bytes(b"not a pickle")
    out = tmp_path / "t"
    r = _cli("--from", str(bad), "--out", str(out))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "bad.pkl.gz" in r.stderr
    assert not out.exists() or not any(out.iterdir())
    r = _cli("--from", str(tmp_path / "missing.pkl.gz"), "--out", str(out))
    assert r.returncode == 2 and "no such file" in r.stderr


@pytest.mark.skipif(not VAL.is_file(), reason="official 2023 val not in ../shared")
def test_official_val_names_exist_after_reset() -> None:
    """Every openable name and id, and every pose name except the refused types', exists."""
    data = pickle.load(gzip.open(VAL))
    refused = " ".join(load_table(DEFAULT_BUILD)["refused"])
    c = Controller(commit_id=THOR_COMMIT_ID)
    missing = []
    for scene, eps in sorted(data.items()):
        objs = _objects(c, scene)
        names, ids = {o["name"] for o in objs}, {o["objectId"] for o in objs}
        for e in eps:
            for od in e["openable_data"]:
                assert od["objectName"] in names and od["objectId"] in ids, (scene, od)
            for p in e["starting_poses"] + e["target_poses"]:
                if p["name"] not in names:
                    missing.append(p["name"])
    assert all(n in refused for n in missing), sorted(set(missing))
    assert len(set(missing)) <= 6

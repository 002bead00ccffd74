"""Fuzz thor_lite with random actions and hostile arguments, checking invariants every step.

    python benchmarks/thor_lite_fuzz.py [--seed 0] [--actions 20000] [--scenes 20]
                                        [--image-every 50] [--reset-every 1000] [--res 64]

Every registered action is called with a mix of plausible arguments (real object ids,
reachable poses, in-range numbers) and hostile ones (NaN, +-inf, huge, negative, wrong
types, strings, None, nested junk), with required arguments sometimes left out and unknown
ones sometimes added. Floor plans are drawn across all four room types. After every step:

- only the documented ValueError escapes (unknown action, unknown kwarg, missing argument)
- no NaN/inf anywhere in the metadata
- every object and the agent lie inside the house (box of the loaded scene, +0.5 m slack)
- at most one object is held, and it is the one with isPickedUp
- a failed (or rejected) action changes nothing: agent, objects and inventory as before
  (SetObjectPoses' partial failures keep their valid entries, as in THOR; counted apart)
- errorMessage is one line, has no traceback text and is not a raw Python exception
- no Event property raises on read (images on a sample of steps, the rest every step)

Prints a table of checks and violations (with a few examples) and writes the whole result
to benchmarks/results/thor_lite_fuzz.json. Runs are reproducible for a given --seed.
"""

from __future__ import annotations

import os

os.environ.setdefault("LP_NUM_THREADS", "0")

import argparse
import math
import platform
import random
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from _common import RESULTS_DIR, write_json  # noqa: E402
from tqdm import tqdm  # noqa: E402

from thor_lite import Controller  # noqa: E402
from thor_lite.actions.registry import ACTIONS, REQUIRED  # noqa: E402
from thor_lite.constants import ithor_scene_names  # noqa: E402

HOUSE_SLACK = 0.5  # metres around the loaded scene's box (held objects sit past the body)
EXAMPLES = 5
UNKNOWN_ACTIONS = ("NotARealAction", "moveahead", "", "DropHeldObjectAheadNope", None, 5)
# Expensive actions are drawn less often so that a run covers the cheap ones densely.
ACTION_WEIGHTS = {
    "InitialRandomSpawn": 0.15,
    "GetInteractablePoses": 0.25,
    "GetReachablePositions": 0.5,
    "SetObjectPoses": 0.6,
}
DOCUMENTED_VALUE_ERRORS = re.compile(
    r"^Invalid action: |called with invalid argument\(s\)|is missing the following arguments"
)
PARTIAL_LINE = re.compile(
    r"^(No Pickupable or Moveable object of name .* found in scene\.|"
    r".* is not a Moveable or Pickupable object\. SetObjectPoses only works .*)$"
)
RAW_EXCEPTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(Error|Exception|Warning)\b")
TRACEBACK = re.compile(r"Traceback|File \"|\.py\", line|trace:")

INVARIANTS = {
    "only_documented_exceptions": "no exception but ValueError(unknown action/kwarg/missing arg)",
    "finite_metadata": "no NaN/inf anywhere in metadata",
    "inside_house": "objects and agent inside the house bounds",
    "one_held_object": "at most one held object, and it is the one isPickedUp",
    "failure_changes_nothing": "failed/rejected actions leave agent, objects, inventory as before",
    "clean_error_message": "errorMessage: one line, no traceback, no raw Python exception",
    "properties_readable": "no Event property raises on read",
}
CHEAP_PROPERTIES = (
    "screen_width",
    "screen_height",
    "pose",
    "pose_discrete",
    "events",
    "color_to_object_id",
    "object_id_to_color",
    "normals_frame",
    "flow_frame",
    "third_party_camera_frames",
    "image_data",
)
IMAGE_PROPERTIES = (
    "frame",
    "cv2img",
    "depth_frame",
    "instance_segmentation_frame",
    "semantic_segmentation_frame",
    "class_segmentation_frame",
    "instance_ids_frame",
)
MASK_PROPERTIES = ("instance_masks", "class_masks", "instance_detections2D", "class_detections2D")


class Junk:
    """An argument no JSON binding could accept, with a repr that spans lines."""

    def __repr__(self) -> str:
        return "Junk(\n  multi\n  line)"


def hostile_values() -> List[Any]:
    nan, inf = float("nan"), float("inf")
    return [
        nan,
        inf,
        -inf,
        1e9,
        -1e9,
        1e308,
        -1e308,
        -5,
        -1,
        0,
        -0.0,
        3,
        2**31,
        10**400,
        0.5,
        np.float32("nan"),
        np.float64(1e300),
        np.int64(-7),
        "abc",
        "",
        "nan",
        "1.5",
        None,
        True,
        False,
        np.bool_(True),
        [],
        {},
        [1, 2],
        [nan, 0, 0],
        (1e9, 0, -1e9),
        {"x": nan, "y": 0, "z": 0},
        {"x": "a", "y": 0, "z": 0},
        {"x": 1e9, "y": 0, "z": 1e9},
        {"x": 0, "y": inf, "z": 0},
        {"y": 90},
        {"nested": {"junk": [1, {"x": nan}]}},
        [{"x": nan}],
        [[[]]],
        b"bytes",
        complex(1, 2),
        {1, 2},
        Junk(),
    ]


class ArgMaker:
    """Plausible argument values, by parameter name, drawn from the current scene."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.hostile = hostile_values()
        self.meta: Dict[str, Any] = {}

    def set_event(self, meta: Dict[str, Any]) -> None:
        self.meta = meta

    # --- scene-derived pools ------------------------------------------------------------
    def _objects(self) -> List[Dict[str, Any]]:
        return self.meta.get("objects") or []

    def object_id(self) -> str:
        objs = self._objects()
        r = self.rng.random()
        if not objs or r < 0.05:
            return self.rng.choice(["Apple|+09.00|+09.00|+09.00", "", "Mug"])
        if r < 0.5:
            vis = [o for o in objs if o["visible"]]
            if vis:
                return self.rng.choice(vis)["objectId"]
        if r < 0.6 and self.meta.get("inventoryObjects"):
            return self.meta["inventoryObjects"][0]["objectId"]
        return self.rng.choice(objs)["objectId"]

    def object_type(self) -> str:
        objs = self._objects()
        return (
            self.rng.choice(objs)["objectType"] if objs and self.rng.random() < 0.9 else "Unicorn"
        )

    def agent_xyz(self) -> Tuple[float, float, float]:
        p = self.meta.get("agent", {}).get("position", {"x": 0.0, "y": 0.9, "z": 0.0})
        return p["x"], p["y"], p["z"]

    def world_point(self, near_object: bool) -> Dict[str, float]:
        rng = self.rng
        if near_object and self._objects():
            p = dict(rng.choice(self._objects())["position"])
            p = {k: float(v) + rng.uniform(-0.3, 0.3) for k, v in p.items()}
            p["y"] += rng.uniform(0, 0.5)
            return p
        x, y, z = self.agent_xyz()
        g = 0.25
        return {
            "x": x + g * rng.randint(-3, 3),
            "y": y if rng.random() < 0.9 else y + rng.uniform(-1, 1),
            "z": z + g * rng.randint(-3, 3),
        }

    def rotation(self) -> Any:
        y = self.rng.choice([0.0, 90.0, 180.0, 270.0, self.rng.uniform(-360, 720)])
        return y if self.rng.random() < 0.3 else {"x": 0.0, "y": y, "z": 0.0}

    def pose_entries(self) -> List[Dict[str, Any]]:
        rng = self.rng
        movable = [o for o in self._objects() if o["pickupable"] or o["moveable"]]
        out = []
        for o in movable:
            if rng.random() < 0.8:
                p = {k: float(v) + rng.uniform(-0.05, 0.05) for k, v in o["position"].items()}
                out.append(
                    {"objectName": o["name"], "position": p, "rotation": dict(o["rotation"])}
                )
        if rng.random() < 0.2:
            out.append(
                {
                    "objectName": "Unicorn_1234",
                    "position": {"x": 0, "y": 1, "z": 0},
                    "rotation": {"x": 0, "y": 0, "z": 0},
                }
            )
        if out and rng.random() < 0.3:
            e = rng.choice(out)
            e[rng.choice(["position", "rotation", "objectName"])] = rng.choice(self.hostile)
        return out

    # --- one value ----------------------------------------------------------------------
    def plausible(self, action: str, name: str) -> Any:
        rng = self.rng
        world_xyz = action in ("Teleport", "TeleportFull", "TeleportObject")
        if name in ("objectId", "receptacleObjectId"):
            return self.object_id()
        if name in ("objectIds", "excludedObjectIds", "receptacleObjectIds"):
            return [self.object_id() for _ in range(rng.randint(0, 4))]
        if name in ("objectType",):
            return self.object_type()
        if name in ("objectTypes", "excludedReceptacles"):
            return [self.object_type() for _ in range(rng.randint(0, 3))]
        if name in ("x", "y", "z"):
            if world_xyz:
                p = self.world_point(action == "TeleportObject")
                return p[name]
            return rng.random()
        if name == "position":
            return self.world_point(action in ("TeleportObject", "PlaceObjectAtPoint"))
        if name == "positions":
            return [
                self.world_point(action != "GetInteractablePoses") for _ in range(rng.randint(0, 4))
            ]
        if name == "rotation":
            return self.rotation()
        if name == "rotations":
            return [rng.choice([0.0, 90.0, 180.0, 270.0]) for _ in range(rng.randint(0, 3))]
        if name == "horizon":
            return rng.choice([-30.0, 0.0, 30.0, 60.0, rng.uniform(-60, 90)])
        if name == "horizons":
            return [rng.choice([-30.0, 0.0, 30.0, 60.0]) for _ in range(rng.randint(0, 3))]
        if name == "standings":
            return [rng.random() < 0.5 for _ in range(rng.randint(0, 2))]
        if name == "moveMagnitude":
            return (
                rng.uniform(0, 300)
                if action == "ThrowObject"
                else rng.choice([0.25, 0.5, rng.uniform(0, 1.5)])
            )
        if name == "degrees":
            return rng.choice([30.0, 90.0, 10.0, rng.uniform(-180, 360)])
        if name == "openness":
            return rng.random()
        if name in ("randomSeed", "seed"):
            return rng.randint(0, 1000)
        if name in ("numPlacementAttempts", "maxPoses", "maxStepCount"):
            return rng.randint(1, 20) if name != "maxStepCount" else rng.randint(1, 2000)
        if name in ("maxDistance", "gridSize"):
            return rng.uniform(0.1, 2.0)
        if name in ("timeStep", "simSeconds"):
            return rng.uniform(0, 0.06)
        if name == "numDuplicatesOfType":
            return [{"objectType": self.object_type(), "count": rng.randint(0, 4)}]
        if name == "objectPoses":
            return self.pose_entries()
        if name == "SetObjectStates":
            change = rng.choice(
                [
                    "openable",
                    "toggleable",
                    "breakable",
                    "canFillWithLiquid",
                    "dirtyable",
                    "cookable",
                    "sliceable",
                    "canBeUsedUp",
                    "junk",
                ]
            )
            key = {
                "openable": "isOpen",
                "toggleable": "isToggled",
                "breakable": "isBroken",
                "canFillWithLiquid": "isFilledWithLiquid",
                "dirtyable": "isDirty",
                "cookable": "isCooked",
                "sliceable": "isSliced",
                "canBeUsedUp": "isUsedUp",
            }.get(change, "isJunk")
            return {
                "objectType": self.object_type(),
                "stateChange": change,
                key: rng.random() < 0.5,
            }
        if name == "objectToggles":
            return [{"objectType": self.object_type(), "isOn": rng.random() < 0.5}]
        if name == "StateChange":
            return rng.choice(["CanBeDirty", "CanBeFilled", "CanBeUsedUp", "Junk"])
        if name == "fillLiquid":
            return rng.choice(["water", "coffee", "wine", "lava"])
        if name == "standing":
            return rng.random() < 0.5
        # every remaining parameter is a flag (forceAction, placeStationary, ...)
        return rng.random() < 0.5

    def value(self, action: str, name: str) -> Any:
        if self.rng.random() < 0.5:
            return self.plausible(action, name)
        return self.rng.choice(self.hostile)


def draw_call(
    rng: random.Random, maker: ArgMaker, names: List[str], weights: List[float]
) -> Tuple[Any, Dict[str, Any]]:
    if rng.random() < 0.01:
        return rng.choice(UNKNOWN_ACTIONS), {}
    name = rng.choices(names, weights)[0]
    spec = ACTIONS[name]
    kwargs: Dict[str, Any] = {}
    for p, default in spec.params.items():
        if default is REQUIRED:
            if rng.random() < 0.97:
                kwargs[p] = maker.value(name, p)
        elif rng.random() < 0.5:
            kwargs[p] = maker.value(name, p)
    if rng.random() < 0.03:
        kwargs[rng.choice(["bogusArg", "speed", "renderImage"])] = rng.choice(maker.hostile)
    return name, kwargs


# --- invariant checks ------------------------------------------------------------------
def find_nonfinite(x: Any, path: str = "") -> Optional[str]:
    t = type(x)
    if t is float:
        return None if math.isfinite(x) else path
    if t is dict:
        for k, v in x.items():
            r = find_nonfinite(v, f"{path}.{k}")
            if r:
                return r
    elif t is list or t is tuple:
        for i, v in enumerate(x):
            r = find_nonfinite(v, f"{path}[{i}]")
            if r:
                return r
    elif isinstance(x, (float, np.floating)):
        return None if math.isfinite(x) else path
    return None


def house_box(meta: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    pts = [np.asarray(meta["sceneBounds"]["cornerPoints"], float)]
    pts += [np.asarray(o["axisAlignedBoundingBox"]["cornerPoints"], float) for o in meta["objects"]]
    allp = np.vstack(pts)
    return allp.min(0) - HOUSE_SLACK, allp.max(0) + HOUSE_SLACK


def outside_house(meta: Dict[str, Any], lo: np.ndarray, hi: np.ndarray) -> Optional[str]:
    a = meta["agent"]["position"]
    p = np.array([a["x"], a["y"], a["z"]])
    if np.any(p < lo) or np.any(p > hi):
        return f"agent at {p.round(3).tolist()}"
    for o in meta["objects"]:
        c = o["axisAlignedBoundingBox"]["center"]
        q = np.array([c["x"], c["y"], c["z"]])
        if np.any(q < lo) or np.any(q > hi):
            return f"{o['objectId']} at {q.round(3).tolist()}"
    return None


def held_problem(meta: Dict[str, Any]) -> Optional[str]:
    inv = [o["objectId"] for o in meta["inventoryObjects"]]
    listed = {o["objectId"] for o in meta["objects"]}  # SetObjectFilter may hide the held one
    picked = [o["objectId"] for o in meta["objects"] if o["isPickedUp"]]
    if len(inv) > 1:
        return f"inventory holds {inv}"
    if sorted(picked) != sorted(i for i in inv if i in listed):
        return f"inventory {inv} but isPickedUp {picked}"
    return None


def world_state(meta: Dict[str, Any]) -> Tuple:
    return (meta["agent"], meta["objects"], meta["inventoryObjects"])


def first_diff(a: Tuple, b: Tuple) -> str:
    if a[0] != b[0]:
        return f"agent {a[0]} -> {b[0]}"
    if a[2] != b[2]:
        return f"inventory {a[2]} -> {b[2]}"
    ia = {o["objectId"]: o for o in a[1]}
    ib = {o["objectId"]: o for o in b[1]}
    if set(ia) != set(ib):
        return (
            f"objects added {sorted(set(ib) - set(ia))[:3]} removed {sorted(set(ia) - set(ib))[:3]}"
        )
    for k in ia:
        if ia[k] != ib[k]:
            keys = [f for f in ia[k] if ia[k][f] != ib[k].get(f)]
            return f"{k}: {keys[:4]}"
    return "?"


def read_properties(ev, images: bool) -> Optional[str]:
    names = CHEAP_PROPERTIES + (IMAGE_PROPERTIES + MASK_PROPERTIES if images else ())
    for n in names:
        try:
            v = getattr(ev, n)
            if n in MASK_PROPERTIES and v is not None:
                dict(v)
        except Exception as e:  # noqa: BLE001 - that is what we count
            return f"{n}: {type(e).__name__}: {e}"
    try:
        m = ev.metadata
        for k in list(m.keys()):
            m[k]
        bool(ev), repr(ev), ev.get_object("nope"), ev.objects_by_type("Apple"), ev.cv2image()
    except Exception as e:  # noqa: BLE001
        return f"metadata/helpers: {type(e).__name__}: {e}"
    return None


def short(x: Any, n: int = 160) -> str:
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001
        r = f"<{type(x).__name__}>"
    r = " ".join(r.split())
    return r if len(r) <= n else r[: n - 3] + "..."


def pick_scenes(n: int, seed: int) -> List[str]:
    scenes = list(ithor_scene_names())
    by_type = [scenes[i * 30 : (i + 1) * 30] for i in range(4)]
    rng = random.Random(seed)
    for group in by_type:
        rng.shuffle(group)
    out = [by_type[i % 4][i // 4] for i in range(min(n, len(scenes)))]
    return out


class _Tally:
    """Counts of checks, violations (with a few examples), outcomes and per-action results."""

    def __init__(self) -> None:
        self.checks: Counter = Counter()
        self.violations: Counter = Counter()
        self.examples: Dict[str, List[str]] = defaultdict(list)
        self.outcome: Counter = Counter()
        self.per_action: Dict[str, Counter] = defaultdict(Counter)
        self.partial_applied = 0

    def check(self, inv: str, problem: Optional[str], where: str) -> None:
        self.checks[inv] += 1
        if problem:
            self.violations[inv] += 1
            if len(self.examples[inv]) < EXAMPLES:
                self.examples[inv].append(f"{where}: {problem}")


def _step(
    c: Controller, action: Any, kwargs: Dict[str, Any], tally: _Tally, where: str
) -> Optional[BaseException]:
    """One call; only the documented ValueErrors may escape the controller."""
    try:
        c.step(action, **kwargs)
    except ValueError as e:
        tally.outcome["rejected (documented ValueError)"] += 1
        ok = DOCUMENTED_VALUE_ERRORS.search(str(e))
        tally.check(
            "only_documented_exceptions", None if ok else f"ValueError: {short(str(e))}", where
        )
        return e
    except Exception as e:  # noqa: BLE001
        tally.outcome["undocumented exception"] += 1
        tally.check("only_documented_exceptions", f"{type(e).__name__}: {short(str(e))}", where)
        return e
    tally.check("only_documented_exceptions", None, where)
    return None


def _check_failure(
    action: Any,
    raised: Optional[BaseException],
    before: Any,
    m: Dict[str, Any],
    tally: _Tally,
    where: str,
) -> None:
    """A failed action has a clean one-line message and changed nothing (partial SetObjectPoses aside)."""
    err = m["errorMessage"] or ""
    partial = (
        action == "SetObjectPoses"
        and raised is None
        and err
        and all(PARTIAL_LINE.match(line) for line in err.split("\n"))
    )
    # THOR's own dispatcher messages (the documented ValueErrors) span lines
    multi_line = "\n" in err and not partial and raised is None
    dirty = multi_line or TRACEBACK.search(err) or RAW_EXCEPTION.match(err)
    tally.check("clean_error_message", short(err, 200) if dirty else None, where)
    after = world_state(m)
    if partial:
        tally.partial_applied += after != before
    else:
        changed = (
            f"{short(err, 80)} | changed {first_diff(before, after)}" if after != before else None
        )
        tally.check("failure_changes_nothing", changed, where)


def run(args: argparse.Namespace) -> Dict[str, Any]:
    rng = random.Random(args.seed)
    scenes = pick_scenes(args.scenes, args.seed)
    names = sorted(ACTIONS)
    weights = [ACTION_WEIGHTS.get(n, 1.0) for n in names]
    maker = ArgMaker(rng)
    tally = _Tally()
    c = Controller(
        scene=scenes[0],
        width=args.res,
        height=args.res,
        renderDepthImage=True,
        renderInstanceSegmentation=True,
        renderSemanticSegmentation=True,
    )
    per_scene = [
        args.actions // len(scenes) + (1 if i < args.actions % len(scenes) else 0)
        for i in range(len(scenes))
    ]
    t0 = time.time()
    step = 0
    bar = tqdm(total=args.actions, unit="act", disable=args.no_progress, mininterval=1.0)
    for scene, n in zip(scenes, per_scene):
        for k in range(n):
            if k % args.reset_every == 0:
                ev = c.reset(scene)
                lo, hi = house_box(ev.metadata)
            before = world_state(c.last_event.metadata)
            maker.set_event(c.last_event.metadata)
            action, kwargs = draw_call(rng, maker, names, weights)
            where = f"step {step} {scene} {action}({', '.join(f'{a}={short(v, 60)}' for a, v in kwargs.items())})"
            raised = _step(c, action, kwargs, tally, where)
            ev = c.last_event
            m = ev.metadata
            ok = bool(m["lastActionSuccess"]) and raised is None
            if raised is None:
                tally.outcome["success" if ok else "failed"] += 1
            tally.per_action[str(action)]["ok" if ok else ("rejected" if raised else "failed")] += 1
            nf = find_nonfinite(dict(m.items()))
            tally.check("finite_metadata", f"non-finite at metadata{nf}" if nf else None, where)
            tally.check("inside_house", outside_house(m, lo, hi), where)
            tally.check("one_held_object", held_problem(m), where)
            if not ok:
                _check_failure(action, raised, before, m, tally, where)
            tally.check(
                "properties_readable",
                read_properties(ev, images=(step % args.image_every == 0)),
                where,
            )
            step += 1
            bar.update(1)
    bar.close()
    elapsed = time.time() - t0
    return {
        "config": {
            "seed": args.seed,
            "actions": args.actions,
            "scenes": scenes,
            "image_every": args.image_every,
            "reset_every": args.reset_every,
            "res": args.res,
            "python": platform.python_version(),
        },
        "elapsed_s": round(elapsed, 1),
        "actions_per_s": round(step / max(elapsed, 1e-9), 1),
        "outcomes": dict(tally.outcome),
        "partial_failures_with_applied_entries": tally.partial_applied,
        "invariants": {
            k: {
                "description": d,
                "checked": tally.checks[k],
                "violations": tally.violations[k],
                "examples": tally.examples[k],
            }
            for k, d in INVARIANTS.items()
        },
        "per_action": {k: dict(v) for k, v in sorted(tally.per_action.items())},
    }


def print_table(res: Dict[str, Any]) -> None:
    cfg = res["config"]
    print(
        f"\nthor_lite fuzz: seed={cfg['seed']} actions={cfg['actions']} scenes={len(cfg['scenes'])} "
        f"in {res['elapsed_s']} s ({res['actions_per_s']} actions/s)"
    )
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(res["outcomes"].items())))
    print(
        f"SetObjectPoses partial failures that kept their valid entries (THOR semantics): "
        f"{res['partial_failures_with_applied_entries']}\n"
    )
    print("| invariant | checked | violations |")
    print("|---|---:|---:|")
    for k, v in res["invariants"].items():
        print(f"| {v['description']} | {v['checked']} | {v['violations']} |")
    for k, v in res["invariants"].items():
        if v["examples"]:
            print(f"\n{k}:")
            for e in v["examples"]:
                print("  - " + e)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--actions", type=int, default=20000)
    ap.add_argument("--scenes", type=int, default=20)
    ap.add_argument(
        "--image-every", type=int, default=50, help="read every image on every Nth step"
    )
    ap.add_argument(
        "--reset-every", type=int, default=1000, help="reload the scene every N actions"
    )
    ap.add_argument("--res", type=int, default=64)
    ap.add_argument("--out", default=str(RESULTS_DIR / "thor_lite_fuzz.json"))
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    res = run(args)
    print_table(res)
    write_json(Path(args.out), res)
    print(f"\nresult written to {args.out}")
    return 1 if any(v["violations"] for v in res["invariants"].values()) else 0


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)

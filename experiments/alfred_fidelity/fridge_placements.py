"""Where did THOR 2.1.0 put the things ALFRED put into a Fridge or Microwave? Recorded pickup masks vs thor_lite.

    python -m experiments.alfred_fidelity.fridge_placements                      # the 316-trajectory sample
    python -m experiments.alfred_fidelity.fridge_placements --data DIR --out benchmarks/results/fridge_placements.md

Replays every real trajectory under --data that puts something into a Fridge or Microwave (as
``benchmarks/alfred_fidelity.py --mode replay``, stopping at the first failed step) and, at the recorded
PickupObject of each such object, compares the recorded mask (where THOR's object was) with
ours. THOR's position is estimated on the ray through the mask's centroid, once for each height
the object could rest at (every fridge level of ``physics.fridge_levels``; the cavity floor in a
microwave): the level whose predicted apparent size (our object's pixels at the put, scaled by
distance squared) is nearest the mask's pixel count is THOR's (``fit`` = |log size ratio|;
masks cut by the frame edge fit badly). Positions are in the receptacle's frame: ``depth``
behind its front face, ``up`` above its bottom (the object's centre), ``lat`` sideways.

Why: placement order in a fridge was tuned three times without a net gain; this makes the
evidence (which level, how deep) a table anyone can re-run before trying another rule.
Writes --out (markdown) and a .json beside it.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

from benchmarks._common import RESULTS_DIR, SHARED, markdown_table, write_json, write_markdown
from alfred_task.evaluation.replay import find_trajectories
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_dir,
    check_output_file,
    report_usage_errors,
)

DEFAULT_DATA = SHARED / "data" / "alfred_train_sample" / "json_2.1.0"
KINDS = ("Fridge", "Microwave")


def puts_into(traj: Dict[str, Any]) -> bool:
    """Does the recorded plan put something into a Fridge or Microwave?"""
    for la in traj["plan"]["low_actions"]:
        a = la["api_action"]
        if (
            a["action"] == "PutObject"
            and str(a.get("receptacleObjectId", "")).split("|")[0] in KINDS
        ):
            return True
    return False


def _ray(w, row: float, col: float) -> Tuple[np.ndarray, np.ndarray]:
    """The camera ray through pixel (row, col), unit direction."""
    from thor_lite.geometry import camera_tan_aspect

    tan_v, aspect = camera_tan_aspect(w.fov, w.width, w.height)
    v, u = 1 - 2 * (row + 0.5) / w.height, 2 * (col + 0.5) / w.width - 1
    d = w.camera_rotation() @ np.array([u * tan_v * aspect, v * tan_v, 1.0])
    return w.camera_position(), d / np.linalg.norm(d)


def receptacle_frame(rec) -> Tuple[Callable[[np.ndarray], Dict[str, float]], float]:
    """World point -> depth behind the receptacle's front face, height above its bottom, sideways;
    and the receptacle's depth front to back."""
    f = np.array([rec.front[0], 0.0, rec.front[1]])
    b = rec.box
    k = 0 if abs(f @ b.rot[:, 0]) > abs(f @ b.rot[:, 2]) else 2
    lat = np.cross([0.0, 1.0, 0.0], f)
    bottom = float(rec.aabb[0][1])

    def to_frame(p: np.ndarray) -> Dict[str, float]:
        return {
            "depth": round(float(b.half[k] - (p - b.center) @ f), 3),
            "up": round(float(p[1] - bottom), 3),
            "lat": round(float((p - b.center) @ lat), 3),
        }

    return to_frame, 2 * float(b.half[k])


def after_put(env, w, held: str, target: str) -> Dict[str, Any]:
    """Our pose of `held` just put into `target`, its pixels and distance (the size reference)."""
    from thor_lite import physics

    rec, obj = w.objects[target], w.objects[held]
    levels = (
        physics.fridge_levels(w, rec, held)
        if rec.object_type == "Fridge"
        else [float(obj.aabb[0][1])]
    )
    px = env.last_event.instance_masks.get(held)
    return {
        "obj": held,
        "rec": target,
        "kind": rec.object_type,
        "otype": obj.object_type,
        "levels": [round(y - float(rec.aabb[0][1]), 3) for y in levels],
        "ours": receptacle_frame(rec)[0](obj.box.center),
        "px_ref": int(px.sum()) if px is not None else 0,
        "d_ref": float(np.linalg.norm(obj.box.center - w.camera_position())),
    }


def at_pickup(env, w, put: Dict[str, Any], mask: np.ndarray) -> Dict[str, Any]:
    """The recorded pickup mask against our object: THOR's estimate per level, the best fit."""
    rec, obj = w.objects[put["rec"]], w.objects[put["obj"]]
    rows, cols = np.nonzero(mask)
    o, d = _ray(w, rows.mean(), cols.mean())
    (to_frame, depth), half_h = receptacle_frame(rec), float(obj.box.center[1] - obj.aabb[0][1])
    best: Optional[Dict[str, Any]] = None
    for level in put["levels"]:
        t = (float(rec.aabb[0][1]) + level + half_h - o[1]) / d[1]
        if t <= 0 or not put["px_ref"]:
            continue
        q = dict(to_frame(o + t * d), level=level)
        q["fit"] = round(abs(math.log(mask.sum() / (put["px_ref"] * (put["d_ref"] / t) ** 2))), 2)
        inside = -0.02 <= q["depth"] <= depth + 0.02
        if inside and (best is None or q["fit"] < best["fit"]):
            best = q
    ours_px = env.last_event.instance_masks.get(put["obj"])
    edge = bool(
        min(rows.min(), cols.min()) == 0
        or rows.max() == mask.shape[0] - 1
        or cols.max() == mask.shape[1] - 1
    )
    return {
        "mask_px": int(mask.sum()),
        "mask_at_edge": edge,
        "thor": best,
        "overlap_px": int((ours_px & mask).sum()) if ours_px is not None else 0,
    }


def survey(env, traj: Dict[str, Any], name: str) -> List[Dict[str, Any]]:
    """Replay one trajectory; a row for each Fridge/Microwave put whose object is picked up again."""
    from alfred_task.constants import INTERACT_ACTIONS
    from alfred_task.data.masks import decompress_mask

    env.init_episode(traj)
    w, pending, rows = env.controller._world, {}, []  # noqa: SLF001 - thor_lite geometry, as the tests read it
    for i, la in enumerate(traj["plan"]["low_actions"]):
        act, api = la["discrete_action"]["action"], la["api_action"]
        if act not in INTERACT_ACTIONS:
            ok = bool(env.step(dict(api)).metadata["lastActionSuccess"])
        else:
            mask = np.asarray(decompress_mask(la["discrete_action"]["args"]["mask"]), bool)
            if act == "PickupObject" and api.get("objectId") in pending:
                put = pending.pop(api["objectId"])
                rows.append({"task": name, "pick_step": i, **put, **at_pickup(env, w, put, mask)})
            held = w.held
            ok, _, target, _, _ = env.va_interact(act, mask)
            if act == "PutObject" and ok and target and w.objects[target].object_type in KINDS:
                pending[api.get("objectId")] = dict(put_step=i, **after_put(env, w, held, target))
        if not ok:
            break
    return rows


def _row(r: Dict[str, Any]) -> List[Any]:
    t, o = r["thor"] or {}, r["ours"]
    rank = r["levels"].index(t["level"]) + 1 if t else "-"
    return [
        r["task"][:58],
        r["kind"],
        r["otype"],
        f"{o['depth']:.2f} / {o['up']:.2f} / {o['lat']:+.2f}",
        (f"{t['depth']:.2f} / {t['up']:.2f} / {t['lat']:+.2f}" if t else "-"),
        f"{rank} of {len(r['levels'])}",
        t.get("fit", "-"),
        r["mask_px"],
        "yes" if r["mask_at_edge"] else "",
        r["overlap_px"],
    ]


def report(rows: List[Dict[str, Any]], data: Path, out: Path) -> str:
    """Markdown: one line per put, then medians of how much deeper/lower THOR's object was."""
    good = [r for r in rows if r["thor"] and r["thor"]["fit"] <= 0.5 and not r["mask_at_edge"]]
    lines = [
        "# Fridge/Microwave placements: THOR 2.1.0 (recorded pickup masks) vs thor_lite",
        "",
        f"data: {data}; {len(rows)} puts picked up again; {len(good)} with a fit <= 0.5 and the mask "
        "clear of the frame edge",
        "",
        "depth / up / lat in metres (receptacle frame: behind the front "
        "face, centre above the bottom, sideways); level: THOR's level from the bottom of ours",
        "",
    ]
    lines += markdown_table(
        [
            "task",
            "receptacle",
            "object",
            "ours",
            "THOR (estimate)",
            "THOR level",
            "fit",
            "mask px",
            "mask at edge",
            "overlap px",
        ],
        [_row(r) for r in rows],
        "lllllllrlr",
    )
    for kind in KINDS:
        sel = [r for r in good if r["kind"] == kind]
        if sel:
            dd = np.median([r["thor"]["depth"] - r["ours"]["depth"] for r in sel])
            du = np.median([r["thor"]["up"] - r["ours"]["up"] for r in sel])
            low = sum(r["thor"]["level"] == min(r["levels"]) < max(r["levels"]) for r in sel)
            many = sum(len(r["levels"]) > 1 for r in sel)
            levels = f"; on the lowest of several levels in {low} of {many}" if many else ""
            lines += [
                "",
                f"{kind}: {len(sel)} good fits; THOR's object is {dd:+.2f} m deeper and {du:+.2f} m "
                f"higher than ours (medians){levels}",
            ]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = OneLineArgumentParser(
        prog="python -m experiments.alfred_fidelity.fridge_placements",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder searched for traj_data.json"
    )
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "alfred_fridge_placements.md")
    args = ap.parse_args(argv)
    with report_usage_errors(ap.prog):
        check_output_file("--out", args.out)
        check_output_file("--out (json next to it)", args.out.with_suffix(".json"))
        check_input_dir("--data", args.data)
        trajs = [(p, json.loads(p.read_text())) for p in find_trajectories(args.data, None, 0)]
        files = [(p, t) for p, t in trajs if puts_into(t)]
        if not files:
            raise UsageError(
                f"--data {args.data}: no traj_data.json puts anything into a Fridge or Microwave"
            )
    from alfred_task.env.environment import AlfredEnv

    env, rows = AlfredEnv(), []
    for p, traj in tqdm(files, desc="trajectories"):
        rows += survey(env, traj, p.parent.parent.name)
    text = report(rows, args.data, args.out)
    print(text)
    write_markdown(args.out, text)
    write_json(args.out.with_suffix(".json"), rows, indent=1)
    return 0


if __name__ == "__main__":
    from benchmarks._common import run_cli

    run_cli(main)

"""The object names (and known ids) of a given THOR build, applied to thor_lite's scenes.

thor_lite's scenes carry the names of the release its metadata source recorded; the official
rearrangement datasets name objects as the pinned challenge build does (`Fridge_ab2776a0`), and
names differ from build to build. A client that looks objects up by name right after `reset`
(the official rearrangement code does) needs that build's names.

`python -m thor_lite.names --from FILE...` derives, from official episode files, one table per
scene: thor_lite name -> the build's name, and thor_lite objectId -> the build's objectId where
an episode states it and it differs (`openable_data`). Matching is by type (the name's prefix)
and position: an openable by the position in its objectId (static furniture); pickupables by
how often their episode poses coincide with the object's default placement, where the episodes
left it in place. A type whose instances the evidence cannot tell apart is refused (one line:
scene, type, candidates) unless thor_lite's candidates are interchangeable (same box), in which
case a fixed order decides. Tables live in `data/names/<commit_id>.json`, one per build, with
their sources (file name, sha256); the Controller applies the table of its `commit_id` (the
pinned build when none is given) at reset, for today's rules only (ALFRED's THOR 2.1.0 scenes
keep their own names). Scenes without a table keep today's names.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import json
import pickle
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..objects import SimObject

#: the pinned 2023 challenge build (`backends.THOR_COMMIT_ID`): its tables apply by default
DEFAULT_BUILD = "a9ccb07faf771377c9ff1615bfe7e0ad01968663"
TABLES_DIR = Path(__file__).resolve().parents[1] / "data" / "names"
TABLE_VERSION = 1

#: an episode pose this near (m) an object's default placement is that object left in place
COINCIDE = 0.05
#: an openable whose objectId is none of thor_lite's is the piece of its type this near (m)
#: to the position in its id ...
OPENABLE_SPOT = 0.25
#: ... when every other free piece of its type is at least this much (m) further away
OPENABLE_MARGIN = 0.1
#: more same-type names than this is not searched (permutations)
MAX_SAME_TYPE = 8


class NameTableError(RuntimeError):
    """A name table or an episode file is malformed."""


# --- applying ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def load_table(build: str, tables_dir: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The table set of `build` (a commit id), or None if none is shipped."""
    path = Path(tables_dir or TABLES_DIR) / f"{build}.json"
    if not build or not path.is_file():
        return None
    table = json.loads(path.read_text(encoding="utf-8"))
    if table.get("version") != TABLE_VERSION or table.get("commit_id") != build:
        raise NameTableError(f"{path}: not a version {TABLE_VERSION} name table of {build}")
    return table


def scene_table(build: Optional[str], scene: str) -> Optional[Dict[str, Dict[str, str]]]:
    """{'names': {...}, 'ids': {...}} for `scene` under `build` (None: the pinned build)."""
    table = load_table(build or DEFAULT_BUILD)
    return None if table is None else table["scenes"].get(scene)


def renamed_objects(
    objs: Mapping[str, SimObject], names: Mapping[str, str], ids: Mapping[str, str]
) -> Dict[str, SimObject]:
    """The objects with the table's names and ids; links to renamed ids follow them."""

    def rid(oid: str) -> str:
        return ids.get(oid, oid)

    out: Dict[str, SimObject] = {}
    for oid, o in objs.items():
        changes: Dict[str, Any] = {"parents": tuple(rid(p) for p in o.parents)}
        if o.controlled_objects:
            changes["controlled_objects"] = tuple(rid(c) for c in o.controlled_objects)
        if o.name in names:
            changes["name"] = names[o.name]
        if oid in ids:
            changes["object_id"] = ids[oid]
        new = o.with_changes(**changes)
        out[new.object_id] = new
    return out


def apply_names(world: Any, build: Optional[str]) -> bool:
    """Give a freshly built world the build's names (in place); False if it has no table."""
    t = scene_table(build, world.scene_name)
    if not t:
        return False
    names = {k: v for k, v in t["names"].items()}
    ids = {k: v for k, v in t["ids"].items() if k in world.objects}
    world.objects = renamed_objects(world.objects, names, ids)
    if ids:
        world.rename_scene_poses(ids)
        world.clear_cache()
    return True


# --- deriving ---------------------------------------------------------------------------


def _type_of(name: str) -> str:
    return name.rsplit("_", 1)[0]


def _xyz(p: Mapping[str, float]) -> np.ndarray:
    return np.array([float(p["x"]), float(p["y"]), float(p["z"])])


def _id_position(object_id: str) -> Optional[np.ndarray]:
    parts = object_id.split("|")
    if len(parts) != 4:
        return None
    try:
        return np.array([float(v) for v in parts[1:]])
    except ValueError:
        return None


class SceneEvidence:
    """What a set of episodes of one scene says about its names."""

    def __init__(self) -> None:
        self.poses: Dict[str, List[np.ndarray]] = {}
        self.openable_ids: Dict[str, set] = {}

    def add_episode(self, ep: Mapping[str, Any]) -> None:
        for key in ("starting_poses", "target_poses"):
            for p in ep[key]:
                name = p.get("objectName") or p["name"]
                self.poses.setdefault(name, []).append(_xyz(p["position"]))
        for od in ep.get("openable_data") or ():
            name = od.get("objectName") or od["name"]
            self.openable_ids.setdefault(name, set()).add(od["objectId"])


def _shape_key(o: SimObject) -> Tuple:
    b = o.local_box
    return (
        tuple(np.round(np.asarray(b.half, float), 3)),
        tuple(np.round(np.asarray(b.center, float), 3)),
        o.shape_type or o.object_type,
    )


def _label(o: SimObject) -> str:
    return f"{o.name} ({o.asset_id})" if o.asset_id else o.name


def _match_openables(
    scene: str, objs: Sequence[SimObject], ev: SceneEvidence, refusals: List[str]
) -> Tuple[Dict[str, SimObject], Dict[str, str]]:
    """Openable names -> objects, by the position in their objectIds; and id renames."""
    matched: Dict[str, SimObject] = {}
    ids: Dict[str, str] = {}
    by_id = {o.object_id: o for o in objs}
    pending = []
    for name in sorted(ev.openable_ids):
        rel_ids = sorted(ev.openable_ids[name])
        t = _type_of(name)
        if len(rel_ids) == 1 and rel_ids[0] in by_id and by_id[rel_ids[0]].object_type == t:
            matched[name] = by_id[rel_ids[0]]  # the same id: the same placement
        else:
            pending.append((name, t, rel_ids))
    taken = {o.object_id for o in matched.values()}
    for name, t, rel_ids in pending:
        pos = _id_position(rel_ids[0])
        cands = [o for o in objs if o.object_type == t and o.object_id not in taken]
        if len(rel_ids) != 1 or pos is None or not cands:
            refusals.append(
                f"{scene}: {t}: cannot place {name} ({', '.join(rel_ids)}) among "
                f"{', '.join(_label(o) for o in cands) or 'no free object of that type'}"
            )
            continue
        dist = sorted(
            ((float(np.linalg.norm(_own_position(o) - pos)), o.object_id, o) for o in cands),
            key=lambda x: (x[0], x[1]),
        )
        d1, _, best = dist[0]
        d2 = dist[1][0] if len(dist) > 1 else np.inf
        if d1 > OPENABLE_SPOT or d2 < d1 + OPENABLE_MARGIN:
            refusals.append(
                f"{scene}: {t}: {name} ({rel_ids[0]}) is not clearly one of "
                + ", ".join(f"{o.object_id} ({d:.2f} m)" for d, _, o in dist[:3])
            )
            continue
        matched[name] = best
        taken.add(best.object_id)
        ids[best.object_id] = rel_ids[0]
    return matched, ids


def _own_position(o: SimObject) -> np.ndarray:
    p = _id_position(o.object_id)
    return p if p is not None else np.asarray(o.position, float)


def _assign_type(
    scene: str,
    t: str,
    names: Sequence[str],
    cands: Sequence[SimObject],
    ev: SceneEvidence,
    refusals: List[str],
) -> Dict[str, SimObject]:
    """Same-type names -> objects by coincidence with default placements (see module doc)."""
    k = len(names)
    if k > len(cands) or len(cands) > MAX_SAME_TYPE:
        refusals.append(
            f"{scene}: {t}: {k} names ({', '.join(names)}) for {len(cands)} objects "
            f"({', '.join(_label(o) for o in cands) or 'none'})"
        )
        return {}
    score = np.zeros((k, len(cands)), dtype=int)
    for i, n in enumerate(names):
        p = np.asarray(ev.poses[n])
        for j, o in enumerate(cands):
            d = np.linalg.norm(p - np.asarray(o.position, float)[None], axis=1)
            score[i, j] = int((d < COINCIDE).sum())
    perms = [
        (int(sum(score[i, j] for i, j in enumerate(perm))), perm)
        for perm in itertools.permutations(range(len(cands)), k)
    ]
    best = max(s for s, _ in perms)
    plausible = [(s, p) for s, p in perms if (2 * s > best if best > 0 else True)]
    if len(plausible) > 1:
        free = {j for _, p in plausible for j in p} | (
            set(range(len(cands))) if len(cands) > k else set()
        )
        if len({_shape_key(cands[j]) for j in free}) > 1:
            refusals.append(
                f"{scene}: {t}: cannot tell {', '.join(names)} apart among "
                f"{', '.join(_label(o) for o in cands)} (episode poses at their placements: "
                f"{score.tolist()})"
            )
            return {}
    s, perm = min(plausible, key=lambda sp: (-sp[0], sp[1]))
    return {n: cands[j] for n, j in zip(names, perm)}


def derive_scene(
    scene: str, objs: Iterable[SimObject], ev: SceneEvidence
) -> Tuple[Dict[str, Dict[str, str]], List[str]]:
    """The scene's table ({'names', 'ids'}) and the refusals (one line each)."""
    objs = sorted(objs, key=lambda o: o.object_id)
    refusals: List[str] = []
    matched, ids = _match_openables(scene, objs, ev, refusals)
    taken = {o.object_id for o in matched.values()}
    by_type: Dict[str, List[str]] = {}
    for n in sorted(ev.poses):
        if n not in matched:
            by_type.setdefault(_type_of(n), []).append(n)
    for t, names in sorted(by_type.items()):
        cands = [
            o
            for o in objs
            if o.object_type == t and (o.pickupable or o.moveable) and o.object_id not in taken
        ]
        got = _assign_type(scene, t, names, cands, ev, refusals)
        matched.update(got)
        taken |= {o.object_id for o in got.values()}
    table = {
        "names": {o.name: n for n, o in sorted(matched.items()) if o.name != n},
        "ids": dict(sorted(ids.items())),
    }
    return table, refusals


def load_episodes(path: Path) -> Dict[str, List[Mapping[str, Any]]]:
    """An official rearrangement file: {scene: [episode, ...]}; NameTableError if not."""
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
            data = pickle.load(f)
    except Exception as e:  # any unreadable file is the user's input, reported in one line
        raise NameTableError(f"{path}: not a readable episode pickle ({type(e).__name__}: {e})")
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(e, dict) and "starting_poses" in e for e in v)
        for v in data.values()
    ):
        raise NameTableError(f"{path}: expected {{scene: [episode with starting_poses, ...]}}")
    return data


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def scene_objects(scene: str) -> List[SimObject]:
    """thor_lite's objects of `scene` at reset, under today's names (no table applied)."""
    from ..scene_build import build_world
    from ..scene_data import scene_record

    return list(build_world(scene_record(scene)).objects.values())


def derive_tables(paths: Sequence[Path], build: str, log=None) -> Tuple[Dict[str, Any], List[str]]:
    """The table set of `build` from official episode files, and the refusals."""
    from ..scene_data import normalize_scene_name

    evidence: Dict[str, SceneEvidence] = {}
    sources = []
    for path in paths:
        data = load_episodes(path)
        for scene, eps in data.items():
            try:
                scene = normalize_scene_name(scene)
            except ValueError:
                raise NameTableError(f"{path}: {scene!r} is not an iTHOR scene") from None
            ev = evidence.setdefault(scene, SceneEvidence())
            try:
                for ep in eps:
                    ev.add_episode(ep)
            except (KeyError, TypeError) as e:
                raise NameTableError(f"{path}: {scene}: malformed episode ({e!r})") from None
        sources.append({"file": path.name, "sha256": _sha256(path)})
    scenes: Dict[str, Any] = {}
    refusals: List[str] = []
    for scene in sorted(evidence, key=lambda s: int(s[len("FloorPlan") :])):
        table, refused = derive_scene(scene, scene_objects(scene), evidence[scene])
        scenes[scene] = table
        refusals += refused
        if log:
            log(f"{scene}: {len(table['names'])} names, {len(table['ids'])} ids")
    out = {
        "version": TABLE_VERSION,
        "commit_id": build,
        "sources": sources,
        "matching": {"coincide_m": COINCIDE, "openable_spot_m": OPENABLE_SPOT},
        "refused": refusals,
        "scenes": scenes,
    }
    return out, refusals

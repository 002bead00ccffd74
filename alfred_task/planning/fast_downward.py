"""Fast Downward as the high-level planner (alfred.md §3.3, planning.md §5).

Fast Downward comes from the GPL ``up-fast-downward`` wheel and is only ever run as a
separate program (see :func:`find_fast_downward`); none of its code is imported.
:func:`solve` turns its plan back into :class:`HighLevelAction` steps.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .actions import HighLevelAction, arg_name, fill_goto_args
from .errors import PlannerNotFoundError, PlannerTimeoutError, PlanningError, UnsolvableError

__all__ = ["DEFAULT_SEARCH", "EXISTS_SEARCH", "FALLBACK_SEARCH", "find_fast_downward", "solve"]

# Search configuration.  planning.md §5 recommends exact A* (hmax or blind) on
# pruned problems, which is what ALFRED-style existential goals allow: FD turns
# such a goal into an axiom, and axioms rule out lmcut and the landmark heuristics
# (exit 34).  With goal_style="action" (zero-cost ReachGoal* actions, FF's REACH-GOAL
# idea) there are no axioms, and A* with admissible landmark cost partitioning was
# the fastest exact configuration measured here (2 cores; 330 random kitchen
# problems, 14 receptacles, ~25 objects, all 7 types + 4 sliced variants): same
# optimal costs as hmax, mean 0.46 s vs 0.62 s, worst 5.5 s vs 12.4 s; lmcut worst
# 19.7 s + 1 timeout at 20 s.  The slow cases are sliced tasks (mostly pick-two) with
# several knives: on 300 such problems 10 took > 2.5 s, the worst 19.6 s, which is
# why solve() falls back to weighted A* after ``timeout_s``.
DEFAULT_SEARCH = "astar(landmark_cost_partitioning(lm_hm(m=1)))"
EXISTS_SEARCH = "astar(hmax())"  # planning.md's config, for goal_style="exists"
FALLBACK_SEARCH = "eager_wastar([ff()],w=3)"  # planning.md §5 fallback on timeout


def find_fast_downward(driver: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """Locate the Fast Downward driver script and search binary in ``up-fast-downward``.

    Path logic: ``driver`` (a ``fast-downward.py`` with the wheel's layout next to it) if
    given, for a Fast Downward installed elsewhere; otherwise the
    ``up_fast_downward`` package directory is found with ``importlib.util.find_spec``
    (which does not execute the package) and the wheel layout is
    ``up_fast_downward/downward/fast-downward.py`` (driver) and
    ``up_fast_downward/downward/builds/release/bin/downward`` (search binary).  The
    driver runs the translator as ``sys.executable -m fast_downward.translate`` (the
    ``fast-downward.translate`` wheel), so it must be run with this interpreter.
    Returns ``(driver, search_binary)``.
    """
    if driver is not None:
        driver = Path(driver)
        binary = driver.parent / "builds" / "release" / "bin" / "downward"
    else:
        spec = importlib.util.find_spec("up_fast_downward")
        if spec is None or not spec.submodule_search_locations:
            raise PlannerNotFoundError(
                "Fast Downward not found: install the 'up-fast-downward' package "
                "(pip install up-fast-downward==1.0.0) into this Python environment"
            )
        root = Path(list(spec.submodule_search_locations)[0]) / "downward"
        driver = root / "fast-downward.py"
        binary = root / "builds" / "release" / "bin" / "downward"
    if not driver.is_file() or not binary.is_file():
        raise PlannerNotFoundError(
            f"Fast Downward driver/binary missing ({driver}, {binary}); reinstall the "
            "'up-fast-downward' package (it ships the 'downward' binary)"
        )
    return driver, binary


_FD_UNSOLVABLE = {10, 11, 12, 13}
_FD_TIMEOUT = {21, 23, 24}
_FD_MEMORY = {20, 22}


def _run_fd(
    domain_str: str,
    problem_str: str,
    search: str,
    timeout_s: float,
    fd_driver: str | os.PathLike | None = None,
) -> tuple[list[str], str]:
    """One Fast Downward run in a temporary folder: (plan lines, log); exit codes become errors."""
    driver, _ = find_fast_downward(fd_driver)
    with tempfile.TemporaryDirectory(prefix="alfred_fd_") as tmp:
        d = Path(tmp)
        (d / "domain.pddl").write_text(domain_str)
        (d / "problem.pddl").write_text(problem_str)
        limit = max(1, int(math.ceil(timeout_s)))
        cmd = [
            sys.executable,
            str(driver),
            "--plan-file",
            str(d / "plan"),
            "--overall-time-limit",
            f"{limit}s",
            str(d / "domain.pddl"),
            str(d / "problem.pddl"),
            "--search",
            search,
        ]
        try:
            proc = subprocess.run(
                cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout_s + 5.0
            )
        except subprocess.TimeoutExpired as e:
            raise PlannerTimeoutError(f"Fast Downward ({search}) exceeded {timeout_s:.1f} s") from e
        log = proc.stdout + proc.stderr
        rc = proc.returncode
        if rc == 0:
            plan_path = d / "plan"
            if not plan_path.exists():
                raise PlanningError(f"Fast Downward exited 0 without a plan file:\n{log[-2000:]}")
            lines = [ln.strip() for ln in plan_path.read_text().splitlines()]
            return [ln for ln in lines if ln and not ln.startswith(";")], log
        if rc in _FD_UNSOLVABLE:
            raise UnsolvableError(
                f"Fast Downward proved the problem unsolvable (exit {rc}, {search})"
            )
        if rc in _FD_TIMEOUT:
            raise PlannerTimeoutError(
                f"Fast Downward ({search}) exceeded {timeout_s:.1f} s (exit {rc})"
            )
        if rc in _FD_MEMORY:
            raise PlanningError(f"Fast Downward ran out of memory (exit {rc})")
        if rc == 34:
            raise PlanningError(
                f"Fast Downward: search '{search}' does not support this task (exit 34; "
                "lmcut/landmark heuristics reject the axiom FD builds for a goal_style="
                f"'exists' goal: use goal_style='action', or search '{EXISTS_SEARCH}'):"
                f"\n{log[-1500:]}"
            )
        raise PlanningError(f"Fast Downward failed (exit {rc}):\n{log[-3000:]}")


_MAP_RE = re.compile(r"^;; @alfred-map (.*)$", re.M)
_DIST_RE = re.compile(r"\(= \(distance (\S+) (\S+)\) (\d+)\)")


def solve(
    domain_str: str,
    problem_str: str,
    search: str = DEFAULT_SEARCH,
    timeout_s: float = 10.0,
    fallback_search: str | None = FALLBACK_SEARCH,
    fd_driver: str | os.PathLike | None = None,
) -> list[HighLevelAction]:
    """Plan with Fast Downward and return the high-level plan (ending in NoOp).

    Runs the wheel's driver as a subprocess in a temporary directory (removed
    afterwards) with ``--overall-time-limit`` and a wall-clock timeout.  If
    ``search`` times out and ``fallback_search`` is given, it is run once with the
    same limit (planning.md §5: ``eager_wastar([ff()],w=3)``).  Raises
    :class:`UnsolvableError` when FD proves the goal unreachable,
    :class:`PlannerTimeoutError` on timeout, :class:`PlannerNotFoundError` if the
    ``up-fast-downward`` package is missing (or ``fd_driver``, see
    :func:`find_fast_downward`, points nowhere).  Consecutive GotoLocations are merged
    (ALFRED's post-processing, §3.3).
    """
    try:
        lines, _ = _run_fd(domain_str, problem_str, search, timeout_s, fd_driver)
    except PlannerTimeoutError:
        if not fallback_search or fallback_search == search:
            raise
        lines, _ = _run_fd(domain_str, problem_str, fallback_search, timeout_s, fd_driver)
    m = _MAP_RE.search(problem_str)
    mapping = json.loads(m.group(1)) if m else {}
    dist = {(a, b): int(c) for a, b, c in _DIST_RE.findall(problem_str)}
    return _plan_from_pddl(lines, mapping, dist)


def _plan_from_pddl(lines: list[str], mapping: dict, dist: dict) -> list[HighLevelAction]:
    """Fast Downward's plan lines as high-level actions, gotos merged, ending in NoOp."""
    parents = {v[2]: v[3] for v in mapping.values() if v[0] == "item"}
    types = {v[2]: v[1] for v in mapping.values() if v[1]}
    kinds = {v[2]: v[0] for v in mapping.values()}
    plan: list[HighLevelAction] = []
    for line in lines:
        a = _action_from_line(line, mapping, dist, parents, kinds)
        if a is not None:
            plan.append(a)
    merged = _merge_gotos(plan, mapping, dist)
    merged.append(HighLevelAction("NoOp", []))
    fill_goto_args(merged, types)
    return merged


def _action_from_line(
    line: str, mapping: dict, dist: dict, parents: dict, kinds: dict
) -> HighLevelAction | None:
    """One plan line as a high-level action (None for ReachGoal*); tracks ``parents`` so a
    pickup from a movable receptacle can name the fixed receptacle it stands in."""

    def ident(name: str) -> str:
        return mapping[name][2] if name in mapping else name

    def otype(name: str) -> str:
        return mapping[name][1] if name in mapping and mapping[name][1] else name

    toks = line.strip("()").split()
    op, p = toks[0].lower(), toks[1:]
    if op == "gotolocation":
        a = HighLevelAction(
            "GotoLocation", location=ident(p[2]), cost=dist.get((p[1], p[2]), 0), pddl=line
        )
        a._from = ident(p[1])  # type: ignore[attr-defined]
        return a
    if op in ("openobject", "closeobject"):
        name = "OpenObject" if op == "openobject" else "CloseObject"
        return HighLevelAction(
            name, [arg_name(otype(p[2]))], object_id=ident(p[2]), cost=1, pddl=line
        )
    if op.startswith("pickupobject"):
        o = ident(p[2])
        rec = None
        if op == "pickupobjectinreceptacle":
            rec = ident(p[3])
        elif op == "pickupobjectinreceptacleobject":
            m = ident(p[3])
            mp = parents.get(m)
            rec = mp if (mp is not None and kinds.get(mp) == "receptacle") else m
        parents[o] = None
        return HighLevelAction(
            "PickupObject",
            [arg_name(otype(p[2]))],
            object_id=o,
            receptacle_id=rec,
            cost=1,
            pddl=line,
        )
    if op.startswith("putobject"):
        o, r = ident(p[2]), ident(p[3])
        parents[o] = r
        return HighLevelAction(
            "PutObject",
            [arg_name(otype(p[2])), arg_name(otype(p[3]))],
            object_id=o,
            receptacle_id=r,
            cost=1,
            pddl=line,
        )
    if op in ("cleanobject", "heatobject", "coolobject"):
        name = {
            "cleanobject": "CleanObject",
            "heatobject": "HeatObject",
            "coolobject": "CoolObject",
        }[op]
        return HighLevelAction(
            name,
            [arg_name(otype(p[3]))],
            object_id=ident(p[3]),
            receptacle_id=ident(p[2]),
            cost=5,
            pddl=line,
        )
    if op in ("toggleobjecton", "toggleobjectoff"):
        return HighLevelAction(
            "ToggleObject", [arg_name(otype(p[2]))], object_id=ident(p[2]), cost=5, pddl=line
        )
    if op in ("sliceobjectinreceptacle", "sliceobjectnoreceptacle"):
        co = ident(p[2])
        rec = ident(p[4]) if op == "sliceobjectinreceptacle" else None
        for sid in parents:
            if sid.startswith(co + "|"):
                parents[sid] = rec
        return HighLevelAction(
            "SliceObject",
            [arg_name(otype(p[2]))],
            object_id=co,
            tool_id=ident(p[3]),
            cost=5,
            pddl=line,
        )
    if op.startswith("reachgoal"):
        return None  # FF's REACH-GOAL: becomes the final NoOp/End
    raise PlanningError(f"unknown planner action in plan: {line}")


def _merge_gotos(plan: list[HighLevelAction], mapping: dict, dist: dict) -> list[HighLevelAction]:
    """ALFRED drops a GotoLocation that is immediately followed by another one."""
    merged: list[HighLevelAction] = []
    for a in plan:
        if merged and a.action == "GotoLocation" and merged[-1].action == "GotoLocation":
            prev = merged.pop()
            start = prev._from  # type: ignore[attr-defined]
            a.cost = _dist_lookup(dist, mapping, start, a.location, a.cost)
            a._from = start  # type: ignore[attr-defined]
        merged.append(a)
    return merged


def _dist_lookup(dist: dict, mapping: dict, a: str, b: str, default: int) -> int:
    """Cost between two location ids, looked up under their PDDL names."""
    rev = {v[2]: k for k, v in mapping.items() if v[0] == "location"}
    if a == b:
        return 0
    return dist.get((rev.get(a, a), rev.get(b, b)), default)

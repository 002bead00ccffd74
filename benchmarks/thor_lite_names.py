"""Share of an official rearrangement file's object names that exist in thor_lite right after reset.

    python benchmarks/thor_lite_names.py --data ../shared/data/rearrangement/2023_val.pkl.gz

For every scene of the file, resets a Controller without name tables (today's names) and one
with the pinned build's (`thor_lite.names`), and counts the distinct names of `openable_data`,
`starting_poses` and `target_poses` that some object carries, and the openables' objectIds.
"""

from __future__ import annotations

import argparse
from typing import Dict, Optional, Sequence

from common.cli import OneLineArgumentParser, check_input_file, report_usage_errors

#: a commit id no table exists for: the scenes keep today's names
NO_TABLE = "no-name-table"


def shares(data: Dict[str, list], commit_id: str) -> Dict[str, Dict[str, int]]:
    """{'poses'|'openables'|'openable ids': {'found': n, 'total': m}} over every scene."""
    from thor_lite.controller import Controller

    out = {k: {"found": 0, "total": 0} for k in ("poses", "openables", "openable ids")}
    c = Controller(scene="FloorPlan1", commit_id=commit_id)
    try:
        for scene in sorted(data, key=lambda s: int(s[len("FloorPlan") :])):
            objs = c.reset(scene).metadata["objects"]
            names = {o["name"] for o in objs}
            ids = {o["objectId"] for o in objs}
            want = {
                "poses": {
                    p["name"]
                    for e in data[scene]
                    for k in ("starting_poses", "target_poses")
                    for p in e[k]
                },
                "openables": {od["objectName"] for e in data[scene] for od in e["openable_data"]},
                "openable ids": {od["objectId"] for e in data[scene] for od in e["openable_data"]},
            }
            for k, wanted in want.items():
                have = ids if k == "openable ids" else names
                out[k]["total"] += len(wanted)
                out[k]["found"] += len(wanted & have)
    finally:
        c.stop()
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    prog = "benchmarks/thor_lite_names.py"
    ap = OneLineArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", required=True)
    args: argparse.Namespace = ap.parse_args(argv)
    from thor_lite.names import DEFAULT_BUILD, NameTableError, load_episodes

    with report_usage_errors(prog, NameTableError):
        paths = [check_input_file("--data", p) for p in args.data]
        data: Dict[str, list] = {}
        for p in paths:
            for scene, eps in load_episodes(p).items():
                data.setdefault(scene, []).extend(eps)
    before, after = shares(data, NO_TABLE), shares(data, DEFAULT_BUILD)
    print(f"{len(data)} scenes, {sum(len(v) for v in data.values())} episodes")
    for k in before:
        b, a = before[k], after[k]
        print(
            f"{k:13s} before {b['found']:5d}/{b['total']:5d} ({100 * b['found'] / max(b['total'], 1):5.1f} %)"
            f"  after {a['found']:5d}/{a['total']:5d} ({100 * a['found'] / max(a['total'], 1):5.1f} %)"
        )
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

"""`python -m thor_lite.names --from FILE... [--build COMMIT] [--out DIR]`: derive a build's
name tables from official rearrangement episode files (see `thor_lite.names`)."""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from common.atomic_io import write_json_atomic
from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_input_file,
    check_output_dir,
    report_usage_errors,
    run_main,
)

from . import DEFAULT_BUILD, TABLES_DIR, NameTableError, derive_tables, load_table


def main(argv: Optional[Sequence[str]] = None) -> int:
    prog = "python -m thor_lite.names"
    ap = OneLineArgumentParser(
        prog=prog,
        description="derive a THOR build's object name tables from official episode files",
    )
    ap.add_argument("--from", dest="files", nargs="+", required=True, metavar="FILE")
    ap.add_argument("--build", default=DEFAULT_BUILD, help="commit id the files were made with")
    ap.add_argument("--out", default=str(TABLES_DIR), help="folder of <commit_id>.json tables")
    args = ap.parse_args(argv)
    with report_usage_errors(prog, NameTableError):
        paths = [check_input_file("--from", p) for p in args.files]
        out = check_output_dir("--out", args.out)
        if not args.build or not all(c.isalnum() or c in "-_." for c in args.build):
            raise UsageError(f"--build {args.build!r}: expected a commit id")
        table, refusals = derive_tables(paths, args.build, log=lambda s: print(s, flush=True))
    for line in refusals:
        print(f"refused: {line}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    dest = write_json_atomic(out / f"{args.build}.json", table, indent=1)
    load_table.cache_clear()
    n = sum(len(t["names"]) for t in table["scenes"].values())
    print(f"wrote {dest}: {len(table['scenes'])} scenes, {n} names, {len(refusals)} refused")
    return 0


if __name__ == "__main__":
    run_main(main)

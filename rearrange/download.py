"""Download the official rearrangement data splits and pretrained checkpoints.

    python -m rearrange.download data [--years 2021 2022 2023] [--splits val test] [--out data]
    python -m rearrange.download checkpoints [--configs one_phase_rgb_clipresnet50_dagger map]
                                             [--out pretrained_model_ckpts]
    python -m rearrange.download data --list          # what there is, and where it would go

Data files are checked against their official size and sha256; checkpoints against the size
the server announces (the official README publishes no hashes for them). A transfer that
breaks is resumed (HTTP Range) from `<file>.part`, automatically a few times and again by
running the same command; files that already pass their checks are skipped. Frozen-map
configs also fetch the Active Neural SLAM map weights ("map"). Exit status: 0 done, 1 a
download failed (one line on stderr), 2 a bad argument, 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_output_dir,
    print_error,
    report_usage_errors,
)
from common.download import DownloadError, download, is_complete

from .official_files import (
    CHECKPOINT_BASE_URL_ENV,
    CHECKPOINT_DIR,
    CHECKPOINTS,
    DATA_BASE_URL_ENV,
    DATA_FILES,
    MAP_WEIGHTS,
    OFFICIAL_DATA_DIR,
    YEARS,
    OfficialFile,
    checkpoint_base_url,
    data_base_url,
    official_splits,
)

PROG = "python -m rearrange.download"
MAP = "map"
Job = Tuple[str, OfficialFile]  # (label, file)


def data_jobs(years: Sequence[int], splits: Optional[Sequence[str]]) -> List[Job]:
    """The (year, split) files asked for; a split that none of the years has is an error."""
    for split in splits or ():
        if not any((y, split) in DATA_FILES for y in years):
            have = ", ".join(f"{y}: {' '.join(official_splits(y))}" for y in years)
            raise UsageError(
                f"--splits {split}: no official file for --years {' '.join(map(str, years))} ({have})"
            )
    return [
        (f"{y}/{s}", f)
        for (y, s), f in DATA_FILES.items()
        if y in years and (not splits or s in splits)
    ]


def checkpoint_jobs(configs: Optional[Sequence[str]]) -> List[Job]:
    """Checkpoints of the named configs (all by default), plus the map weights that frozen-map
    configs load; each file once."""
    names = list(configs) if configs else list(CHECKPOINTS) + [MAP]
    jobs: List[Job] = []
    for name in names:
        if name != MAP:
            jobs.append((name, CHECKPOINTS[name].file))
        if name == MAP or CHECKPOINTS[name].needs_map:
            jobs.append((MAP, MAP_WEIGHTS))
    seen = set()
    return [j for j in jobs if not (j[1] in seen or seen.add(j[1]))]


def fetch_all(
    jobs: Sequence[Job], base_url: str, out: Path, retries: int, progress: bool = True
) -> None:
    """Download each job below `out`, one status line per file on stdout."""
    for label, f in jobs:
        dest = out / f.local_path
        fetched = download(
            base_url + f.url_path, dest, f.size, f.sha256, retries=retries, progress=progress
        )
        check = "sha256 verified" if f.sha256 else "size checked"
        verb = "downloaded to" if fetched else "already present at"
        print(f"{label}: {verb} {dest} ({dest.stat().st_size} bytes, {check})", flush=True)


def list_jobs(jobs: Sequence[Job], base_url: str, out: Path) -> None:
    for label, f in jobs:
        dest = out / f.local_path
        state = "present" if is_complete(dest, f.size, f.sha256) else "missing"
        print(f"{label}\t{state}\t{dest}\t{base_url + f.url_path}")


def _parser() -> argparse.ArgumentParser:
    ap = OneLineArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="what", required=True, parser_class=OneLineArgumentParser)
    d = sub.add_parser("data", help="official data splits, data/<year>/<split>.pkl.gz")
    d.add_argument("--years", type=int, nargs="+", choices=YEARS, default=list(YEARS))
    d.add_argument(
        "--splits",
        nargs="+",
        choices=sorted({s for _, s in DATA_FILES}),
        help="default: every split of each year",
    )
    d.add_argument("--out", type=Path, default=OFFICIAL_DATA_DIR, help="data root (default: data/)")
    d.add_argument(
        "--base-url",
        help=f"mirror of the official data/ folder (default: ${DATA_BASE_URL_ENV} "
        "or the official GitHub repository)",
    )
    c = sub.add_parser("checkpoints", help="official pretrained agents and the map weights")
    c.add_argument(
        "--configs",
        nargs="+",
        choices=list(CHECKPOINTS) + [MAP],
        metavar="NAME",
        help=f"config names ({', '.join(CHECKPOINTS)}) or {MAP} (the map weights alone); "
        "default: all, map included",
    )
    c.add_argument(
        "--out", type=Path, default=CHECKPOINT_DIR, help="default: pretrained_model_ckpts/"
    )
    c.add_argument(
        "--base-url", help=f"mirror of the official bucket (default: ${CHECKPOINT_BASE_URL_ENV})"
    )
    for p in (d, c):
        p.add_argument(
            "--list",
            action="store_true",
            help="print the files, their state and URLs; fetch nothing",
        )
        p.add_argument(
            "--retries", type=int, default=3, help="resumed attempts after a broken transfer"
        )
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    with report_usage_errors(PROG):
        if args.retries < 0:
            raise UsageError(f"--retries must be at least 0, not {args.retries}")
        if args.what == "data":
            jobs, base = data_jobs(args.years, args.splits), data_base_url(args.base_url)
        else:
            jobs, base = checkpoint_jobs(args.configs), checkpoint_base_url(args.base_url)
        if args.list:
            list_jobs(jobs, base, args.out)
            return 0
        check_output_dir("--out", args.out)
    try:
        fetch_all(jobs, base, args.out, args.retries, progress=not args.no_progress)
    except DownloadError as e:
        print_error(PROG, e)
        return 1
    except KeyboardInterrupt:
        print_error(PROG, "interrupted; run the same command again to resume")
        return 130
    return 0


if __name__ == "__main__":
    from common.cli import run_main

    run_main(main)

"""Fetch ALFRED's real data and released checkpoint: the sets of ALFRED's `download_data.sh`.

    python -m alfred_task.download json [--out data/alfred_official]   # ~35 MB: trajectory JSONs
    python -m alfred_task.download json_feat                            # ~17 GB: + ResNet-18 features
    python -m alfred_task.download full                                 # ~109 GB: + images, PDDL, video
    python -m alfred_task.download checkpoints                          # the released Seq2Seq+PM
    python -m alfred_task.download json --list                          # files, state, URLs; fetches nothing

Facts (URLs, folder names, approximate sizes) are those of ALFRED's `data/download_data.sh`
and README (github.com/askforalfred/alfred): each set is one `.7z` in the ai2-vision-alfred S3
bucket that unpacks to `<set>_2.1.0/`; the split file `data/splits/oct21.json` is in ALFRED's
git tree; the released Seq2Seq+PM is `seq2seq_pm_chkpt.zip` (`best_seen.pth`,
`best_unseen.pth`). ALFRED publishes no sizes or hashes, so the size the server announces is
checked and `--list` says so. Downloads resume (`common.download`); mirrors through
$ALFRED_BASE_URL (the bucket) and $ALFRED_REPO_BASE_URL (ALFRED's `data/` folder).

After unpacking (with `7z`, `7za` or `7zz` on PATH, as ALFRED's script; `--no-unpack` or
no 7-Zip leaves the archive and prints the command), the split file is also copied to
`<set>_2.1.0/splits.json`, so the folder is what `--data` of `alfred_task.evaluation` and the
ALFRED configs' `data_root` take (`splits` defaults to `<data_root>/splits.json`). Exit
status: 0 done, 1 a download or unpack failed (one line), 2 a bad argument, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from common.cli import (
    OneLineArgumentParser,
    UsageError,
    check_output_dir,
    print_error,
    report_usage_errors,
)
from common.download import DownloadError, download, is_complete

PROG = "python -m alfred_task.download"
BUCKET_URL = "https://ai2-vision-alfred.s3-us-west-2.amazonaws.com/"
REPO_DATA_URL = "https://raw.githubusercontent.com/askforalfred/alfred/master/data/"
BUCKET_URL_ENV = "ALFRED_BASE_URL"
REPO_DATA_URL_ENV = "ALFRED_REPO_BASE_URL"
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "alfred_official"
SEVEN_ZIPS = ("7z", "7za", "7zz")


@dataclass(frozen=True)
class AlfredFile:
    """A file below the bucket (`repo=False`) or ALFRED's `data/` folder, saved as `dest`."""

    url_path: str
    dest: str
    about: str  # the published size, in words: no exact size or hash is published
    repo: bool = False
    size: Optional[int] = None
    sha256: Optional[str] = None


SPLITS = AlfredFile("splits/oct21.json", "splits/oct21.json", "about 3.8 MB", repo=True)
SETS: Dict[str, List[AlfredFile]] = {
    "json": [AlfredFile("json_2.1.0.7z", "json_2.1.0.7z", "about 35 MB"), SPLITS],
    "json_feat": [
        AlfredFile("json_feat_2.1.0.7z", "json_feat_2.1.0.7z", "about 17 GB, 35 GB unpacked"),
        SPLITS,
    ],
    "full": [AlfredFile("full_2.1.0.7z", "full_2.1.0.7z", "about 109 GB"), SPLITS],
    "checkpoints": [AlfredFile("seq2seq_pm_chkpt.zip", "seq2seq_pm_chkpt.zip", "two .pth files")],
}


def base_urls(bucket: Optional[str] = None) -> Dict[bool, str]:
    """{repo?: base URL}: the flag, else the environment variable, else ALFRED's own."""
    b = bucket or os.environ.get(BUCKET_URL_ENV) or BUCKET_URL
    r = os.environ.get(REPO_DATA_URL_ENV) or REPO_DATA_URL
    return {False: b.rstrip("/") + "/", True: r.rstrip("/") + "/"}


def _checks(f: AlfredFile) -> str:
    if f.sha256:
        return f"{f.size} bytes, sha256 known"
    return (
        f"{f.about}; size and sha256 unknown (ALFRED publishes none): the server's size is checked"
    )


def list_lines(what: str, out: Path, bases: Dict[bool, str]) -> List[str]:
    lines = []
    for f in SETS[what]:
        dest = out / f.dest
        state = "present" if is_complete(dest, f.size, f.sha256) else "missing"
        lines.append(f"{what}\t{state}\t{dest}\t{bases[f.repo] + f.url_path}\t{_checks(f)}")
    folder = _unpacked(what, out)
    if what == "checkpoints":
        lines.append(f"{what}\tunzips to {folder} (best_seen.pth, best_unseen.pth)")
    else:
        lines.append(
            f"{what}\tunpacks to {folder} (with splits.json: the --data / data_root folder)"
        )
    return lines


def _unpacked(what: str, out: Path) -> Path:
    return out / f"{what}_2.1.0" if what != "checkpoints" else out / "seq2seq_pm_chkpt"


def unpack(what: str, out: Path) -> str:
    """Unpack the set's archive next to it; a one-line status, DownloadError when it fails."""
    archive = out / SETS[what][0].dest
    folder = _unpacked(what, out)
    if what == "checkpoints":
        try:
            with zipfile.ZipFile(archive) as z:
                z.extractall(folder)
        except (zipfile.BadZipFile, OSError) as e:
            raise DownloadError(f"{archive}: cannot unzip ({e})") from None
        names = ", ".join(sorted(p.name for p in folder.rglob("*.pth"))) or "no .pth files"
        return (
            f"unpacked {archive} to {folder} ({names}); convert one with "
            f"python -m alfred_task.training.convert_checkpoint <file>.pth <out>.pt"
        )
    tool = next((t for t in SEVEN_ZIPS if shutil.which(t)), None)
    if tool is None:
        return (
            f"no 7-Zip on PATH: unpack with `7z x {archive} -o{out}` (p7zip-full), "
            f"then copy {out / SPLITS.dest} to {folder / 'splits.json'}"
        )
    proc = subprocess.run(
        [tool, "x", "-y", f"-o{out}", str(archive)], capture_output=True, text=True
    )
    if proc.returncode != 0 or not folder.is_dir():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DownloadError(
            f"{archive}: {tool} exited {proc.returncode} without making {folder} ({tail[0]})"
        )
    shutil.copyfile(out / SPLITS.dest, folder / "splits.json")
    return f"unpacked {archive} to {folder} (with splits.json): pass it as --data / data_root"


def fetch(what: str, out: Path, bases: Dict[bool, str], retries: int, progress: bool) -> None:
    for f in SETS[what]:
        dest = out / f.dest
        got = download(
            bases[f.repo] + f.url_path, dest, f.size, f.sha256, retries=retries, progress=progress
        )
        verb = "downloaded to" if got else "already present at"
        print(f"{what}: {verb} {dest} ({dest.stat().st_size} bytes)", flush=True)


def _parser() -> argparse.ArgumentParser:
    ap = OneLineArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=list(SETS), help="a set of download_data.sh, or checkpoints")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: data/alfred_official/")
    ap.add_argument("--base-url", help=f"mirror of ALFRED's bucket (default: ${BUCKET_URL_ENV})")
    ap.add_argument("--list", action="store_true", help="files, state, URLs; fetch nothing")
    ap.add_argument("--no-unpack", action="store_true", help="keep the archive as it is")
    ap.add_argument("--retries", type=int, default=3, help="resumed attempts after a break")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    bases = base_urls(args.base_url)
    with report_usage_errors(PROG):
        if args.retries < 0:
            raise UsageError(f"--retries must be at least 0, not {args.retries}")
        if args.list:
            print("\n".join(list_lines(args.what, args.out, bases)))
            return 0
        check_output_dir("--out", args.out)
    try:
        fetch(args.what, args.out, bases, args.retries, progress=not args.no_progress)
        if not args.no_unpack:
            print(unpack(args.what, args.out), flush=True)
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

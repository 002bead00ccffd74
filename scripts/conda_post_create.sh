#!/usr/bin/env bash
# Second step of the conda setup (environment.yml), run inside the new environment:
#   conda run -n thor-lite-rearrange bash scripts/conda_post_create.sh
# Installs what conda's pip section cannot: the data-only packages of requirements-nodeps.txt
# with --no-deps (their own dependencies are never needed: only their data files are read),
# and this repo in editable mode. Then checks that thor_lite finds the data.
#   --check   only the check (nothing installed), e.g. for an environment made another way
# PYTHON=<interpreter> picks the interpreter (default: python on PATH, i.e. the conda env's).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python}"
log() { echo "[conda_post_create] $*"; }

"$PY" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"[conda_post_create] ERROR: python 3.11 expected (environment.yml), this is {sys.version.split()[0]}")
PY

if [[ "${1:-}" != "--check" ]]; then
    log "installing requirements-nodeps.txt without dependencies (data for thor_lite)"
    "$PY" -m pip install -q --no-deps -r requirements-nodeps.txt
    log "installing this repo in editable mode"
    "$PY" -m pip install -q --no-deps --no-build-isolation -e .
fi

"$PY" - <<'PY'
import importlib.metadata as md
import re
import sys

problems = []
for line in open("requirements-nodeps.txt"):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, want = re.split(r"==", line)
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        problems.append(f"{name} is not installed (pip install --no-deps {line})")
        continue
    if have != want:
        problems.append(f"{name} {have} is installed, {want} is pinned")
from thor_lite.scene_data import layouts_dir  # noqa: E402 (needs the editable install or PYTHONPATH)

if layouts_dir() is None:
    problems.append("alfworld's layout files are not found: thor_lite rooms would have no walls")
if problems:
    sys.exit("[conda_post_create] ERROR:\n  - " + "\n  - ".join(problems))
print("[conda_post_create] data packages present (" + ", ".join(
    l.split("#")[0].strip() for l in open("requirements-nodeps.txt") if l.split("#")[0].strip()) + ")")
PY

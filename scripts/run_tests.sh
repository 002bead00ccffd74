#!/usr/bin/env bash
# Set everything up, then run the test suite. Extra arguments go to pytest;
# when none of them names a test path, the whole tests/ folder is run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh

has_path=0
for a in "$@"; do
    [[ "$a" != -* && -e "${a%%::*}" ]] && has_path=1
done
targets=()
((has_path)) || targets=(tests)

# Lint and format first: seconds, and a finding names file:line (the pins are in requirements.txt).
.venv/bin/ruff check --quiet . || { echo "[run_tests] ruff check failed (fix, or 'ruff check --fix .')" >&2; exit 1; }
.venv/bin/ruff format --check --quiet . || { echo "[run_tests] ruff format: run '.venv/bin/ruff format .'" >&2; exit 1; }

rc=0
.venv/bin/python -m pytest -q "${targets[@]}" "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    echo "[run_tests] pytest collected no tests: treating as failure" >&2
    exit 1
fi
exit $rc

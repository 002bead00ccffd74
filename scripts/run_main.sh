#!/usr/bin/env bash
# Set everything up, then run the main job (currently the thor_lite tour).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
exec .venv/bin/python example.py "$@"

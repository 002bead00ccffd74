#!/usr/bin/env bash
# Set everything up, then run the main job: a short 1-phase DAgger training on thor_lite and an
# evaluation (metrics table, submission.json.gz, episode GIF) into out/main_job/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
exec .venv/bin/python scripts/main_job.py "$@"

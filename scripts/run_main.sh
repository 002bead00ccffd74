#!/usr/bin/env bash
# Set everything up, then run the main job into out/main_job/: the shipped 1-phase DAgger agent vs
# random vs done-at-0 on its held-out thor_lite episodes (table with 95 % CIs, JSON, episode GIF),
# then ALFRED's online expert, a random agent and the shipped Seq2Seq+PM checkpoint on the shipped
# valid splits. `--train-from-scratch` trains with allenact instead; `--help` lists the options.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
exec .venv/bin/python scripts/main_job.py "$@"

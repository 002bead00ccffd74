#!/usr/bin/env bash
# The 1-phase rearrangement DAgger run for one GPU node (the policy on the GPU, thor_lite samplers on
# the CPU cores, rendering on the GPU's EGL device when its driver provides one):
#
#   bash scripts/train_rearrange_gpu.sh OUT [OPTIONS.json]
#
# 1. training: allenact baseline_configs/<config> (one_phase_rgb_dagger.py by default) with
#    `samplers` thor_lite samplers, one torch thread each, TensorBoard curves under OUT/train;
# 2. OUT/fps.json: the approx_fps readings of the training log and their median (the first,
#    which includes start-up, dropped);
# 3. evaluation: the last checkpoint on val (`test_episodes_per_scene` episodes per scene), the
#    metrics under OUT/test.
#
# The same command again continues a run that stopped part-way (SIGTERM, a lost node) from the
# newest checkpoint under OUT/train that loads: weights, optimizer and the pipeline's step count
# (not the samplers' episode order or the RNG streams; docs/rearrangement.md says what differs).
#
# What the run trains comes from OPTIONS.json, a JSON object read and checked by
# baseline_configs/rearrange_gpu_run.py (one line naming a bad field and value; absent keys keep
# their defaults): seed (0), config, training_steps (5e6), samplers (16), screen_size (224),
# train_split (train), episodes_per_scene (0 = all), num_steps (0 = the config's 64),
# test_processes (8), test_episodes_per_scene (2), test_scenes ([] = all of val).
#
# The environment keeps what belongs to the machine and the call: SKIP_SETUP=1 (the environment is
# already set up), PYTHON / ALLENACT (interpreters), THOR_LITE_EGL_DEVICE (EGL device, default 0
# on a GPU node), DRY_RUN=1 (every stage tiny on the CPU, the options file's values over tiny
# defaults: what CI runs, so the script cannot rot). Without a CUDA device and without DRY_RUN it
# stops at once.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash scripts/train_rearrange_gpu.sh OUT [OPTIONS.json]" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT=$(realpath -m "$1")
OPTIONS_FILE=${2:+$(realpath -m "$2")}
cd "$ROOT"
PY=${PYTHON:-$ROOT/.venv/bin/python}
ALLENACT=${ALLENACT:-$(dirname "$PY")/allenact}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
DRY_ARG=()
[ "${DRY_RUN:-0}" != 1 ] || DRY_ARG=(--dry-run)
# the options as shell variables (SEED, CONFIG, SAMPLERS, TRAIN_KW, TEST_KW), or its one line
ASSIGN=$("$PY" -m baseline_configs.rearrange_gpu_run ${OPTIONS_FILE:+"$OPTIONS_FILE"} "${DRY_ARG[@]}") || exit 2
eval "$ASSIGN"
if [ "${DRY_RUN:-0}" != 1 ]; then
  if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "train_rearrange_gpu: no CUDA device here (DRY_RUN=1 runs a tiny CPU version)" >&2
    exit 1
  fi
  export THOR_LITE_EGL_DEVICE=${THOR_LITE_EGL_DEVICE:-0}
fi
[ "${SKIP_SETUP:-0}" = 1 ] || bash scripts/setup_env.sh
# one OpenMP thread per process: the samplers fill the cores, more threads only contend
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$OUT"
# every stage runs as a child the script waits for, so Ctrl-C / SIGTERM reach the running stage
CHILD=""
stop_child() { trap - INT TERM; [ -z "$CHILD" ] || kill -TERM "$CHILD" 2>/dev/null || true; wait || true; exit "$1"; }
trap 'stop_child 130' INT
trap 'stop_child 143' TERM
fg_run() { local rc=0; "$@" & CHILD=$!; wait "$CHILD" || rc=$?; CHILD=""; return $rc; }
log() { echo "[train_rearrange_gpu $(date -u +%H:%M:%S)] $*"; }

# a run stopped part-way (SIGTERM, a lost node) continues from its newest checkpoint that loads:
# AllenAct restores the weights, the optimizer and the pipeline's step count, so the same
# command finishes the same schedule
RESUME=$("$PY" - "$OUT/train/checkpoints" <<'PYEOF'
import re, sys
from pathlib import Path
import torch
steps = lambda p: int(re.search(r"__steps_(\d+)\.pt$", p.name).group(1))
found = sorted(Path(sys.argv[1]).rglob("*__steps_*.pt"), key=steps, reverse=True)
for p in found:
    try:
        torch.load(p, map_location="cpu", weights_only=False)
    except Exception:  # cut short while it was written
        continue
    print(p)
    break
PYEOF
)
RESUME_ARG=()
if [ -n "$RESUME" ]; then
  RESUME_ARG=(-c "$RESUME")
  log "resuming from $RESUME"
fi
log "training: $CONFIG, $SAMPLERS samplers, $TRAIN_KW"
fg_run "$ALLENACT" -b . "baseline_configs/$CONFIG" -o "$OUT/train" -s "$SEED" "${RESUME_ARG[@]}" \
    --config_kwargs "$TRAIN_KW" >>"$OUT/train.log" 2>&1 \
  || { echo "train_rearrange_gpu: training failed (see $OUT/train.log)" >&2; exit 1; }
CKPT=$(find "$OUT/train/checkpoints" -name '*.pt' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -1 | cut -d' ' -f2-)
[ -n "$CKPT" ] || { echo "train_rearrange_gpu: training saved no checkpoint under $OUT/train" >&2; exit 1; }

"$PY" - "$OUT/train.log" "$OUT/fps.json" "$SAMPLERS" <<'PYEOF'
import json, re, statistics, sys
fps = [float(v) for v in re.findall(r"approx_fps ([0-9.eE+-]+)", open(sys.argv[1]).read())]
steady = fps[1:] if len(fps) > 1 else fps
json.dump({"samplers": int(sys.argv[3]), "fps_readings": fps,
           "median_fps": statistics.median(steady) if steady else None}, open(sys.argv[2], "w"), indent=2)
print(f"median approx_fps {statistics.median(steady) if steady else None} over {len(steady)} readings")
PYEOF

log "evaluation: $CKPT on val, $TEST_KW"
fg_run "$ALLENACT" -b . "baseline_configs/$CONFIG" -o "$OUT/test" -s "$SEED" --eval -c "$CKPT" \
    --config_kwargs "$TEST_KW" >"$OUT/test.log" 2>&1 \
  || { echo "train_rearrange_gpu: evaluation failed (see $OUT/test.log)" >&2; exit 1; }
log "done: $OUT/fps.json, curves in $OUT/train/tb, metrics in $OUT/test"

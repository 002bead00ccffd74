#!/usr/bin/env bash
# Generate the thor_lite ALFRED training set for the Seq2Seq baselines: train + valid_seen +
# valid_unseen demonstrations with ResNet-18 features (feat_conv.pt), seeded and resumable.
#
#   bash scripts/gen_alfred_dataset.sh OUT [ENCODER]
#
# ENCODER: imagenet (default; needs torchvision's cached weights, fails at once naming the file
# when absent), random_resnet18 (seeded, explicit), or a resnet18 state_dict path.
# Environment: TRAIN (2000), VALID (100 per valid split), WORKERS (cores), SEED (0), PLANNER
# (fast_downward). Rerunning the same command skips finished demonstrations (per-index markers
# in OUT/.progress); a killed run leaves no half-written trajectory folder. dataset_meta.json
# records the encoder and refuses a rerun with another encoder or seed.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: bash scripts/gen_alfred_dataset.sh OUT [imagenet|random_resnet18|<resnet18.pt>]" >&2
  exit 2
fi
OUT=$1
ENCODER=${2:-imagenet}
PY=${PYTHON:-python}
COMMON=(--out "$OUT" --seed "${SEED:-0}" --workers "${WORKERS:-$(nproc)}" --features "$ENCODER"
        --planner "${PLANNER:-fast_downward}")
"$PY" -m alfred_task.gen "${COMMON[@]}" --split valid_seen --num "${VALID:-100}"
"$PY" -m alfred_task.gen "${COMMON[@]}" --split valid_unseen --num "${VALID:-100}"
"$PY" -m alfred_task.gen "${COMMON[@]}" --split train --num "${TRAIN:-2000}"

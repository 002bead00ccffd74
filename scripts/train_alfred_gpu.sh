#!/usr/bin/env bash
# The longer ALFRED Seq2Seq+PM run for one GPU node (the policy on the GPU, thor_lite samplers and
# data generation on the CPU cores; written for one GPU with 16 cores and about 10 minutes):
#
#   bash scripts/train_alfred_gpu.sh OUT [OPTIONS.json]
#
# 1. data: train / valid_seen / valid_unseen demonstrations with the shipped thor_lite ResNet-18
#    features, then the subgoal augmentation (the commands of the README's ALFRED section, one
#    worker per core); reused when OUT/data already holds them;
# 2. imitation: allenact alfred_seq2seq_pm_il.py on the GPU (il_frames teacher-forced frames), and
#    beside it, on the same GPU with the same data, kwargs, seed and batch order, the ablations
#    (seq2seq = no progress monitor, no_language); each ships at the newest update all runs reached;
# 3. DAgger: allenact alfred_seq2seq_pm_dagger.py from the imitation checkpoint, `samplers` thor_lite
#    samplers, the online expert labelling every step (dagger_frames environment frames);
# 4. OUT/ship/: the imitation and DAgger checkpoints without optimizer state (float16 weights, the
#    agent_kwargs inference options in their records), with this run's command and config kwargs
#    (what pretrained_model_ckpts/ takes);
# 5. evaluation of both shipped files and the random agent on valid_seen and valid_unseen with
#    ALFRED's evaluator (experiments/alfred_seq2seq/compare.py: 95 % CIs), table in
#    OUT/compare/compare.md, copied next to them.
#
# What the run trains comes from OPTIONS.json, a JSON object read and checked by
# baseline_configs/alfred/gpu_run.py (one line naming a bad field and value; absent keys keep
# their defaults): seed (0), train (260) / valid (40) demonstration indices, aug_per_demo (3),
# il_frames (400000), dagger_frames (65536; 0 = no DAgger: only the imitation checkpoints ship),
# samplers (16), spatial_mask / subcell_mask (false), ablations (a list of seq2seq, no_language;
# [] = none), agent_kwargs (the learned agents' inference options for evaluation, written into the
# shipped checkpoints; {} = ALFRED's agent; see alfred_task/models/agent.py).
# baseline_configs/alfred/alfred_seq2seq_pm_lite_gpu_run.json holds the options of the run that made
# pretrained_model_ckpts/alfred_seq2seq_pm_gpu/ (its imitation recipe is the leaf config
# baseline_configs/alfred/alfred_seq2seq_pm_lite_gpu.py).
#
# The environment keeps what belongs to the machine and the call: WORKERS (cores), IL_SECONDS
# (imitation's wall-clock limit for a short lease: at the deadline the run is stopped and its
# newest checkpoint, saved every tenth of the run, is used; empty = none), STOP_AFTER=data (stop
# once the data is there, e.g. to give imitation what is left of a lease as IL_SECONDS on the
# rerun), SKIP_EVAL=1 (no evaluation here: evaluate the shipped file elsewhere; required with
# valid 0), SKIP_SETUP=1 (the environment is already set up), PYTHON / ALLENACT (interpreters),
# DRY_RUN=1 (a tiny version on the CPU, the options file's values over tiny defaults: what CI
# runs, so the script cannot rot). The former option variables (SEED, TRAIN, VALID, IL_FRAMES,
# DAGGER_FRAMES, SAMPLERS, SPATIAL_MASK, SUBCELL_MASK, AUG_PER_DEMO, ABLATIONS, AGENT_KWARGS) are
# refused with one line naming the option that replaced them. Without a CUDA device and without
# DRY_RUN it stops at once.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash scripts/train_alfred_gpu.sh OUT [OPTIONS.json]" >&2
  exit 2
fi
for v in SEED TRAIN VALID IL_FRAMES DAGGER_FRAMES SAMPLERS SPATIAL_MASK SUBCELL_MASK AUG_PER_DEMO ABLATIONS AGENT_KWARGS; do
  if [ -n "${!v+x}" ]; then
    echo "$v: set $(echo "$v" | tr '[:upper:]' '[:lower:]') in the options file instead (bash scripts/train_alfred_gpu.sh OUT OPTIONS.json)" >&2
    exit 2
  fi
done
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_ARG=$1
OUT=$(realpath -m "$OUT_ARG")
OPTIONS_ARG=${2:-}
OPTIONS_FILE=${2:+$(realpath -m "$2")}
cd "$ROOT"
[ "${SKIP_SETUP:-0}" = 1 ] || bash scripts/setup_env.sh
PY=${PYTHON:-$ROOT/.venv/bin/python}
ALLENACT=${ALLENACT:-$(dirname "$PY")/allenact}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
ENC=pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt
WORKERS=${WORKERS:-$(nproc)}
DRY_ARG=()
[ "${DRY_RUN:-0}" != 1 ] || DRY_ARG=(--dry-run)
# the options as shell variables (SEED, TRAIN, ..., AGENT_KWARGS: gpu_run.py's shell()), or its one line
ASSIGN=$("$PY" -m baseline_configs.alfred.gpu_run ${OPTIONS_FILE:+"$OPTIONS_FILE"} "${DRY_ARG[@]}") || exit 2
eval "$ASSIGN"

if [ "${DRY_RUN:-0}" = 1 ]; then  # seconds on a CPU: every stage, tiny sizes
  WORKERS=1
  DIMS='"model_size": "lite", "demb": 16, "dhid": 24, "dframe": 32, "pframe": 50'
  DAGGER_EXTRA='"num_steps": 16, "max_steps": 20'
  EVAL=(--limit 1 --subgoal-limit 1 --max-steps 5 --subgoal-max-steps 5 --subgoals GotoLocation)
else
  if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "train_alfred_gpu: no CUDA device here (DRY_RUN=1 runs a tiny CPU version)" >&2
    exit 1
  fi
  DIMS='"model_size": "lite"'
  DAGGER_EXTRA='"num_steps": 64'
  EVAL=(--max-steps 60 --subgoals all --subgoal-max-steps 30 --subgoal-limit 45)
fi
IL_SECONDS=${IL_SECONDS:-}
case "$IL_SECONDS" in ""|*[!0-9]*) [ -z "$IL_SECONDS" ] || { echo "IL_SECONDS: '$IL_SECONDS' is not a whole number of seconds" >&2; exit 2; };; esac
IFS=, read -r -a ABLATION_LIST <<<"$ABLATIONS"
SKIP_EVAL=${SKIP_EVAL:-0}
if [ "$VALID" = 0 ] && [ "$SKIP_EVAL" != 1 ]; then
  echo "valid: 0 leaves nothing to evaluate: set SKIP_EVAL=1 too" >&2; exit 2
fi
mkdir -p "$OUT"
# every stage runs as a child the script waits for, so Ctrl-C / SIGTERM reach the running stage at
# once (each stops its own workers) and nothing outlives the script
CHILDREN=()
stop_children() {
  trap - INT TERM
  kill -TERM "${CHILDREN[@]}" 2>/dev/null || true
  wait || true
  exit "$1"
}
trap 'stop_children 130' INT
trap 'stop_children 143' TERM
bg_run() { "$@" & CHILDREN+=($!); }
fg_run() { local rc=0; bg_run "$@"; wait $! || rc=$?; CHILDREN=(); return $rc; }
log() { echo "[train_alfred_gpu $(date -u +%H:%M:%S)] $*"; }

# ---------------------------------------------------------------- 1. data
DATA=$OUT/data/alfred_s2s_thor
AUG=$OUT/data/alfred_s2s_thor_aug
for s in "train $TRAIN" "valid_seen $VALID" "valid_unseen $VALID"; do set -- $s
  [ "$2" != 0 ] || continue
  log "data: $1 ($2 indices, $WORKERS workers)"
  fg_run env OMP_NUM_THREADS=1 "$PY" -m alfred_task.gen --out "$DATA" --seed "$SEED" --workers "$WORKERS" \
      --features "$ENC" --planner template --split "$1" --start 0 --num "$2"
done
log "data: subgoal augmentation"
n_src=$("$PY" -c 'import json, sys; print(len({e["task"] for e in json.load(open(sys.argv[1]))["train"]}))' "$DATA/splits.json")
per=$(( (n_src + WORKERS - 1) / WORKERS ))
for ((start = 0; start < n_src; start += per)); do
  bg_run env OMP_NUM_THREADS=1 "$PY" -m alfred_task.gen.augment --source "$DATA" --out "$AUG" --start "$start" \
      --num "$per" --per-demo "$AUG_PER_DEMO" --seed "$SEED" >"$OUT/data/augment_$start.log" 2>&1
done
for p in "${CHILDREN[@]}"; do wait "$p"; done
CHILDREN=()
# one vocabulary for both runs (DAgger samples the source tasks, whose words are a subset)
VOCAB=$OUT/data/pp.vocab
"$PY" -c 'import sys; from pathlib import Path
from alfred_task.data.il_dataset import build_vocab
from alfred_task.data.traj_data import load_split_file
root = Path(sys.argv[1]); build_vocab(root, load_split_file(root / "splits.json")).save(sys.argv[2])' "$AUG" "$VOCAB"

if [ "${STOP_AFTER:-}" = data ]; then log "data ready: $AUG (STOP_AFTER=data)"; exit 0; fi

# ---------------------------------------------------------------- 2. imitation, 3. DAgger
COMMON="\"vocab\": \"$VOCAB\", \"visual_encoder\": \"$ENC\", $DIMS, \"prev_action_input\": \"taken\", \"spatial_mask\": $SPATIAL_MASK, \"subcell_mask\": $SUBCELL_MASK"
IL_KW="{\"data_root\": \"$AUG\", $COMMON, \"lr\": 0.001, \"batch_size\": 32, \"training_frames\": $IL_FRAMES}"
DAGGER_KW="{\"data_root\": \"$DATA\", $COMMON, \"lr\": 0.0001, \"training_frames\": $DAGGER_FRAMES, $DAGGER_EXTRA,
            \"num_train_processes\": $SAMPLERS, \"bc_tf1_steps\": 0, \"dagger_steps\": $DAGGER_FRAMES}"
last_ckpt() {  # newest AllenAct checkpoint of a run folder, empty before there is one
  [ -d "$1/checkpoints" ] || return 0
  find "$1/checkpoints" -name '*.pt' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2-
}

# the imitation runs: Seq2Seq+PM and the ABLATIONS, side by side on the same GPU
IL_RUNS=(seq2seq_pm "${ABLATION_LIST[@]}")
il_dir() { if [ "$1" = seq2seq_pm ]; then echo "$OUT/il"; else echo "$OUT/il_$1"; fi; }
il_cfg() { if [ "$1" = seq2seq ]; then echo alfred_seq2seq_il.py; else echo alfred_seq2seq_pm_il.py; fi; }
il_kw() { if [ "$1" = no_language ]; then echo "${IL_KW%\}}, \"ablation\": \"no_language\"}"; else echo "$IL_KW"; fi; }
ckpt_steps() {  # the step counts of a run folder's checkpoints, one per line
  [ -d "$1/checkpoints" ] || return 0
  find "$1/checkpoints" -name '*.pt' | sed -n 's/.*__steps_\([0-9]*\)\.pt$/\1/p' | sort -u
}
TODO=()
for r in "${IL_RUNS[@]}"; do [ -n "$(last_ckpt "$(il_dir "$r")")" ] || TODO+=("$r"); done
if [ ${#TODO[@]} -gt 0 ]; then
  if [ -n "$IL_SECONDS" ]; then
    # a checkpoint every tenth of the run, so stopping at the deadline keeps most of the work
    IL_KW="${IL_KW%\}}, \"save_interval\": $("$PY" -c 'import sys
sys.argv = sys.argv[1:]
from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig as C
import json; print(max(1, C(**json.loads(sys.argv[0])).training_updates // 10))' "$IL_KW")}"
    log "imitation (${TODO[*]}): $IL_FRAMES frames, stopped at the latest after $IL_SECONDS s"
  else
    log "imitation (${TODO[*]}): $IL_FRAMES frames"
  fi
  for r in "${TODO[@]}"; do
    bg_run "$ALLENACT" -b . "baseline_configs/alfred/$(il_cfg "$r")" -o "$(il_dir "$r")" -s "$SEED" \
        --config_kwargs "$(il_kw "$r")"
  done
  if [ -n "$IL_SECONDS" ]; then
    for ((t = 0; t < IL_SECONDS; t++)); do
      alive=0; for p in "${CHILDREN[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
      [ "$alive" = 1 ] || break; sleep 1
    done
    for p in "${CHILDREN[@]}"; do
      if kill -0 "$p" 2>/dev/null; then log "imitation: deadline, stopping $p"; kill -TERM "$p"; fi
    done
    for p in "${CHILDREN[@]}"; do wait "$p" || true; done
  else
    for i in "${!TODO[@]}"; do
      rc=0; wait "${CHILDREN[$i]}" || rc=$?
      [ "$rc" = 0 ] || { echo "train_alfred_gpu: imitation run ${TODO[$i]} failed (exit $rc)" >&2; stop_children 1; }
    done
  fi
  CHILDREN=()
fi
# every run ships at the newest checkpoint step that all of them reached (same data, same batches)
COMMON_STEP=""
for r in "${IL_RUNS[@]}"; do
  steps=$(ckpt_steps "$(il_dir "$r")")
  [ -n "$steps" ] || { echo "train_alfred_gpu: imitation saved no checkpoint in $(il_dir "$r")" >&2; exit 1; }
  if [ -z "$COMMON_STEP" ]; then COMMON_STEP=$steps; else COMMON_STEP=$(comm -12 <(echo "$COMMON_STEP") <(echo "$steps")); fi
done
COMMON_STEP=$(echo "$COMMON_STEP" | sort -n | tail -1)
[ -n "$COMMON_STEP" ] || { echo "train_alfred_gpu: the imitation runs (${IL_RUNS[*]}) share no checkpoint step" >&2; exit 1; }
declare -A IL_CKPTS=()
for r in "${IL_RUNS[@]}"; do
  IL_CKPTS[$r]=$(find "$(il_dir "$r")/checkpoints" -name "*__steps_${COMMON_STEP}.pt" | head -1)
done
IL_CKPT=${IL_CKPTS[seq2seq_pm]}
[ ${#IL_RUNS[@]} = 1 ] || log "imitation: every run ships at step $COMMON_STEP"
DAGGER_CKPT=$(last_ckpt "$OUT/dagger")
if [ -z "$DAGGER_CKPT" ] && [ "$DAGGER_FRAMES" != 0 ]; then
  log "DAgger: $DAGGER_FRAMES frames, $SAMPLERS samplers, from $IL_CKPT"
  fg_run "$ALLENACT" -b . baseline_configs/alfred/alfred_seq2seq_pm_dagger.py -o "$OUT/dagger" -s "$SEED" \
      -c "$IL_CKPT" -r --config_kwargs "$DAGGER_KW"
  DAGGER_CKPT=$(last_ckpt "$OUT/dagger")
fi

# ---------------------------------------------------------------- 4. ship, 5. evaluation of the shipped files
# float16 weights (a lite model with a frame-reading mask head is over 20 MB in float32) and the
# inference options: the table is measured on exactly the files that ship
ABLATION_CKPTS="{}"
for a in "${ABLATION_LIST[@]}"; do
  ABLATION_CKPTS=$("$PY" -c 'import json, sys; d = json.loads(sys.argv[1]); d[sys.argv[2]] = sys.argv[3]; print(json.dumps(d))' \
      "$ABLATION_CKPTS" "$a" "${IL_CKPTS[$a]}")
done
"$PY" - "$OUT" "$IL_CKPT" "$DAGGER_CKPT" "$IL_KW" "$DAGGER_KW" "$OUT_ARG${OPTIONS_ARG:+ $OPTIONS_ARG}" "$AGENT_KWARGS" "$ABLATION_CKPTS" <<'PYEOF'
import json, sys
from pathlib import Path
from alfred_task.training.ship_checkpoint import ship

out, il, dagger, il_kw, dagger_kw = Path(sys.argv[1]), *sys.argv[2:6]
dest = out / "ship"
agent_kwargs = json.loads(sys.argv[7])
ablations = json.loads(sys.argv[8])  # the ablations' imitation checkpoints, at the same step
arms = [("imitation", il), ("dagger", dagger)] + [(f"imitation_{a}", c) for a, c in ablations.items()]
for name, ckpt in arms:
    if not ckpt:  # dagger_frames 0
        continue
    ship(Path(ckpt), dest / name, half=True, agent_kwargs=agent_kwargs)
(dest / "run.json").write_text(json.dumps({"command": "bash scripts/train_alfred_gpu.sh " + sys.argv[6],
                                           "agent_kwargs": agent_kwargs,
                                           "imitation_config_kwargs": json.loads(il_kw),
                                           "ablations": {a: f"imitation_{a}" for a in ablations},
                                           "dagger_config_kwargs": json.loads(dagger_kw) if dagger else None},
                                          indent=2))
PYEOF
if [ "$SKIP_EVAL" = 1 ]; then
  log "done (no evaluation here): $OUT/ship/"
  exit 0
fi
DAGGER_ARG=()
[ -z "$DAGGER_CKPT" ] || DAGGER_ARG=(--agent "dagger=$OUT/ship/dagger/alfred_seq2seq_pm_lite.pt")
log "evaluation: imitation (${IL_RUNS[*]}), DAgger (the shipped files) and random on valid_seen, valid_unseen"
VARIANT_ARGS=(--checkpoint "seq2seq_pm=$OUT/ship/imitation/alfred_seq2seq_pm_lite.pt")
for a in "${ABLATION_LIST[@]}"; do
  VARIANT_ARGS+=(--checkpoint "$a=$OUT/ship/imitation_$a/alfred_seq2seq_pm_lite.pt")
done
fg_run "$PY" -m experiments.alfred_seq2seq.compare --data "$DATA" --encoder "$ENC" \
    --variants "$(IFS=,; echo "${IL_RUNS[*]}")" "${VARIANT_ARGS[@]}" \
    "${DAGGER_ARG[@]}" --splits valid_seen,valid_unseen \
    "${EVAL[@]}" --workers "$WORKERS" --seed "$SEED" --agent-kwargs "$AGENT_KWARGS" --out "$OUT/compare"
cp "$OUT/compare/compare.md" "$OUT/ship/compare.md"
log "done: $OUT/compare/compare.md, $OUT/ship/"

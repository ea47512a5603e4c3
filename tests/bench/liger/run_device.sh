#!/usr/bin/env bash
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Liger-Kernel (LLaMA-Factory's enable_liger_kernel) vs the same LoRA job without it vs a bare transformers+PEFT
# loop, on a GPU machine without network (issue 52). From the repository root:
#     bash tests/bench/liger/run_device.sh
# Needs the wheels of ../shared/reference/gpu_lab.md in LIGER_WHEELS (default .cache/gpu/whl) and the
# liger-kernel wheel in LIGER_KERNEL_WHEELS (default .cache/gpu/liger); all installed --no-deps into /tmp/site.
# Writes to $OUT (default /tmp/liger-out): liger_rows.jsonl (one JSON object per run: the raw rows),
# summary.txt (the table, ratios, per-step losses; printed too), results.jsonl (the BENCH_RESULT lines),
# runs.jsonl (tag, case, settings, rc, wall), log_TAG.txt, state_TAG.json (trainer_state.json: per-step loss),
# env.txt. Env: LIGER_STEPS (12), LIGER_SKIP (3), LIGER_BUDGET_S (530: no new run after that),
# LIGER_LLAMA_SHAPE (3b), LIGER_CAP_GIB (24: the cap of the bare loop's batch-2 run; of every run in the plans set),
# SKIP_INSTALL=1, LIGER_SET (compare: the first call's runs; plans: the plan's choice against the bare loop's best).
set -u
OUT=${OUT:-/tmp/liger-out}; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
W=${LIGER_WORK:-/tmp/liger}
STEPS=${LIGER_STEPS:-12}
SKIP=${LIGER_SKIP:-3}
BUDGET=${LIGER_BUDGET_S:-530}
LSHAPE=${LIGER_LLAMA_SHAPE:-3b}
CAP=${LIGER_CAP_GIB:-24}
T0=$(date +%s)
{
  date -u; uname -r; python3 -V; command -v python3
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nproc
  if [ -z "${SKIP_INSTALL:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
        "${LIGER_WHEELS:-.cache/gpu/whl}"/*.whl "${LIGER_KERNEL_WHEELS:-.cache/gpu/liger}"/*.whl
    echo "install rc=$?"
  fi
} > "$OUT/env.txt" 2>&1
# tests/bench/site: the BENCH_TIMER / BENCH_MEM_CAP_GIB hooks (sitecustomize.py), also the bare loop's helpers
export PYTHONPATH=/tmp/site:$BENCH/site PATH=/tmp/site/bin:$PATH
export DISABLE_VERSION_CHECK=1 BENCH_TIMER=1 BENCH_SKIP=$SKIP BENCH_RESULT_FILE=$OUT/results.jsonl PYTHONUNBUFFERED=1
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python3 -c "import torch, triton, transformers, peft, accelerate, llamafactory, liger_kernel, importlib.metadata as m; print('torch', torch.__version__, 'triton', triton.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__, 'accelerate', accelerate.__version__, 'llamafactory', llamafactory.__version__, 'liger_kernel', m.version('liger_kernel'), 'gpu', torch.cuda.get_device_name(0))" >> "$OUT/env.txt" 2>&1
tail -1 "$OUT/env.txt"

phase() {  # phase NAME CMD...: a setup step, timed into env.txt
  local t; t=$(date +%s); "${@:2}" >> "$OUT/env.txt" 2>&1; echo "PHASE $1 rc=$? wall_s=$(( $(date +%s) - t )) t=$(( $(date +%s) - T0 ))s" | tee -a "$OUT/env.txt"
}

meta() {  # meta TAG CASE KIND MODEL LIGER BATCH CKPT CAP RC WALL
  printf '{"tag":"%s","case":"%s","kind":"%s","model":"%s","liger":%s,"batch":%s,"ckpt":%s,"cap_gib":%s,"rc":%s,"wall_s":%s}\n' \
    "$@" >> "$OUT/runs.jsonl"
}

over_budget() { [ $(( $(date +%s) - T0 )) -gt "$BUDGET" ]; }

job() {  # job TAG CASE MODEL LIGER(true|false) BATCH CKPT(true|false) [CAP_GIB]: llamafactory-cli train
  local tag=$1 case=$2 model=$3 liger=$4 batch=$5 ckpt=$6 cap=${7:-} t rc
  if over_budget; then echo "RUN $tag SKIPPED (budget)"; meta "$tag" "$case" job "$model" "$liger" "$batch" "$ckpt" "${cap:-null}" null null; return; fi
  local nogc=true; [ "$ckpt" = true ] && nogc=false
  t=$(date +%s)
  BENCH_TAG=$tag BENCH_MEM_CAP_GIB=$cap timeout 200 llamafactory-cli train "$BENCH/host_rss/lora_sft.yaml" model_name_or_path="$W/$model" \
      dataset_dir="$W/data" output_dir="$W/out-$tag" cutoff_len=2048 per_device_train_batch_size="$batch" \
      max_steps="$STEPS" logging_steps=1 enable_liger_kernel="$liger" disable_gradient_checkpointing="$nogc" \
      > "$OUT/log_$tag.txt" 2>&1
  rc=$?
  cp "$W/out-$tag/trainer_state.json" "$OUT/state_$tag.json" 2>/dev/null
  rm -rf "$W/out-$tag"
  meta "$tag" "$case" job "$model" "$liger" "$batch" "$ckpt" "${cap:-null}" "$rc" $(( $(date +%s) - t ))
  echo "RUN $tag rc=$rc wall_s=$(( $(date +%s) - t )) t=$(( $(date +%s) - T0 ))s"
}

bare() {  # bare TAG CASE MODEL BATCH CAP_GIB|"" [CKPT(true|false), default true]: tests/bench/bare_lora.py
  local tag=$1 case=$2 model=$3 batch=$4 cap=$5 ckpt=${6:-true} t rc
  if over_budget; then echo "RUN $tag SKIPPED (budget)"; meta "$tag" "$case" bare "$model" false "$batch" "$ckpt" "${cap:-null}" null null; return; fi
  local gc=(); [ "$ckpt" = true ] && gc=(--ckpt)
  t=$(date +%s)
  BENCH_TAG=$tag BENCH_MEM_CAP_GIB=$cap timeout 150 python3 "$BENCH/bare_lora.py" --model "$W/$model" --seq 2048 \
      --batch "$batch" "${gc[@]}" --mask --steps "$STEPS" --skip "$SKIP" --tag "$tag" > "$OUT/log_$tag.txt" 2>&1
  rc=$?
  meta "$tag" "$case" bare "$model" false "$batch" "$ckpt" "${cap:-null}" "$rc" $(( $(date +%s) - t ))
  echo "RUN $tag rc=$rc wall_s=$(( $(date +%s) - t )) t=$(( $(date +%s) - T0 ))s"
}

compare() {  # the same settings with and without the kernels, and the bare loop (the first call)
  # cases 1, 2 and 6 (losses of the same steps): ABBA
  job q7_off_b1_gc_1 1 qwen2-7b false 1 true
  job q7_on_b1_gc_1  2 qwen2-7b true  1 true
  job q7_on_b1_gc_2  2 qwen2-7b true  1 true
  job q7_off_b1_gc_2 1 qwen2-7b false 1 true
  # case 3
  job q7_on_b1_nogc 3 qwen2-7b true 1 false
  job q7_on_b2_gc   3 qwen2-7b true 2 true
  # case 4: the bare loop (no liger), batch 1 uncapped; batch 2 under a 24 GiB cap
  bare bare_q7_b1_gc 4 qwen2-7b 1 ""
  bare "bare_q7_b2_gc_cap$CAP" 4 qwen2-7b 2 "$CAP"
  llama_model
  # case 5: Llama-3 shape (vocab 128,256, untied)
  job "l${LSHAPE}_off_b1_gc" 5 "llama-$LSHAPE" false 1 true
  job "l${LSHAPE}_on_b1_gc"  5 "llama-$LSHAPE" true  1 true
}

plans() {  # the plan's choice on a 24 GB card against the bare loop's best that fits, both families, all under the cap
  # sizing.plan_job (RX 7900 XTX, 25,149,440 KiB, sdpa, s 2048, effective batch 8): Qwen2.5-7B with the kernels
  # b4 ckpt, without b1 ckpt; the Llama-3.2-3B shape with the kernels b2 no ckpt, without b1 no ckpt.
  # The bare loop at 7B: b1 ckpt is its best that fits (b2 ckpt ran out of memory under 24 GiB in the first call).
  job q7p_on_b4_gc_1 7 qwen2-7b true 4 true "$CAP"
  bare q7p_bare_b1_gc_1 7 qwen2-7b 1 "$CAP"
  bare q7p_bare_b1_gc_2 7 qwen2-7b 1 "$CAP"
  job q7p_on_b4_gc_2 7 qwen2-7b true 4 true "$CAP"
  job q7p_off_b1_gc 7 qwen2-7b false 1 true "$CAP"
  llama_model
  # the bare loop's settings at 3B, fastest first; the best that fits is the comparison
  job "l${LSHAPE}p_on_b2_nogc_1" 8 "llama-$LSHAPE" true 2 false "$CAP"
  bare "l${LSHAPE}p_bare_b1_nogc" 8 "llama-$LSHAPE" 1 "$CAP" false
  bare "l${LSHAPE}p_bare_b4_gc" 8 "llama-$LSHAPE" 4 "$CAP"
  bare "l${LSHAPE}p_bare_b2_gc" 8 "llama-$LSHAPE" 2 "$CAP"
  job "l${LSHAPE}p_on_b2_nogc_2" 8 "llama-$LSHAPE" true 2 false "$CAP"
  job "l${LSHAPE}p_off_b1_nogc" 8 "llama-$LSHAPE" false 1 false "$CAP"
}

llama_model() {
  if ! over_budget; then
    [ -d "$W/llama-$LSHAPE" ] || phase "build_llama_$LSHAPE" python3 "$HERE/make_llama.py" --shape "$LSHAPE" --device cuda --out "$W"
  fi
}

mkdir -p "$W"
phase data python3 "$BENCH/make_assets.py" --data-only --out "$W"
[ -d "$W/qwen2-7b" ] || phase build7b python3 "$BENCH/make_assets.py" --shape 7b --device cuda --out "$W"
case "${LIGER_SET:-compare}" in
  compare) compare ;;
  plans) plans ;;
  *) echo "LIGER_SET must be compare or plans" >&2; exit 2 ;;
esac
echo "TOTAL wall $(( $(date +%s) - T0 ))s" | tee -a "$OUT/env.txt"
python3 "$HERE/summarize.py" "$OUT" | tee "$OUT/summary.txt"

#!/usr/bin/env bash
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Host RSS (CPU RAM) of a LLaMA-Factory LoRA training process, on a GPU machine without network.
# From the repository root:   bash tests/bench/host_rss/run_device.sh [RUN...]
# RUN is SHAPE or SHAPE:warm (SHAPE: tiny, 0.5b, 7b); default "0.5b 7b 7b:warm". A plain run evicts the
# model's safetensors from the page cache first (fsync + POSIX_FADV_DONTNEED on those files only: a cold
# load, as after a reboot); :warm leaves them cached (as right after a download).
# Needs the wheels of ../shared/reference/gpu_lab.md (llamafactory 0.9.5, datasets 4.0.0, trl 0.24.0,
# omegaconf 2.4.0, dill 0.3.8, multiprocess 0.70.16 py312) in HOST_RSS_WHEELS (default .cache/gpu/whl).
# Writes to $OUT (default /tmp/host-rss-out): host_rss.txt (one line per run), env.txt, log_RUN.txt
# (assets and training output), rss_RUN.csv (every 0.2 s sample).
# Env: HOST_RSS_STEPS (10), HOST_RSS_BUDGET_S (480: no new run after that), DEV (cuda; cpu for a smoke test),
# SKIP_INSTALL=1 (the python3 on PATH already has llamafactory and the rest).
set -u
OUT=${OUT:-/tmp/host-rss-out}; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
WHL=${HOST_RSS_WHEELS:-.cache/gpu/whl}
W=${HOST_RSS_WORK:-/tmp/host_rss}     # models, data and trainer output on the device
STEPS=${HOST_RSS_STEPS:-10}
BUDGET=${HOST_RSS_BUDGET_S:-480}
DEV=${DEV:-cuda}
RUNS=${*:-"0.5b 7b 7b:warm"}
T0=$(date +%s)
{
  date -u; uname -r; python3 -V; command -v python3
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  free -g; nproc
  if [ -z "${SKIP_INSTALL:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHL"/*.whl
    echo "install rc=$?"
  fi
} > "$OUT/env.txt" 2>&1
export PYTHONPATH=/tmp/site:$HERE PATH=/tmp/site/bin:$PATH   # $HERE: sitecustomize.py (the SPIKE timer)
export DISABLE_VERSION_CHECK=1 SPIKE_TIMER=1 SPIKE_SKIP=3 PYTHONUNBUFFERED=1
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python3 -c "import torch, transformers, peft, accelerate, llamafactory, datasets, trl; print('torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__, 'accelerate', accelerate.__version__, 'llamafactory', llamafactory.__version__, 'datasets', datasets.__version__)" >> "$OUT/env.txt" 2>&1

mkdir -p "$W"
python3 "$HERE/../make_assets.py" --data-only --out "$W" >> "$OUT/env.txt" 2>&1
for run in $RUNS; do
  shape=${run%%:*}; cache=cold; [ "$run" != "$shape" ] && cache=${run#*:}
  tag=${shape}_${cache}
  if [ $(( $(date +%s) - T0 )) -gt "$BUDGET" ]; then echo "RUN $tag SKIPPED (budget)" | tee -a "$OUT/host_rss.txt"; continue; fi
  M=$W/qwen2-$shape
  [ -d "$M" ] || python3 "$HERE/../make_assets.py" --shape "$shape" --device "$DEV" --out "$W" >> "$OUT/log_$tag.txt" 2>&1
  if [ "$cache" = cold ]; then   # drop only this model's pages from the page cache
    python3 -c "
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
" "$M"/*.safetensors >> "$OUT/log_$tag.txt" 2>&1
  fi
  command -v fincore >/dev/null && fincore "$M"/*.safetensors >> "$OUT/log_$tag.txt" 2>&1   # resident page cache
  CMD=(llamafactory-cli train "$HERE/lora_sft.yaml" model_name_or_path="$M" dataset_dir="$W/data"
       output_dir="$W/out-$tag" cutoff_len=2048 per_device_train_batch_size=1 max_steps="$STEPS" logging_steps=1)
  echo "+ ${CMD[*]}" >> "$OUT/log_$tag.txt"
  python3 "$HERE/rss_poll.py" --shape "$shape" --tag "$cache" --steps "$STEPS" --model-dir "$M" \
      --log "$OUT/log_$tag.txt" --csv "$OUT/rss_$tag.csv" --result "$OUT/host_rss.txt" -- "${CMD[@]}"
  echo "rss_poll rc=$? t=$(( $(date +%s) - T0 ))s" >> "$OUT/log_$tag.txt"
done
echo "TOTAL wall $(( $(date +%s) - T0 ))s" >> "$OUT/env.txt"
cat "$OUT/host_rss.txt"

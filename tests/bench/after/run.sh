#!/usr/bin/env bash
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Issue 15's measurements on a GPU machine, from the repository root: LLaMA-Factory's own export (a 7B-shaped base
# + a LoRA adapter merged to safetensors, on the CPU and on the GPU) and its OpenAI-compatible API (one chat
# completion against base + adapter). Carried wheels as tests/bench/run_device.sh (.cache/gpu/whl), plus the API's
# (.cache/gpu/api: fastapi, uvicorn, sse-starlette and what they need, installed only where the machine lacks them).
# Results in $OUT: after.jsonl (one JSON line per step) and a log of each.
set -u
OUT=${OUT:-/tmp/after-out}
B=/tmp/bench
mkdir -p "$OUT" "$B"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .cache/gpu/whl/*.whl
for whl in .cache/gpu/api/*.whl; do
  module=$(basename "$whl" | cut -d- -f1)
  python3 -c "import $module" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$whl"
done
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH DISABLE_VERSION_CHECK=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
       TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
H=tests/bench/after/after_training.py
python3 tests/bench/make_assets.py --out $B --shape 7b --device cuda > "$OUT/assets.log" 2>&1
python3 $H adapter --model $B/qwen2-7b --out $B/adapter --rank 8 >> "$OUT/after.jsonl" 2> "$OUT/adapter.log"
# AFTER_STEPS: which of "export api" run (both by default)
case " ${AFTER_STEPS:-export api} " in *" export "*) exports="cpu auto" ;; *) exports="" ;; esac
for device in $exports; do
  cat > "$B/export_$device.yaml" <<YAML
model_name_or_path: $B/qwen2-7b
adapter_name_or_path: $B/adapter
template: qwen
finetuning_type: lora
export_dir: "$B/merged_$device"
export_size: 5
export_device: $device
export_legacy_format: false
YAML
  python3 $H timed --log "$OUT/export_$device.log" -- llamafactory-cli export "$B/export_$device.yaml" >> "$OUT/after.jsonl" &&
    python3 $H compare --base $B/qwen2-7b --merged "$B/merged_$device" >> "$OUT/after.jsonl" 2>> "$OUT/compare.log"
  rm -rf $B/merged_cpu  # the disk holds one merged copy at a time
done
case " ${AFTER_STEPS:-export api} " in *" api "*) ;; *) cat "$OUT/after.jsonl"; exit 0 ;; esac
cat > $B/api.yaml <<YAML
model_name_or_path: $B/qwen2-7b
adapter_name_or_path: $B/adapter
template: qwen
finetuning_type: lora
infer_backend: huggingface
YAML
start=$(date +%s)
API_HOST=127.0.0.1 API_PORT=8000 llamafactory-cli api $B/api.yaml > "$OUT/api.log" 2>&1 &
api=$!
python3 $H chat --url http://127.0.0.1:8000 --timeout 300 >> "$OUT/after.jsonl" 2>> "$OUT/chat.log"
echo "{\"command\": \"api\", \"start_to_reply_s\": $(( $(date +%s) - start )), \"alive\": $(kill -0 $api 2>/dev/null && echo true || echo false)}" >> "$OUT/after.jsonl"
kill $api 2>/dev/null; wait $api 2>/dev/null
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >> "$OUT/after.jsonl.device"
cat "$OUT/after.jsonl"

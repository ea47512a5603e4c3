#!/usr/bin/env bash
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The LoRA job benchmark on a GPU machine without network, from the repository root:
#     bash tests/bench/run_device.sh PLAN_FILE [bench.py options...]
# Installs the carried wheels (BENCH_WHEELS, default .cache/gpu/whl: LLaMA-Factory 0.9.5 and the versions
# it pins: transformers 5.6.0, peft 0.18.1, accelerate 1.11.0, datasets 4.0.0, trl 0.24.0, tokenizers 0.22.2,
# plus omegaconf, dill, multiprocess) into /tmp/site with --no-deps (torch, numpy, pyarrow... are the
# machine's), then runs tests/bench/bench.py. What comes back lands in $OUT (default /tmp/bench-out), five files:
# bench.jsonl (one row per phase, written as it ends), bench_results.jsonl (the timers' lines), bench.log,
# device.txt, and side.tar.gz (logs/, status/, yaml/ of every phase, packed at the end).
# BENCH_BUDGET_S: seconds after which no new phase starts (default 520, counted from this script's start).
# BENCH_SCRIPT: the bench to run (default tests/bench/bench.py; tests/bench/after/stages.py adds the stages phase).
set -u
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
T0=$(date +%s)
PLAN=$1; shift
WHL=${BENCH_WHEELS:-.cache/gpu/whl}
{
  date -u; uname -a; python3 -V; command -v python3
  command -v nvidia-smi >/dev/null && nvidia-smi
  command -v rocminfo >/dev/null && rocminfo | grep -E "Marketing Name|^  Name:|Size:" | head -20
  if [ -z "${SKIP_INSTALL:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$WHL"/*.whl
    echo "install rc=$?"
  fi
} > "$OUT/device.txt" 2>&1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PATH=/tmp/site/bin:$PATH
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
BUDGET=${BENCH_BUDGET_S:-520}
SIDE=${BENCH_SIDE:-/tmp/bench-side}
mkdir -p "$SIDE"
python3 "${BENCH_SCRIPT:-tests/bench/bench.py}" --out "$OUT" --side-dir "$SIDE" --plan "$PLAN" --budget-s $(( BUDGET - ($(date +%s) - T0) )) "$@" > "$OUT/bench.log" 2>&1
echo "bench rc=$? total wall $(( $(date +%s) - T0 ))s" >> "$OUT/bench.log"
tar -czf "$OUT/side.tar.gz" -C "$SIDE" . 2>> "$OUT/bench.log"
tail -c 6000 "$OUT/bench.log" | cut -c1-300

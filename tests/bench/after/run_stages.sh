#!/usr/bin/env bash
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Issue 50 on a GPU machine without network, from the repository root: a job through every stage (tests/bench/after/stages.py)
#     bash tests/bench/after/run_stages.sh tests/bench/plans/stages_16g_24g.txt --device-name "NVIDIA H100" --steps-7b 3 --eff-batch 2
# Carry .cache/gpu/stages (LLaMA-Factory 0.9.5 and its pure-Python extras as in run_device.sh, bitsandbytes 0.50.2, and the
# stack LLaMA-Factory 0.9.5 pins: transformers 5.6.0, peft 0.18.1, accelerate 1.11.0, tokenizers 0.22.2 - the machine's
# transformers 5.17 dropped warmup_ratio, which the runner renders; the bitsandbytes wheel without its CUDA 11.8-12.8
# libraries, to fit the 64 MiB a call carries - tests/bench/after/repack_bitsandbytes.py makes it; the H100 loads
# libbitsandbytes_cuda130) and .cache/gpu/api (fastapi, uvicorn, sse-starlette
# and their dependencies: each installed only where the machine lacks it).
set -u
rm -rf /tmp/site /tmp/site-api  # a warm machine keeps the last call's targets, and pip --target keeps an existing bin/
for whl in .cache/gpu/api/*.whl; do
  module=$(basename "$whl" | cut -d- -f1)
  python3 -c "import $module" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-api "$whl"
done
# their own target: a second pip --target into /tmp/site would keep the first one's bin/ and drop llamafactory-cli
export PYTHONPATH=/tmp/site-api${PYTHONPATH:+:$PYTHONPATH}
export DISABLE_VERSION_CHECK=1 BENCH_WHEELS=.cache/gpu/stages BENCH_SCRIPT=tests/bench/after/stages.py BENCH_BUDGET_S=${BENCH_BUDGET_S:-560}
exec bash tests/bench/run_device.sh "$@"

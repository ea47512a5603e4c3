#!/usr/bin/env bash
# Mutation run: how many of a scenario's checks fail when converge is replaced by a no-op. For each scenario:
# destroy, create, prepare, then verify with every check run (PYTEST_ADDOPTS=-rA: no stop at the first failure,
# and a short summary naming each check's outcome), then destroy. The scenario passes the mutation check when
# verify FAILS (at least one check fails); the run exits non-zero when a scenario's verify passed entirely or a
# step before verify failed. tests/tools/mutation_table.py reads pytest's summary in the log and records, per
# scenario, the checks run, those failing and those still passing without converge (named), and the deselected
# ones, as a row of build/results/mutation.md (MUTATION_RESULTS): rows of scenarios not run this time stay, each
# with its own date; `make results-to-docs` copies the page into docs/. Run it through
# `make mutation SCENARIOS="a b"` (the Makefile's environment: PATH, ANSIBLE_COLLECTIONS_PATH, RADEONLAB_ROOT),
# one scenario at a time. Logs: build/mutation/<scenario>.log. MUTATION_COMMAND is the command the page names
# (default: make mutation SCENARIOS="<these scenarios>").
#
#   tests/tools/mutation_run.sh scenario...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logdir=${MUTATION_LOG_DIR:-build/mutation}
results=${MUTATION_RESULTS:-build/results/mutation.md}
command=${MUTATION_COMMAND:-make mutation SCENARIOS=\"$*\"}
mkdir -p "$logdir"

survived=0
for scenario in "$@"; do
  log=$logdir/$scenario.log
  : >"$log"
  record=(python3 "$here/mutation_table.py" --doc "$results" --scenario "$scenario" --command "$command" --log "$log")
  failed_step=
  for step in destroy create prepare; do
    if ! molecule "$step" -s "$scenario" >>"$log" 2>&1; then
      failed_step=$step
      break
    fi
  done
  if [ -n "$failed_step" ]; then
    "${record[@]}" --date "$(date -u '+%Y-%m-%d %H:%M UTC')" --step-failed "$failed_step" || survived=1
  else
    PYTEST_ADDOPTS=-rA molecule verify -s "$scenario" >>"$log" 2>&1
    rc=$?
    "${record[@]}" --date "$(date -u '+%Y-%m-%d %H:%M UTC')" --verify-rc "$rc" || survived=1
  fi
  molecule destroy -s "$scenario" >>"$log" 2>&1 || echo "mutation $scenario: destroy failed (see $log)"
done
exit $survived

#!/usr/bin/env bash
# Mutation run: prove a scenario's verify fails when converge is replaced by a no-op. For each scenario:
# destroy, create, prepare, then verify with PYTEST_ADDOPTS=-x (stop at the first failing check), then
# destroy. The scenario passes the mutation check when verify FAILS. MUTATION_ALL=1 runs every check
# instead of stopping at the first, and lists those that still pass without converge. Run it through
# `make mutation SCENARIOS="a b"` (the Makefile's environment: PATH, ANSIBLE_COLLECTIONS_PATH,
# RADEONLAB_ROOT), one scenario at a time. Logs: build/mutation/<scenario>.log.
#
#   tests/tools/mutation_run.sh scenario...
set -uo pipefail
logdir=${MUTATION_LOG_DIR:-build/mutation}
addopts=-x
[ "${MUTATION_ALL:-0}" = 1 ] && addopts=-rA
mkdir -p "$logdir"

survived=0
for scenario in "$@"; do
  log=$logdir/$scenario.log
  : >"$log"
  ok=1
  for step in destroy create prepare; do
    if ! molecule "$step" -s "$scenario" >>"$log" 2>&1; then
      ok=0
      echo "mutation $scenario: $step FAILED, no verdict (see $log)"
      break
    fi
  done
  if [ "$ok" = 1 ]; then
    PYTEST_ADDOPTS=$addopts molecule verify -s "$scenario" >>"$log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
      first=$(grep -m1 -oE "^(FAILED|ERROR) [^ ]+::[^ ]+" "$log" | cut -d" " -f2)
      echo "mutation $scenario: verify failed as it must (first failing check: ${first:-none named, see $log})"
    else
      survived=1
      echo "mutation $scenario: VERIFY PASSED WITHOUT CONVERGE"
    fi
    if [ "$addopts" = -rA ]; then
      grep -oE "^PASSED [^ ]+" "$log" | sed "s/^PASSED /mutation $scenario: passes without converge: /"
    fi
  else
    survived=1
  fi
  molecule destroy -s "$scenario" >>"$log" 2>&1 || echo "mutation $scenario: destroy failed (see $log)"
done
exit $survived

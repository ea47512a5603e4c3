#!/usr/bin/env bash
# Run `molecule test` for several scenarios, MOLECULE_JOBS at a time (default 2): the scenarios use
# distinct container names, no collection copy (prerun: false) and per-scenario tags on the shared lab
# servers, so they can run side by side. Much of a scenario's time is apt/pip I/O and waiting, so two
# lanes roughly halve the wall time on a 2-core machine. Logs: build/molecule/<scenario>.log.
#
#   tests/tools/molecule_all.sh scenario...      (slowest first gives the best packing)
set -uo pipefail
jobs=${MOLECULE_JOBS:-2}
logdir=${MOLECULE_LOG_DIR:-build/molecule}
mkdir -p "$logdir"
rm -f "$logdir"/*.result "$logdir"/*.times

# shellcheck disable=SC2317  # run_one is called by xargs through `bash -c`, not directly
run_one() {
  local scenario=$1 log=$logdir/$1.log start rc
  start=$(date +%s)
  # each line stamped with the wall clock, so a slow scenario's log shows where its time went
  molecule test -s "$scenario" 2>&1 | perl -MPOSIX -pe 'BEGIN { $| = 1 } $_ = strftime("%H:%M:%S ", localtime) . $_' >"$log"
  # molecule's status, not the stamping perl's: xargs runs this in a new bash, where the script's pipefail is not set
  rc=${PIPESTATUS[0]}
  # testinfra's pytest summary line ("== 63 passed, 1 skipped in 30.1s =="): molecule counts a skip as a pass, this does not
  skipped=$(grep -E '^([0-9:]+ )?=+ .*[0-9]+ (passed|failed|skipped).* in [0-9.]+s' "$log" | grep -Eo '[0-9]+ skipped' | awk '{n += $1} END {print n + 0}')
  # checks deselected for `make test-full` (tests/tools/pytest_full_only.py prints "left to make test-full: N check(s)")
  left=$(grep -Eo 'left to make test-full: [0-9]+' "$log" | awk '{n += $NF} END {print n + 0}')
  if [ "$skipped" -gt 0 ]; then
    echo "molecule_all.sh: $skipped testinfra check(s) skipped; a check must not skip" >>"$log"
    rc=1
  fi
  # the CPU of every process this scenario started and waited for: molecule, ansible-playbook and its workers, the docker
  # CLI, testinfra (not the docker engine's, nor the hosts' modules: those the machine's totals below count)
  # (`times` in this shell, not in a pipe's subshell, which has no children of its own)
  times >"$logdir/$scenario.times"
  cpu=$(sed -n 2p "$logdir/$scenario.times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } } END { printf "%d", s }')
  printf '%s %d %d %d %d %d\n' "$scenario" "$rc" "$(( $(date +%s) - start ))" "$skipped" "$cpu" "$left" >"$logdir/$scenario.result"
  printf 'molecule %-28s %s in %ds\n' "$scenario" "$([ "$rc" -eq 0 ] && echo passed || echo FAILED)" "$(( $(date +%s) - start ))"
}
export -f run_one
export logdir
# testinfra's ten slowest checks at the end of each scenario's log (a check that plays the site again shows its cost)
export PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-} --durations=10 -p pytest_full_only"
# the plugin that leaves @pytest.mark.full_only checks to `make test-full` (RADEONLAB_TEST_FULL=1)
PYTHONPATH="$(cd "$(dirname "$0")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH

start=$(date +%s)
machine_cpu=$(dirname "$0")/machine_cpu.py
python3 "$machine_cpu" snapshot "$logdir/cpu.snapshot"
printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
failed=0
for scenario in "$@"; do
  result=$logdir/$scenario.result
  if [ ! -f "$result" ] || [ "$(cut -d' ' -f2 "$result")" != 0 ]; then
    failed=1
    echo "=== $scenario failed; last lines of $logdir/$scenario.log:"
    tail -n 80 "$logdir/$scenario.log"
  fi
done
echo "molecule: each scenario's wall time and controller CPU (molecule, ansible, docker CLI, testinfra), slowest first:"
for scenario in "$@"; do
  result=$logdir/$scenario.result
  if [ -f "$result" ]; then
    read -r _ rc seconds skipped cpu left <"$result"
    printf '  %6ds  %6d CPU-s  %-28s %s, %d skipped, %d left to make test-full\n' "$seconds" "$cpu" "$scenario" \
      "$([ "$rc" -eq 0 ] && echo passed || echo FAILED)" "$skipped" "$left"
  else
    printf '  %6s  %6s CPU-s  %-28s %s\n' "-" "-" "$scenario" "did not finish"
  fi
done | sort -rn
echo "molecule: ${#@} scenario(s) in $(( $(date +%s) - start ))s, $jobs at a time"
python3 "$machine_cpu" since "$logdir/cpu.snapshot" "molecule: the machine"
exit $failed

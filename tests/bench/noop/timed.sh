# shellcheck shell=bash
# Sourced by the no-op benches: `timed LOG COMMAND...` runs COMMAND with its output in LOG and prints its wall
# seconds; a failing command shows the end of LOG and ends the bench.
timed() {
    local log=$1 t0 t1
    shift
    t0=$(date +%s.%N)
    "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
    t1=$(date +%s.%N)
    python3 -c "print(round($t1 - $t0, 1))"
}

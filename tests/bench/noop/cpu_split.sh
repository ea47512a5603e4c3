#!/usr/bin/env bash
# Where the CPU of one play goes (issue 16 item 4): the controller (ansible-playbook, its workers and the docker CLI
# they start), the docker engine (dockerd, containerd, the shims: where every `docker exec` is set up) and the lab
# hosts (each container's cgroup: the modules themselves). Each share is measured in the same run, as CPU seconds
# and as a fraction of the total. Test infrastructure only.
#
#   tests/bench/noop/cpu_split.sh LABEL ansible-playbook -i inventory/lab playbooks/site.yml [args...]
#
# Prints one Markdown row: | LABEL | wall s | controller CPU s | engine CPU s | hosts CPU s | controller % | engine % | hosts % |
set -euo pipefail
label=$1
shift
tick=$(getconf CLK_TCK)

engine_ticks() {  # utime + stime of dockerd, containerd and every shim
    local total=0 pid fields
    for pid in $(pgrep -x dockerd) $(pgrep -x containerd) $(pgrep -f containerd-shim-runc-v2); do
        read -ra fields <"/proc/$pid/stat" || continue
        total=$((total + fields[13] + fields[14]))
    done
    echo "$total"
}

hosts_ns() {  # cpuacct of every running container (cgroup v1, docker's cgroupfs layout), in ns
    local total=0 id file
    for id in $(docker ps -q --no-trunc); do
        for file in /sys/fs/cgroup/cpuacct/docker/"$id"/cpuacct.usage /sys/fs/cgroup/system.slice/docker-"$id".scope/cpu.stat; do
            [ -r "$file" ] || continue
            case $file in
                *cpu.stat) total=$((total + $(awk '/^usage_usec/ {print $2 * 1000}' "$file"))) ;;
                *) total=$((total + $(cat "$file"))) ;;
            esac
        done
    done
    echo "$total"
}

e0=$(engine_ticks)
h0=$(hosts_ns)
t0=$(date +%s.%N)
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
# bash's `times` after the command: the CPU of every child it waited for (ansible-playbook and its whole tree)
( "$@" >"${CPU_SPLIT_LOG:-/dev/null}" 2>&1; rc=$?; times >"$times_file"; exit $rc ) || { echo "$label: the play failed (rc $?)" >&2; exit 1; }
t1=$(date +%s.%N)
e1=$(engine_ticks)
h1=$(hosts_ns)
python3 - "$label" "$t0" "$t1" "$e0" "$e1" "$h0" "$h1" "$tick" "$times_file" <<'PY'
import re
import sys

label, t0, t1, e0, e1, h0, h1, tick, times_file = sys.argv[1:]
# `times` prints the shell's own user/sys, then its children's: "0m1.234s 0m0.567s"
lines = open(times_file, encoding="utf-8").read().split("\n")
def seconds(text):
    return sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", text))
controller = seconds(lines[1])
engine = (int(e1) - int(e0)) / int(tick)
hosts = (int(h1) - int(h0)) / 1e9
total = controller + engine + hosts
wall = float(t1) - float(t0)
print("| %s | %.1f | %.1f | %.1f | %.1f | %.0f %% | %.0f %% | %.0f %% |" % (
    label, wall, controller, engine, hosts, 100 * controller / total, 100 * engine / total, 100 * hosts / total))
PY

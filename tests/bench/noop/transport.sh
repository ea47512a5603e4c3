#!/usr/bin/env bash
# Per-task cost of the connection (issue 16 items 1 and 2): a play of 40 trivial tasks (20 `command: /bin/true`,
# 20 `stat`) on one lab container, unpipelined, pipelined ([connection] pipelining, as ansible.cfg and the molecule
# base set it), pipelined through community.docker.docker_api (the Docker API on its socket, no `docker` CLI process
# per module) and with mitogen's strategy, in one run. Prints seconds per task and the ratios to the unpipelined run.
# Test infrastructure only.
#
#   MITOGEN_DIR=/path/to/unpacked/mitogen-0.3.x tests/bench/noop/transport.sh    (needs `make bed`;
#   without MITOGEN_DIR the mitogen row is left out and says so)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
IMAGE=${RADEONLAB_BED_IMAGE:-radeonlab/debian12-systemd:latest}
WORK=$(mktemp -d)
NAME=bench-transport
trap 'docker rm -f $NAME >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
printf "[defaults]\ninterpreter_python = auto_silent\n" >"$WORK/ansible.cfg"
export ANSIBLE_NOCOLOR=1 ANSIBLE_CONFIG=$WORK/ansible.cfg
PATH=$ROOT/.venv/bin:$PATH
TASKS=40
docker run -d --name $NAME --network host "$IMAGE" sleep 3600 >/dev/null
cat >"$WORK/play.yml" <<'YML'
- name: Trivial tasks
  hosts: all
  gather_facts: false
  tasks:
    - name: Run true
      ansible.builtin.command: /bin/true
      changed_when: false
      loop: "{{ range(20) | list }}"
    - name: Stat a file
      ansible.builtin.stat:
        path: /etc/passwd
      loop: "{{ range(20) | list }}"
YML
timed() { # label inventory-connection env... -> prints a row
    local label=$1 connection=$2 t0 t1
    shift 2
    echo "$NAME ansible_connection=$connection" >"$WORK/inventory"
    env "$@" ansible-playbook -i "$WORK/inventory" "$WORK/play.yml" >"$WORK/$label.log" 2>&1 || { tail -n 30 "$WORK/$label.log" >&2; exit 1; }
    t0=$(date +%s.%N)
    env "$@" ansible-playbook -i "$WORK/inventory" "$WORK/play.yml" >"$WORK/$label.log" 2>&1 || { tail -n 30 "$WORK/$label.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    python3 -c "print('$label', round($t1 - $t0, 2))"
}
{
    timed unpipelined community.docker.docker ANSIBLE_PIPELINING=False
    timed pipelined community.docker.docker ANSIBLE_PIPELINING=True
    # the Docker API over its socket instead of a `docker exec` process per module
    timed docker_api-pipelined community.docker.docker_api ANSIBLE_PIPELINING=True
    if [ -n "${MITOGEN_DIR:-}" ]; then
        timed mitogen docker ANSIBLE_PIPELINING=True ANSIBLE_STRATEGY_PLUGINS="$MITOGEN_DIR/ansible_mitogen/plugins/strategy" \
            ANSIBLE_STRATEGY=mitogen_linear
    fi
} >"$WORK/rows"
python3 - "$WORK/rows" "$TASKS" "${MITOGEN_DIR:-}" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1])]
base = float(rows[0][1])
print("| transport | s for %s tasks | s per task | vs unpipelined |\n|---|---|---|---|" % sys.argv[2])
for label, seconds in rows:
    seconds = float(seconds)
    print("| %s | %.1f | %.2f | %.2f |" % (label, seconds, seconds / int(sys.argv[2]), seconds / base))
if not sys.argv[3]:
    print("(mitogen not measured: MITOGEN_DIR not set)")
PY

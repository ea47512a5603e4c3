#!/usr/bin/env bash
# No-op re-converge cost (issue 16 item 1): `playbooks/site.yml` on the converged `make lab` fleet against a
# trivial play of as many `command: /bin/true` tasks on the same hosts, in one run, pipelined (the repository's
# ansible.cfg) and then not. Prints the task count, both times and their ratio per mode, and the slowest site
# tasks of the pipelined run. Test infrastructure only.
#
#   make lab && tests/bench/noop/run.sh       (the fleet must be converged: the site run must report changed=0)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.cache/collection_path ANSIBLE_NOCOLOR=1 RADEONLAB_ROOT=$ROOT
export ANSIBLE_CONFIG=$ROOT/ansible.cfg
PATH=$ROOT/.venv/bin:$PATH

# shellcheck source=tests/bench/noop/timed.sh
. "$HERE/timed.sh"

printf '| mode | site tasks | site no-op s | trivial s | site / trivial |\n|---|---|---|---|---|\n'
for pipelining in True False; do
    site_log=$WORK/site-$pipelining.log
    site_s=$(ANSIBLE_PIPELINING=$pipelining ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks PROFILE_TASKS_TASK_OUTPUT_LIMIT=15 \
        timed "$site_log" ansible-playbook -i inventory/lab playbooks/site.yml)
    grep -E '^lab-\S+ +: ' "$site_log" | grep -qv ' changed=0 ' && { echo "the fleet was not converged:" >&2; grep -E '^lab-' "$site_log" >&2; exit 1; }
    tasks=$(grep -c '^TASK \[' "$site_log")
    python3 - "$tasks" >"$WORK/trivial.yml" <<'PY'
import sys
print("- name: Trivial play\n  hosts: radeon_workstations\n  gather_facts: false\n  tasks:")
for i in range(int(sys.argv[1])):
    print("    - name: True %d\n      ansible.builtin.command: /bin/true\n      changed_when: false" % i)
PY
    trivial_s=$(ANSIBLE_PIPELINING=$pipelining timed "$WORK/trivial-$pipelining.log" ansible-playbook -i inventory/lab "$WORK/trivial.yml")
    printf '| pipelining %s | %d | %s | %s | %s |\n' "$pipelining" "$tasks" "$site_s" "$trivial_s" \
        "$(python3 -c "print(round($site_s / $trivial_s, 2))")"
    [ "$pipelining" = True ] && cp "$site_log" "$WORK/keep.log"
done
echo
echo "slowest site tasks, pipelined:"
sed -n '/^TASKS RECAP/,$p' "$WORK/keep.log" | grep -E -- '-{3,} [0-9.]+s$' | head -15

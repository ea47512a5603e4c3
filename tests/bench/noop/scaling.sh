#!/usr/bin/env bash
# Fleet scaling of a no-op re-converge (issue 16 item 2): the site's stages before torch (validate.yml, then
# rocm_repo, rocm_driver, gpu_groups: `--tags rocm_repo,rocm_driver,gpu_groups`) on 1, 2, 4 and 8 lab
# containers at forks 8, pipelined (the repository's ansible.cfg), after one converge of all 8. Prints each
# run's wall time, the ratio to one host and the marginal seconds per added host. Test infrastructure only.
#
#   make bed mirror && tests/bench/noop/scaling.sh        (containers bench-scale-1..8; removed at the end)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
WORK=$(mktemp -d)
HOSTS=${SCALING_HOSTS:-8}
TAGS=rocm_repo,rocm_driver,gpu_groups
cd "$ROOT"
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.cache/collection_path ANSIBLE_NOCOLOR=1 RADEONLAB_ROOT=$ROOT
export ANSIBLE_CONFIG=$ROOT/ansible.cfg ANSIBLE_FORKS=8
PATH=$ROOT/.venv/bin:$PATH

# shellcheck source=tests/bench/lab_inventory.sh
. "$HERE/../lab_inventory.sh"
lab_inventory "$WORK/inventory" bench-scale "$HOSTS" 7900
down() { ansible-playbook -i "$WORK/inventory" tests/lab/lab.yml -e lab_state=absent >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap down EXIT

# shellcheck source=tests/bench/noop/timed.sh
. "$HERE/timed.sh"

site() { ansible-playbook -i "$WORK/inventory" playbooks/site.yml --tags "$TAGS" "$@"; }
ansible-playbook -i "$WORK/inventory" tests/lab/lab.yml >"$WORK/up.log" 2>&1 || { tail -n 40 "$WORK/up.log" >&2; exit 1; }
converge_s=$(timed "$WORK/converge.log" site)
echo "first converge of $HOSTS hosts: ${converge_s}s"
printf '| hosts | no-op s | vs 1 host | s per added host | changed |\n|---|---|---|---|---|\n'
t1="" prev_n="" prev_s=""
for n in 1 2 4 8; do
    [ "$n" -le "$HOSTS" ] || break
    limit=$(seq -f 'bench-scale-%g' 1 "$n" | paste -sd, -)
    s=$(timed "$WORK/noop-$n.log" site --limit "$limit")
    changed=$(grep -E '^bench-scale-[0-9]+ +: ' "$WORK/noop-$n.log" | grep -vc ' changed=0 ' || true)
    [ -n "$t1" ] || t1=$s
    marginal=$([ -n "$prev_n" ] && python3 -c "print(round(($s - $prev_s) / ($n - $prev_n), 1))" || echo -)
    printf '| %d | %s | %s | %s | %s host(s) changed |\n' "$n" "$s" "$(python3 -c "print(round($s / $t1, 2))")" "$marginal" "$changed"
    prev_n=$n prev_s=$s
done

#!/usr/bin/env bash
# Download once (issue 16 item 3): the bytes the upstream stand-ins serve when the site's stages up to
# LLaMA-Factory (`--tags rocm_repo,rocm_driver,gpu_groups,pytorch_rocm,llamafactory`) set up 1 fresh lab
# host, and then 4 fresh lab hosts, each run from an empty controller: an empty fleet wheelhouse and an empty pip
# cache (XDG_CACHE_HOME of the run's own), so every wheel comes from PyPI again. Upstream = the apt mirror (the stand-in of
# repo.radeon.com; its access log) + what the controller downloaded from PyPI (the wheelhouse's files). The
# wheelhouse server's own log gives the LAN bytes (controller to hosts). The lab model copy (lora_job) is not part
# of the run. Test infrastructure only.
#
#   make bed mirror && tests/bench/download/run.sh [COUNTS...]      (default: 1 4; containers bench-dl-*)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
WORK=$(mktemp -d)
PORT=8790
TAGS=rocm_repo,rocm_driver,gpu_groups,pytorch_rocm,llamafactory
MIRROR_LOG=$ROOT/.cache/lab/mirror-access.log
cd "$ROOT"
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.cache/collection_path ANSIBLE_NOCOLOR=1 RADEONLAB_ROOT=$ROOT
export ANSIBLE_CONFIG=$ROOT/ansible.cfg ANSIBLE_FORKS=8 ANSIBLE_INJECT_FACT_VARS=false
PATH=$ROOT/.venv/bin:$PATH
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1 4)

# shellcheck source=tests/bench/lab_inventory.sh
. "$HERE/../lab_inventory.sh"
inventory() { lab_inventory "$WORK/inv-$1" bench-dl "$1" 7920; }
down() {
    for n in "${counts[@]}"; do
        [ -d "$WORK/inv-$n" ] && ansible-playbook -i "$WORK/inv-$n" tests/lab/lab.yml -e lab_state=absent >/dev/null 2>&1
    done
    rm -rf "$WORK"
}
trap down EXIT

log_bytes() { # file from-line -> sum of the last field of the lines after from-line
    tail -n +"$(($2 + 1))" "$1" 2>/dev/null | awk '{s += $NF} END {printf "%.0f\n", s}'
}
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

printf '| hosts | apt mirror KiB | PyPI to the controller MiB | upstream MiB | controller to hosts (LAN) MiB | seconds |\n'
printf '|---|---|---|---|---|---|\n'
for n in "${counts[@]}"; do
    inventory "$n"
    ansible-playbook -i "$WORK/inv-$n" tests/lab/lab.yml >"$WORK/up-$n.log" 2>&1 || { tail -n 40 "$WORK/up-$n.log" >&2; exit 1; }
    wheelhouse=$WORK/wheelhouse-$n
    mkdir -p "$wheelhouse" "$WORK/cache-$n"
    mirror_from=$(lines "$MIRROR_LOG")
    t0=$(date +%s)
    XDG_CACHE_HOME=$WORK/cache-$n ansible-playbook -i "$WORK/inv-$n" playbooks/site.yml --tags "$TAGS" \
        -e pytorch_rocm_wheelhouse_dir="$wheelhouse" -e pytorch_rocm_wheelhouse_port=$PORT >"$WORK/site-$n.log" 2>&1 \
        || { tail -n 40 "$WORK/site-$n.log" >&2; exit 1; }
    seconds=$(($(date +%s) - t0))
    apt=$(log_bytes "$MIRROR_LOG" "$mirror_from")
    pypi=$(find "$wheelhouse" -maxdepth 1 -type f -name '*.whl' -printf '%s\n' | awk '{s += $1} END {printf "%.0f\n", s}')
    lan=$(log_bytes "$wheelhouse/.radeonlab/access-$PORT.log" 0)
    python3 -c "m = 1048576; print('| %d | %.1f | %.1f | %.1f | %.1f | %d |' % ($n, $apt / 1024, $pypi / m, ($apt + $pypi) / m, $lan / m, $seconds))"
    echo "$n $apt $pypi $lan" >>"$WORK/rows"
    ansible-playbook -i "$WORK/inv-$n" tests/lab/lab.yml -e lab_state=absent >/dev/null 2>&1
done
python3 - "$WORK/rows" <<'PY'
import sys
rows = {int(r[0]): [int(x) for x in r[1:]] for r in (line.split() for line in open(sys.argv[1]))}
if len(rows) > 1:
    (n1, a1), (nk, ak) = sorted(rows.items())[0], sorted(rows.items())[-1]
    print("\nupstream bytes, %d hosts / %d host(s): %.3f (apt %.2f, PyPI %.3f); controller-to-host bytes: %.2f"
          % (nk, n1, (ak[0] + ak[1]) / (a1[0] + a1[1]), ak[0] / max(a1[0], 1), ak[1] / max(a1[1], 1), ak[2] / max(a1[2], 1)))
    print("apt bytes: %d for %d host(s), %d for %d hosts" % (a1[0], n1, ak[0], nk))
PY

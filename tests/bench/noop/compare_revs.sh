#!/usr/bin/env bash
# The same play on the converged `make lab` fleet from two revisions of this repository, in one run and in the order
# base, head, head, base (a drift of the machine cancels out): each run's wall time and CPU (cpu_split.sh), then the
# ratio head / base of the means. The base is checked out into build/bench-base and given its own collection path.
# Test infrastructure only. Every run must end with changed=0 on every host (it is a no-op).
#
#   tests/bench/noop/compare_revs.sh BASE [ansible-playbook arguments after the playbook...]
#   tests/bench/noop/compare_revs.sh 11e406f --tags lora_job
set -euo pipefail
base_rev=$1
shift
root=$(git rev-parse --show-toplevel)
base=$root/build/bench-base
rm -rf "$base" && mkdir -p "$base" && git -C "$root" archive "$base_rev" | tar -x -C "$base"
mkdir -p "$base/.cache/collection_path/ansible_collections/radeonlab"
ln -sfn "$base" "$base/.cache/collection_path/ansible_collections/radeonlab/llm"

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
play() {  # tree, label, ansible-playbook arguments
    local tree=$1 label=$2 log
    shift 2
    log=$(mktemp)
    (cd "$tree" && ANSIBLE_COLLECTIONS_PATH=$tree/.cache/collection_path RADEONLAB_ROOT=$root CPU_SPLIT_LOG=$log \
        "$root/tests/bench/noop/cpu_split.sh" "$label" ansible-playbook -i "$root/inventory/lab" "$tree/playbooks/site.yml" "$@") \
        | tee -a "$rows"
    if grep -E '^\S+ +: ok=' "$log" | grep -vq ' changed=0 '; then echo "$label: not a no-op" >&2; exit 1; fi
    rm -f "$log"
}
args=("$@")
for which in base head head base; do
    if [ "$which" = base ]; then play "$base" "base $base_rev" "${args[@]}"; else play "$root" "head" "${args[@]}"; fi
done
python3 - "$rows" <<'PY'
import sys
runs = {}
for line in open(sys.argv[1], encoding="utf-8"):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    runs.setdefault(cells[0].split()[0], []).append((float(cells[1]), float(cells[2]) + float(cells[3]) + float(cells[4])))
mean = {k: (sum(w for w, _ in v) / len(v), sum(c for _, c in v) / len(v)) for k, v in runs.items()}
print("| | wall s (mean of 2) | CPU s (mean of 2) |\n|---|---|---|")
for k in ("base", "head"):
    print("| %s | %.1f | %.1f |" % (k, mean[k][0], mean[k][1]))
print("| head / base | **%.2f** | **%.2f** |" % (mean["head"][0] / mean["base"][0], mean["head"][1] / mean["base"][1]))
PY

#!/usr/bin/env bash
# Wheel delivery, serve vs push, on 1..N lab hosts: the wall time to get the torch wheel set (as the
# lab's wheelhouse holds it) onto every host, each way, in one run; then the re-run (push checksums every
# file again; a served re-run fetches nothing because pip finds the venv satisfied, so it is not timed).
# Prints one row per host count with the times and the push/serve ratio. Test infrastructure only.
#
#   tests/bench/delivery/run.sh [HOSTS...]     (default: 2 4; needs `make bed` and a filled .cache/wheelhouse)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
IMAGE=${RADEONLAB_BED_IMAGE:-radeonlab/debian12-systemd:latest}
WHEELHOUSE=$ROOT/.cache/wheelhouse
WORK=$(mktemp -d)
# shellcheck disable=SC2046  # one word per container id
trap 'docker rm -f $(docker ps -aq --filter label=radeonlab.bench=delivery) >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.cache/collection_path ANSIBLE_NOCOLOR=1 ANSIBLE_PIPELINING=1
PATH=$ROOT/.venv/bin:$PATH

# the torch set: the recorded set whose requirements start with torch== (the largest such)
NAMES=$(python3 - "$WHEELHOUSE" <<'PY'
import glob, json, os, sys
best = None
for stamp in glob.glob(os.path.join(sys.argv[1], ".radeonlab", "*.json")):
    record = json.load(open(stamp))
    reqs = record.get("set", {}).get("requirements", [])
    if reqs and reqs[0].startswith("torch==") and not any(r.startswith("llamafactory") for r in reqs):
        size = sum(f["size"] for f in record["files"])
        if best is None or size > best[0]:
            best = (size, [f["name"] for f in record["files"]])
if best is None:
    sys.exit("no torch wheel set recorded in %s (run make lab first)" % sys.argv[1])
print(" ".join(best[1]))
PY
)
read -r -a FILES <<<"$NAMES"
COUNT=${#FILES[@]}
BYTES=$(cd "$WHEELHOUSE" && du -cb "${FILES[@]}" | tail -1 | cut -f1)
echo "wheel set: $COUNT files, $((BYTES / 1048576)) MiB"

run_play() { # mode inventory -> seconds
    local t0 t1
    t0=$(date +%s.%N)
    ansible-playbook -i "$2" "$HERE/delivery.yml" -f 8 -e mode="$1" -e bench_wheelhouse="$WHEELHOUSE" \
        -e "{\"bench_names\": $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${FILES[@]}")}" >"$WORK/$1.log" 2>&1 \
        || { tail -n 40 "$WORK/$1.log"; exit 1; }
    t1=$(date +%s.%N)
    python3 -c "print(round($t1 - $t0, 1))"
}

printf '| hosts | serve s | push s | push/serve | push re-run s |\n|---|---|---|---|---|\n'
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(2 4)
for n1 in "${counts[@]}"; do
    {
        inv=$WORK/inventory-$n1.yml
        printf 'all:\n  children:\n    bench:\n      vars: {ansible_connection: community.docker.docker}\n      hosts:\n' >"$inv"
        for i in $(seq 1 "$n1"); do
            docker run -d --name "bench-delivery-$i" --label radeonlab.bench=delivery --network host --cgroupns host \
                --cap-add SYS_ADMIN --security-opt seccomp=unconfined --tmpfs /run --tmpfs /tmp \
                -v /sys/fs/cgroup:/sys/fs/cgroup:rw "$IMAGE" /lib/systemd/systemd >/dev/null
            printf '        bench-delivery-%d: {}\n' "$i" >>"$inv"
        done
        serve=$(run_play serve "$inv")
        for i in $(seq 1 "$n1"); do docker exec "bench-delivery-$i" rm -rf /var/cache/radeonlab/wheelhouse; done
        push=$(run_play push "$inv")
        again=$(run_play push "$inv")
        printf '| %d | %s | %s | %s | %s |\n' "$n1" "$serve" "$push" "$(python3 -c "print(round($push / $serve, 2))")" "$again"
        # shellcheck disable=SC2046  # one word per container id
        docker rm -f $(docker ps -aq --filter label=radeonlab.bench=delivery) >/dev/null
    }
done

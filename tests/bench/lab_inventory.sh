# shellcheck shell=bash
# Sourced by the lab benches: `lab_inventory DIR PREFIX COUNT PORT_BASE` writes an inventory of COUNT lab
# workstations PREFIX-1..COUNT into DIR, with the lab's variables (inventory/lab/group_vars), the hosts alternating
# between its two captured GPUs and each WebUI on PORT_BASE + i (the hosts share the loopback).
lab_inventory() {
    local dir=$1 prefix=$2 count=$3 port_base=$4
    mkdir -p "$dir"
    cp -r "$ROOT/inventory/lab/group_vars" "$dir/"
    python3 - "$prefix" "$count" "$port_base" >"$dir/hosts.yml" <<'PY'
import json
import sys
prefix, count, port_base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
groups = {"navi31": {"hosts": {}}, "navi22": {"hosts": {}}}
for i in range(1, count + 1):
    groups["navi31" if i % 2 else "navi22"]["hosts"]["%s-%d" % (prefix, i)] = {"lab_webui_port": port_base + i}
print(json.dumps({"all": {"children": {"radeon_workstations": {"children": groups,
                                                               "vars": {"ansible_connection": "community.docker.docker"}}}}}))
PY
}

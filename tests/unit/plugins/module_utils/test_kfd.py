# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils.kfd import (
    gfx_target_name,
    parse_properties,
    read_driver,
    read_kfd_topology,
)
from ansible_collections.radeonlab.llm.plugins.module_utils.rocminfo import ERROR_HINTS, parse_rocminfo

HERE = os.path.dirname(__file__)
KFD = os.path.join(HERE, "..", "..", "..", "fixtures", "kfd")
ROCMINFO = os.path.join(HERE, "..", "..", "..", "fixtures", "rocminfo")
AGENT_KEYS = ("node", "type", "name", "marketing_name", "compute_units", "uuid", "chip_id", "isa", "vram_kb")


def tree(name):
    return os.path.join(KFD, name)


def write(root, rel, text):
    path = os.path.join(str(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.mark.parametrize("value, want", [
    (90010, "gfx90a"),
    (90012, "gfx90c"),
    (90002, "gfx902"),
    (90402, "gfx942"),
    (90400, "gfx940"),
    (90401, "gfx941"),
    (90008, "gfx908"),
    (80003, "gfx803"),
    (100300, "gfx1030"),
    (100301, "gfx1031"),
    (100306, "gfx1036"),
    (110000, "gfx1100"),
    (110003, "gfx1103"),
    (110501, "gfx1151"),
    (120001, "gfx1201"),
    ("110000", "gfx1100"),
    (0, None),
    ("0", None),
    (12, None),
    (-90010, None),
    ("gfx1100", None),
    (None, None),
])
def test_gfx_target_name(value, want):
    assert gfx_target_name(value) == want


def test_parse_properties():
    text = "cpu_cores_count 0\nsimd_count 192\nunique_id 7559044545264914946\n\nbroken\nname navi31 extra\n"
    assert parse_properties(text) == {
        "cpu_cores_count": 0, "simd_count": 192, "unique_id": 7559044545264914946, "name": "navi31"}
    assert parse_properties("") == {}
    assert parse_properties(None) == {}


def agents_by_type(result, kind):
    return [a for a in result["agents"] if a["type"] == kind]


# tree -> expected agents (node, type, name, compute_units, chip_id, uuid, vram_kb)
TREES = [
    ("rx7900xtx", [
        (0, "CPU", "AMD Ryzen 9 5900X 12-Core Processor", 24, None, None, None),
        (1, "GPU", "gfx1100", 96, 0x744C, "GPU-69e905a91bab9202", 25149440),
    ]),
    ("rx6800xt_igpu", [
        (0, "CPU", "AMD Ryzen 7 7700X 8-Core Processor", 16, None, None, None),
        (1, "GPU", "gfx1030", 72, 0x73BF, "GPU-e0ce170bfa1769dd", 16760832),
        (2, "GPU", "gfx1036", 2, 0x164E, None, 524288),
    ]),
    ("mi300x_x4", [
        (0, "CPU", "AMD EPYC 9474F 48-Core Processor", 96, None, None, None),
        (1, "CPU", "AMD EPYC 9474F 48-Core Processor", 96, None, None, None),
        (2, "GPU", "gfx942", 304, 0x74A1, "GPU-8d1457e2c20f59d2", 201310208),
        (3, "GPU", "gfx942", 304, 0x74A1, "GPU-b4fa34630e85d42a", 201310208),
        (4, "GPU", "gfx942", 304, 0x74A1, "GPU-e8986800e182538a", 201310208),
        (5, "GPU", "gfx942", 304, 0x74A1, "GPU-eff71edc82169115", 201310208),
    ]),
    ("strix_halo", [
        (0, "CPU", "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", 32, None, None, None),
        (1, "GPU", "gfx1151", 40, 0x1586, None, 67108864),
    ]),
    ("raven_apu_combined_node", [
        (0, "CPU", "AMD Ryzen 5 3500U with Radeon Vega Mobile Gfx", 8, None, None, None),
        (0, "GPU", "gfx902", 11, 0x15D8, None, None),
    ]),
    ("cpu_only_nodes", [(n, "CPU", "AMD EPYC 7551P 32-Core Processor", 16, None, None, None) for n in range(4)]),
    ("no_driver", []),
    ("driver_not_live", []),
]


@pytest.mark.parametrize("name, want", TREES, ids=[t[0] for t in TREES])
def test_fixture_trees(name, want):
    result = read_kfd_topology(tree(name))
    got = [(a["node"], a["type"], a["name"], a["compute_units"], a["chip_id"], a["uuid"], a["vram_kb"]) for a in result["agents"]]
    assert got == want
    for agent in result["agents"]:
        assert tuple(agent) == AGENT_KEYS
        if agent["type"] == "GPU":
            assert agent["isa"] == ["amdgcn-amd-amdhsa--" + agent["name"]]
        else:
            assert agent["isa"] == [] and agent["marketing_name"] == agent["name"]
    assert len(result["devices"]) == len(agents_by_type(result, "GPU"))
    assert [d["node"] for d in result["devices"]] == [a["node"] for a in agents_by_type(result, "GPU")]
    assert (result["error"] is None) == bool(want)


@pytest.mark.parametrize("name, capture", [
    ("rx7900xtx", "06_rx7900xtx_gfx1100_rocm61.txt"),
    ("rx6800xt_igpu", "16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt"),
    ("mi300x_x4", "01_mi300x_x4_epyc_2numa.txt"),
    ("strix_halo", "07_strix_halo_gfx1151_with_aie_npu.txt"),
])
def test_sysfs_and_rocminfo_agree(name, capture):
    """The fixture trees model the captures: both sources give the same GPU facts."""
    with open(os.path.join(ROCMINFO, capture), encoding="utf-8") as handle:
        from_tool = agents_by_type(parse_rocminfo(handle.read()), "GPU")
    from_sysfs = agents_by_type(read_kfd_topology(tree(name)), "GPU")
    keys = ("node", "name", "compute_units", "chip_id", "vram_kb")
    assert [{k: a[k] for k in keys} for a in from_sysfs] == [{k: a[k] for k in keys} for a in from_tool]
    for sysfs_agent, tool_agent in zip(from_sysfs, from_tool):
        if tool_agent["uuid"] != "GPU-XX":
            assert sysfs_agent["uuid"] == tool_agent["uuid"]
    cpus_tool = agents_by_type(parse_rocminfo(open(os.path.join(ROCMINFO, capture), encoding="utf-8").read()), "CPU")
    cpus_sysfs = agents_by_type(read_kfd_topology(tree(name)), "CPU")
    assert [(a["node"], a["name"], a["compute_units"]) for a in cpus_sysfs] == [(a["node"], a["name"], a["compute_units"]) for a in cpus_tool]


def test_drm_matching_details():
    result = read_kfd_topology(tree("mi300x_x4"))
    # cards are shuffled relative to the nodes; unique_id decides
    assert [d["card"] for d in result["devices"]] == ["card2", "card1", "card3", "card0"]
    result = read_kfd_topology(tree("rx6800xt_igpu"))
    assert [d["card"] for d in result["devices"]] == ["card1", "card0"]
    assert [d["gtt_kb"] for d in result["devices"]] == [15 * 1024 * 1024] * 2
    assert [d["drm_render_minor"] for d in result["devices"]] == [128, 129]
    result = read_kfd_topology(tree("rx7900xtx"))
    assert result["devices"][0]["card"] == "renderD128"
    assert result["agents"][1]["marketing_name"] == "Radeon RX 7900 XTX"
    assert result["devices"][0]["gfx_target_version"] == 110000
    assert result["devices"][0]["location_id"] == 11520


@pytest.mark.parametrize("name, want", [
    ("rx7900xtx", {"present": True, "loaded": True, "state": "live", "version": "6.10.5"}),
    ("rx6800xt_igpu", {"present": True, "loaded": True, "state": "live", "version": None}),
    ("raven_apu_combined_node", {"present": True, "loaded": True, "state": None, "version": None}),
    ("driver_not_live", {"present": True, "loaded": False, "state": "coming", "version": "6.8.5"}),
    ("no_driver", {"present": False, "loaded": False, "state": None, "version": None}),
])
def test_read_driver(name, want):
    assert read_driver(tree(name)) == want
    assert read_kfd_topology(tree(name))["driver"] == want


@pytest.mark.parametrize("name, kind", [("no_driver", "rock_not_loaded"), ("driver_not_live", "rock_not_live")])
def test_errors(name, kind):
    error = read_kfd_topology(tree(name))["error"]
    assert error["kind"] == kind
    assert error["hint"] == ERROR_HINTS[kind]
    assert error["message"]


def test_missing_root(tmp_path):
    result = read_kfd_topology(str(tmp_path / "does-not-exist"))
    assert result["agents"] == [] and result["topology"] is False
    assert result["error"]["kind"] == "rock_not_loaded"


def test_driver_live_without_nodes(tmp_path):
    write(tmp_path, "sys/module/amdgpu/initstate", "live\n")
    result = read_kfd_topology(str(tmp_path))
    assert result["error"]["kind"] == "unknown"
    assert "KFD" in result["error"]["message"]


def test_malformed_files_are_tolerated(tmp_path):
    nodes = "sys/class/kfd/kfd/topology/nodes"
    write(tmp_path, "sys/module/amdgpu/initstate", "live\n")
    write(tmp_path, nodes + "/0/properties", "cpu_cores_count sixteen\ngfx_target_version\n")   # nothing usable
    write(tmp_path, nodes + "/1/properties", "\x00\xff garbage\n")
    os.makedirs(os.path.join(str(tmp_path), nodes, "2"))                                          # no properties
    write(tmp_path, nodes + "/3/properties", "gfx_target_version 110000\nsimd_count 192\nsimd_per_cu 0\n"
          "vendor_id 4098\ndevice_id 29772\nunique_id -5\n")
    write(tmp_path, nodes + "/notanode/properties", "gfx_target_version 110000\n")
    write(tmp_path, nodes + "/10/properties", "gfx_target_version 100300\nsimd_count 144\nsimd_per_cu 2\n")
    write(tmp_path, "sys/class/drm/card0/device/vendor", "garbage\n")
    write(tmp_path, "sys/class/drm/card0/device/device", "0x744c\n")
    write(tmp_path, "sys/class/drm/card1/device/vendor", "0x1002\n")
    write(tmp_path, "sys/class/drm/card1/device/device", "0x744c\n")
    write(tmp_path, "sys/class/drm/card1/device/mem_info_vram_total", "lots\n")
    write(tmp_path, "sys/class/drm/cardX/device/vendor", "0x1002\n")
    write(tmp_path, "proc/cpuinfo", "no model here\n")
    result = read_kfd_topology(str(tmp_path))
    got = [(a["node"], a["type"], a["name"], a["compute_units"], a["uuid"], a["vram_kb"]) for a in result["agents"]]
    # node order is numeric (3 before 10)
    assert got == [(3, "GPU", "gfx1100", None, None, None), (10, "GPU", "gfx1030", 72, None, None)]
    assert result["devices"][0]["card"] == "card1"
    assert result["devices"][1]["card"] is None
    assert result["error"] is None


def test_identical_gpus_without_unique_id_get_distinct_cards(tmp_path):
    nodes = "sys/class/kfd/kfd/topology/nodes"
    write(tmp_path, "sys/module/amdgpu/initstate", "live\n")
    for node, vram in ((1, 8), (2, 16)):
        write(tmp_path, nodes + "/%d/properties" % node,
              "gfx_target_version 100300\nsimd_count 144\nsimd_per_cu 2\nvendor_id 4098\ndevice_id 29631\n")
        write(tmp_path, "sys/class/drm/card%d/device/vendor" % node, "0x1002\n")
        write(tmp_path, "sys/class/drm/card%d/device/device" % node, "0x73bf\n")
        write(tmp_path, "sys/class/drm/card%d/device/mem_info_vram_total" % node, "%d\n" % (vram << 30))
    result = read_kfd_topology(str(tmp_path))
    assert [a["vram_kb"] for a in result["agents"]] == [8 << 20, 16 << 20]
    assert [d["card"] for d in result["devices"]] == ["card1", "card2"]

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""read_kfd_topology on a KFD topology copied from a real machine (tests/fixtures/kfd/README.md names the source).

The other KFD trees are generated from the rocminfo captures the parser is tested on; this one is an independent
check. Expected values come from the kernel's own files and public hardware facts, not from the reader:
Radeon VII (Vega 20, PCI 1002:66af) has 60 CUs, Navi 33 1002:7489 has 28, Navi 23 1002:73ef has 32.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils.kfd import read_kfd_topology

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "kfd", "captured_gfx906_gfx1102_gfx1032")
NODES = os.path.join(ROOT, "sys", "class", "kfd", "kfd", "topology", "nodes")
# The kernel's ASIC names (nodes/<N>/name, where the capture kept it) and the LLVM targets of those chips.
ASIC_TARGET = {"vega20": "gfx906", "dimgrey_cavefish": "gfx1032"}


def gpu(node, name, cus, chip, uuid):
    return {"node": node, "type": "GPU", "name": name, "marketing_name": "", "compute_units": cus, "uuid": uuid, "chip_id": chip,
            "isa": ["amdgcn-amd-amdhsa--" + name], "vram_kb": None}


def device(node, gfx_version, chip, unique_id, location, simd, simd_per_cu):
    return {"node": node, "gfx_target_version": gfx_version, "vendor_id": 0x1002, "device_id": chip, "unique_id": unique_id,
            "location_id": location, "drm_render_minor": 0, "simd_count": simd, "simd_per_cu": simd_per_cu, "array_count": 4,
            "card": None, "gtt_kb": None}


def test_captured_tree():
    result = read_kfd_topology(ROOT)
    # The capture has the topology only: no /sys/module/amdgpu, no DRM devices (so no VRAM), no /proc/cpuinfo.
    assert result["driver"] == {"present": False, "loaded": False, "state": None, "version": None}
    assert (result["topology"], result["error"]) == (True, None)
    assert result["agents"] == [
        {"node": 0, "type": "CPU", "name": None, "marketing_name": "", "compute_units": 24, "uuid": None, "chip_id": None, "isa": [],
         "vram_kb": None},
        gpu(1, "gfx906", 60, 0x66AF, "GPU-0dac90a172da5f19"),  # unique_id 985321441578344217
        gpu(2, "gfx1102", 28, 0x7489, None),                    # unique_id 0: no UUID
        gpu(3, "gfx1032", 32, 0x73EF, None),
    ]
    assert result["devices"] == [
        device(1, 90006, 0x66AF, 985321441578344217, 0x6300, 240, 4),  # PCI 63:00.0
        device(2, 110002, 0x7489, None, 0x6600, 56, 2),
        device(3, 100302, 0x73EF, None, 0x4300, 64, 2),
    ]


@pytest.mark.parametrize("node", sorted(n for n in os.listdir(NODES) if os.path.exists(os.path.join(NODES, n, "name"))))
def test_gfx_target_agrees_with_the_kernel_asic_name(node):
    with open(os.path.join(NODES, node, "name"), encoding="utf-8") as handle:
        asic = handle.read().strip()
    agent = next(a for a in read_kfd_topology(ROOT)["agents"] if a["node"] == int(node) and a["type"] == "GPU")
    assert agent["name"] == ASIC_TARGET[asic]

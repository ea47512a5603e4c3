# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests of plugins/module_utils/gfx.py (pure functions, no Ansible)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import gfx
from ansible_collections.radeonlab.llm.plugins.module_utils.gfx import (
    UnsupportedGpuError,
    gfx_version,
    gpu_environment,
    gpu_support,
    hsa_override_for,
    normalize_gfx,
    parse_rocm_version,
    resolve_reported_target,
    validate_override_value,
)

# The rocminfo captures and their expected facts, kept in the repository (tests/fixtures/rocminfo/SOURCES.md).
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "rocminfo")


# ---------------------------------------------------------------------------------------------
# hsa_override_for: (gfx as written, ROCm version, expected override or None)
# ---------------------------------------------------------------------------------------------
OVERRIDE_ROWS = [
    # natively supported: never overridden
    ("gfx1100", "5.7", None),
    ("gfx1100", "6.0.2", None),
    ("gfx1100", "7.2.0", None),
    ("gfx1030", "6.1", None),
    ("gfx1030", "7.0.0", None),
    ("gfx942", "6.0", None),
    ("gfx90a", "6.4.1", None),
    ("gfx90a:sramecc+:xnack-", "6.2.4", None),
    ("gfx908", "6.3", None),
    ("gfx906", "6.2", None),
    ("gfx900", "6.0", None),
    ("gfx1201", "6.4", None),
    ("gfx1200", "7.0", None),
    ("gfx1101", "6.4.0", None),
    ("gfx1101", "7.1", None),
    ("gfx1151", "6.4.4", None),
    ("gfx1151", "7.0.2", None),
    ("gfx950", "7.0", None),
    # RDNA2 family -> 10.3.0 on every line
    ("gfx1031", "5.7", "10.3.0"),
    ("GFX1031", "6.2", "10.3.0"),
    ("  gfx1031  ", "6.2.4", "10.3.0"),
    ("gfx1032", "6.3", "10.3.0"),
    ("gfx1034", "6.4", "10.3.0"),
    ("gfx1035", "7.0", "10.3.0"),
    ("gfx1036", "7.2", "10.3.0"),
    ("amdgcn-amd-amdhsa--gfx1032", "6.1", "10.3.0"),
    # RDNA3 family -> 11.0.0 while the target's own kernels are missing
    ("gfx1101", "5.7", "11.0.0"),
    ("gfx1101", "6.2", "11.0.0"),
    ("gfx1102", "6.1", "11.0.0"),
    ("gfx1103", "6.4", "11.0.0"),
    ("gfx1103", "7.2", "11.0.0"),
    # RDNA3.5: 11.0.0 before gfx1151 kernels ship, then 11.5.1 for the siblings
    ("gfx1151", "6.2", "11.0.0"),
    ("gfx1151", "6.3", "11.0.0"),
    ("gfx1150", "6.3", "11.0.0"),
    ("gfx1150", "6.4", "11.5.1"),
    ("gfx1152", "7.0", "11.5.1"),
    # Vega APUs -> 9.0.0 (old '+xnack' feature syntax too)
    ("gfx90c", "6.2", "9.0.0"),
    ("gfx902", "5.7", "9.0.0"),
    ("gfx902+xnack", "6.0", "9.0.0"),
    ("gfx90c:xnack-", "7.0", "9.0.0"),
]


@pytest.mark.parametrize("name, rocm, expected", OVERRIDE_ROWS)
def test_hsa_override_for(name, rocm, expected):
    assert hsa_override_for(name, rocm) == expected


# ---------------------------------------------------------------------------------------------
# Unsupported: UnsupportedGpuError (a ValueError) with the reason
# ---------------------------------------------------------------------------------------------
UNSUPPORTED_ROWS = [
    ("gfx803", "5.7", "pre-Vega"),
    ("gfx803", "6.4", "8.0.3 is the card's own version"),
    ("gfx803", "7.2", "ROC_ENABLE_PRE_VEGA"),
    ("gfx701", "6.0", "pre-Vega"),
    ("gfx1010", "6.2", "RDNA1"),
    ("gfx1012", "7.0", "RDNA1"),
    ("gfx941", "6.2", "pre-production"),
    ("gfx940", "6.4", "pre-production"),
    ("gfx950", "6.4", "no kernels"),
    ("gfx942", "5.7", "no kernels"),
    ("gfx1200", "6.3", "gfx120x"),
    ("gfx1201", "6.1", "RDNA4 needs ROCm 6.4"),
    ("gfx1250", "7.2", "not in support matrix"),
]


@pytest.mark.parametrize("name, rocm, words", UNSUPPORTED_ROWS)
def test_unsupported(name, rocm, words):
    with pytest.raises(UnsupportedGpuError) as info:
        hsa_override_for(name, rocm)
    assert isinstance(info.value, ValueError)
    assert words in str(info.value)
    assert info.value.support["status"] == "unsupported"
    support = gpu_support(name, rocm)
    assert support["status"] == "unsupported" and support["override"] is None and support["source"]


# ---------------------------------------------------------------------------------------------
# Malformed input: plain ValueError, never UnsupportedGpuError
# ---------------------------------------------------------------------------------------------
BAD_ROWS = [
    ("gfx10xx", "6.2"),
    ("", "6.2"),
    ("1031", "6.2"),
    ("gfx", "6.2"),
    ("gfx 1031", "6.2"),
    ("gfx12345", "6.2"),
    ("gfx1031:", "6.2"),
    ("gfx11-generic", "6.4"),
    ("nvidia", "6.2"),
    (None, "6.2"),
    (1031, "6.2"),
    ("gfx1031", "six"),
    ("gfx1031", ""),
    ("gfx1031", "6"),
    ("gfx1031", "6.x"),
    ("gfx1031", "6.2.4.1"),
    ("gfx1031", None),
    ("gfx1031", True),
    ("gfx1031", "5.6"),
    ("gfx1031", "7.14"),
    ("gfx1031", "10.0"),
]


@pytest.mark.parametrize("name, rocm", BAD_ROWS)
def test_malformed_input(name, rocm):
    with pytest.raises(ValueError) as info:
        hsa_override_for(name, rocm)
    assert not isinstance(info.value, UnsupportedGpuError)


@pytest.mark.parametrize("raw, expected", [
    ("gfx1031", "gfx1031"), ("GFX1031", "gfx1031"), (" gfx1031\n", "gfx1031"), ("gfx90a:sramecc+:xnack-", "gfx90a"),
    ("gfx902+xnack", "gfx902"), ("amdgcn-amd-amdhsa--gfx1100", "gfx1100"), ("gfx803", "gfx803"),
])
def test_normalize_gfx(raw, expected):
    assert normalize_gfx(raw) == expected


@pytest.mark.parametrize("target, version", [
    ("gfx1030", "10.3.0"), ("gfx1031", "10.3.1"), ("gfx90a", "9.0.10"), ("gfx90c", "9.0.12"), ("gfx803", "8.0.3"),
    ("gfx1151", "11.5.1"), ("gfx942", "9.4.2"), ("gfx1201", "12.0.1"),
])
def test_gfx_version(target, version):
    assert gfx_version(target) == version


@pytest.mark.parametrize("raw, expected", [("6.2", (6, 2, 0)), ("6.2.4", (6, 2, 4)), ("7.0.0", (7, 0, 0)), (" 6.4.1 ", (6, 4, 1))])
def test_parse_rocm_version(raw, expected):
    assert parse_rocm_version(raw) == expected


@pytest.mark.parametrize("raw, expected", [("10.3.0", "10.3.0"), ("11.0.0", "11.0.0"), ("9.0.10", "9.0.10"),
                                           ("10.03.0", "10.3.0"), (" 63.255.255 ", "63.255.255")])
def test_validate_override_ok(raw, expected):
    assert validate_override_value(raw) == expected


@pytest.mark.parametrize("raw, words", [
    ("", "gfx000"), ("10.3", "major.minor.stepping"), ("10.3.0.1", "major.minor.stepping"), ("64.0.0", "out of range"),
    ("10.256.0", "out of range"), ("10.3.256", "out of range"), ("gfx1030", "did you mean 10.3.0"), ("-1.0.0", "invalid"),
    ("10.3.0x", "invalid"), ("ten", "invalid"), (None, "invalid"),
])
def test_validate_override_bad(raw, words):
    with pytest.raises(ValueError) as info:
        validate_override_value(raw)
    assert words in str(info.value)


def test_gpu_support_shape_and_sources():
    support = gpu_support("gfx1031", "6.2.4")
    assert support["status"] == "override"
    assert support["override"] == "10.3.0"
    assert support["emulates"] == "gfx1030"
    assert support["rocm_line"] == "6.2"
    assert "rocm_facts.md §2" in support["source"]
    assert "gfx1030" in support["reason"]
    native = gpu_support("gfx1100", "6.4")
    assert native["status"] == "native" and native["override"] is None and native["official"] is True
    assert gpu_support("gfx1102", "6.4")["official"] is False  # works, not listed by AMD


def test_native_gpu_is_never_overridden_on_any_line():
    from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
    for line, rel in sm.RELEASES.items():
        for target in rel["official_radeon"] + rel["official_instinct"]:
            support = gpu_support(target, line)
            assert support["status"] == "native", (target, line, support["reason"])
            assert support["override"] is None


@pytest.mark.parametrize("name, chip, expected, overridden", [
    ("gfx1030", 29663, "gfx1031", True),          # corpus 04: RX 6700 XT captured under 10.3.0
    ("gfx1030", "29663(0x73df)", "gfx1031", True),
    ("gfx1030", "0x73df", "gfx1031", True),
    ("gfx1031", 0x73df, "gfx1031", False),        # corpus 31: same chip, no override
    ("gfx1030", 0x73bf, "gfx1030", False),        # corpus 16: a real gfx1030
    ("gfx1100", 0x747e, "gfx1101", True),         # RX 7800 XT captured under 11.0.0
    ("gfx1100", 0x7480, "gfx1102", True),         # RX 7600 captured under 11.0.0 (the common budget-card setup)
    ("gfx941", 0x74a1, "gfx941", False),          # corpus 30: pre-production naming, not an override
    ("gfx1030", None, "gfx1030", False),
    ("gfx1030", 0x1234, "gfx1030", False),        # unknown chip: trust the name
    ("gfx1030", "garbage", "gfx1030", False),
])
def test_resolve_reported_target(name, chip, expected, overridden):
    real, note = resolve_reported_target(name, chip)
    assert real == expected
    assert (note is not None and "HSA_OVERRIDE_GFX_VERSION set" in note) is overridden


# ---------------------------------------------------------------------------------------------
# gpu_environment: mixed rigs and policies
# ---------------------------------------------------------------------------------------------
def _gpu(name, node, index=None, uuid="GPU-XX", integrated=False, chip_id=None, cu=40):
    row = {"name": name, "node": node, "uuid": uuid, "integrated": integrated, "compute_units": cu}
    if index is not None:
        row["index"] = index
    if chip_id is not None:
        row["chip_id"] = chip_id
    return row


RX6800XT = _gpu("gfx1030", 1, 0, uuid="GPU-e0ce170bfa1769dd", cu=72)
IGPU_2 = _gpu("gfx1036", 2, 1, integrated=True, cu=2)
RX7900 = _gpu("gfx1100", 1, 0, uuid="GPU-69e905a91bab9202", cu=96)
RX6700 = _gpu("gfx1031", 2, 1, uuid="GPU-1111222233334444", cu=40)
RX580 = _gpu("gfx803", 1, 0, cu=36)
RX7800 = _gpu("gfx1101", 2, 1, uuid="GPU-fa361c759788a037", cu=60)
RX6600 = _gpu("gfx1032", 1, 0, uuid="GPU-aaaabbbbccccdddd", cu=28)

ENV_ROWS = [
    # id, gpus, rocm, policy, include_integrated, expected env, expected visibility by node
    ("6800xt+igpu hides igpu", [RX6800XT, IGPU_2], "6.4", "auto", False,
     {"ROCR_VISIBLE_DEVICES": "GPU-e0ce170bfa1769dd"}, {1: True, 2: False}),
    ("6800xt+igpu included 6.4 per-node", [RX6800XT, IGPU_2], "6.4", "auto", True,
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}, {1: True, 2: True}),
    ("6800xt+igpu included 6.0 global is own version of 1030", [RX6800XT, IGPU_2], "6.0", "auto", True,
     {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {1: True, 2: True}),
    ("7900+6700 on 6.2 per-node", [RX7900, RX6700], "6.2.4", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}, {1: True, 2: True}),
    ("7900+6700 on 6.1 keeps native", [RX7900, RX6700], "6.1", "auto", False,
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202"}, {1: True, 2: False}),
    ("rx580+igpu 6.4 uses igpu by index", [RX580, _gpu("gfx1036", 2, 1, integrated=True, cu=2)], "6.4", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "ROCR_VISIBLE_DEVICES": "1"}, {1: False, 2: True}),
    ("rx580+igpu 6.0 global is safe for hidden rx580", [RX580, _gpu("gfx1036", 2, 1, integrated=True, cu=2)], "6.0", "auto",
     False, {"HSA_OVERRIDE_GFX_VERSION": "10.3.0", "ROCR_VISIBLE_DEVICES": "1"}, {1: False, 2: True}),
    ("rx580 alone: nothing usable", [RX580], "6.4", "auto", False, {}, {1: False}),
    ("6600+7800 on 6.2: two values per-node", [RX6600, RX7800], "6.2", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_2": "11.0.0"}, {1: True, 2: True}),
    ("6600+7800 on 6.0: keeps bigger group", [RX6600, RX7800], "6.0", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION": "11.0.0", "ROCR_VISIBLE_DEVICES": "GPU-fa361c759788a037"}, {1: False, 2: True}),
    ("6600+7800 on 6.4: 7800 native, 6600 per-node", [RX6600, RX7800], "6.4", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"}, {1: True, 2: True}),
    ("two 6700s one global", [_gpu("gfx1031", 1, 0, cu=40), _gpu("gfx1031", 2, 1, cu=40)], "6.2", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {1: True, 2: True}),
    ("off policy: no override, gfx1031 kept", [RX7900, RX6700], "6.4", "off", False, {}, {1: True, 2: True}),
    ("off policy still hides gfx803", [RX580, dict(RX6800XT, node=2, index=1)], "6.4", "off", False,
     {"ROCR_VISIBLE_DEVICES": "GPU-e0ce170bfa1769dd"}, {1: False, 2: True}),
    ("explicit 10.3.0 on a 6600", [RX6600], "6.2", "10.3.0", False, {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {1: True}),
    ("explicit 10.3.0 never touches native 7900", [RX7900, RX6700], "6.4", "10.3.0", False,
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}, {1: True, 2: True}),
    ("explicit 8.0.3 on rx580 is a no-op", [RX580], "6.4", "8.0.3", False, {}, {1: False}),
    ("explicit 9.0.0 on rx580 is cross-generation", [RX580], "5.7", "9.0.0", False, {}, {1: False}),
    ("explicit 11.0.0 on a 6600 is cross-generation", [RX6600], "6.2", "11.0.0", False, {}, {1: False}),
    ("explicit on all-native rig ignored", [RX7900], "6.4", "11.0.0", False, {}, {1: True}),
    ("mi300x x4 native", [_gpu("gfx942", n, n - 2, uuid="GPU-%016x" % n, cu=304) for n in range(2, 6)], "6.4", "auto", False,
     {}, {2: True, 3: True, 4: True, 5: True}),
    ("780m alone is kept", [_gpu("gfx1103", 1, 0, integrated=True, cu=12)], "6.4", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, {1: True}),
    ("overridden capture 6700xt", [_gpu("gfx1030", 1, 0, chip_id=29663)], "6.4", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, {1: True}),
    ("strix halo 6.3 vs 7.0", [_gpu("gfx1151", 1, 0, integrated=True)], "6.3", "auto", False,
     {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}, {1: True}),
    ("strix halo native 7.0", [_gpu("gfx1151", 1, 0, integrated=True)], "7.0", "auto", False, {}, {1: True}),
    ("index derived from node order", [_gpu("gfx803", 3), _gpu("gfx1100", 1)], "6.4", "auto", False,
     {"ROCR_VISIBLE_DEVICES": "0"}, {1: True, 3: False}),
    ("dgpu unsupported, igpu kept as only usable", [_gpu("gfx1010", 1, 0), _gpu("gfx90c", 2, 1, integrated=True)], "6.2",
     "auto", False, {"HSA_OVERRIDE_GFX_VERSION_2": "9.0.0", "ROCR_VISIBLE_DEVICES": "1"}, {1: False, 2: True}),
]


@pytest.mark.parametrize("gpus, rocm, policy, include, env, visible", [r[1:] for r in ENV_ROWS], ids=[r[0] for r in ENV_ROWS])
def test_gpu_environment(gpus, rocm, policy, include, env, visible):
    result = gpu_environment(gpus, rocm, policy, include)
    assert result["env"] == env
    got = {g["node"]: g["visible"] for g in result["gpus"]}
    for node, flag in visible.items():
        assert got[node] is flag, result["gpus"]
    for g in result["gpus"]:
        assert g["status"] in ("native", "override", "unsupported")
        assert g["reason"] and g["source"]
        if g["status"] == "native":
            assert g["override"] is None
    assert result["usable_gpus"] == sum(1 for g in result["gpus"] if g["visible"])


def test_environment_never_sets_empty_or_invalid_values():
    for row in ENV_ROWS:
        env = gpu_environment(row[1], row[2], row[3], row[4])["env"]
        for key, value in env.items():
            assert value != ""
            if key.startswith("HSA_OVERRIDE_GFX_VERSION"):
                assert validate_override_value(value) == value


def test_old_runtime_hides_with_reason():
    result = gpu_environment([RX7900, RX6700], "6.1", "auto")
    hidden = [g for g in result["gpus"] if not g["visible"]][0]
    assert "per-node" in hidden["reason"] and "6.2" in hidden["reason"]
    assert result["warnings"]


def test_no_usable_gpu_warns():
    result = gpu_environment([RX580], "6.4")
    assert result["usable_gpus"] == 0
    assert any("no GPU is usable" in w for w in result["warnings"])


@pytest.mark.parametrize("gpus, words", [
    ("gfx1030", "list"),
    ([{"node": 1}], "'name'"),
    (["gfx1030"], "dict"),
    ([{"name": "gfx10xx", "node": 1}], "gpus[0]"),
    ([{"name": "gfx1030", "node": -1}], "node"),
    ([{"name": "gfx1030", "node": "one"}], "node"),
    ([{"name": "gfx1030", "node": 1}, {"name": "gfx1031", "node": 1}], "same KFD node"),
    ([{"name": "gfx1030", "node": 1, "index": 0}, {"name": "gfx1031", "node": 2, "index": 0}], "duplicate"),
    ([{"name": "gfx1030", "node": 1, "integrated": "maybe"}], "boolean"),
])
def test_environment_bad_gpus(gpus, words):
    with pytest.raises(ValueError) as info:
        gpu_environment(gpus, "6.4")
    assert words in str(info.value)


@pytest.mark.parametrize("policy", ["", "10.3", "gfx1030", "64.0.0", 10.3, "default"])
def test_environment_bad_policy(policy):
    with pytest.raises(ValueError):
        gpu_environment([RX6600], "6.2", policy)


def test_missing_node_falls_back_to_global():
    gpus = [{"name": "gfx1100", "node": None, "index": 0}, {"name": "gfx1031", "index": 1}]
    result = gpu_environment(gpus, "6.4")
    # per-node impossible without node ids; a global 10.3.0 would touch the native gfx1100 -> hidden instead
    assert result["env"] == {"ROCR_VISIBLE_DEVICES": "0"}
    assert any("KFD node id" in w for w in result["warnings"])
    single = gpu_environment([{"name": "gfx1031", "node": None}], "6.4")
    assert single["env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_node_strings_are_accepted():
    result = gpu_environment([{"name": "gfx1031", "node": "1", "index": "0", "integrated": "false"}], "6.2")
    assert result["env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


# ---------------------------------------------------------------------------------------------
# One row per GPU of the rocminfo fixtures (expected.json), built directly from their facts.
# ---------------------------------------------------------------------------------------------
# Chip IDs and integrated flags read from the corpus captures (rocminfo 'Chip ID' / APU memory properties).
CORPUS_CHIP = {"04_rx6700xt_override_gfx1030_ansi.txt": 29663, "32_rx9060xt_gfx1200_rocm72.txt": 30096}
# Fixture 33 has two GPUs: the chip ids per agent (RX 9070 XT 0x7550, iGPU 0x13c0)
AGENT_CHIP = {("33_rx9070xt_gfx1201_plus_igpu_gfx1036_rocm70.txt", 1): 30032,
              ("33_rx9070xt_gfx1201_plus_igpu_gfx1036_rocm70.txt", 2): 5056}
INTEGRATED = {"gfx902", "gfx90c", "gfx1036", "gfx1103", "gfx1151"}
# (file, agent index in expected.json, ROCm version of the capture or the nearest covered line, status, override)
CORPUS_ROWS = [
    ("01_mi300x_x4_epyc_2numa.txt", 2, "6.0", "native", None),
    ("01_mi300x_x4_epyc_2numa.txt", 3, "6.0", "native", None),
    ("01_mi300x_x4_epyc_2numa.txt", 4, "6.0", "native", None),
    ("01_mi300x_x4_epyc_2numa.txt", 5, "6.0", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 1, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 2, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 3, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 4, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 5, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 6, "5.7", "native", None),
    ("02_mi25_gfx900_x7_threadripper.txt", 7, "5.7", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 4, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 5, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 6, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 7, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 8, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 9, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 10, "6.0", "native", None),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", 11, "6.0", "native", None),
    ("04_rx6700xt_override_gfx1030_ansi.txt", 1, "6.2", "override", "10.3.0"),
    ("05_wsl_rx7800xt_gfx1101.txt", 1, "6.1", "override", "11.0.0"),
    ("05_wsl_rx7800xt_gfx1101.txt", 1, "6.4", "native", None),
    ("06_rx7900xtx_gfx1100_rocm61.txt", 1, "6.1", "native", None),
    ("07_strix_halo_gfx1151_with_aie_npu.txt", 1, "7.0", "native", None),
    ("07_strix_halo_gfx1151_with_aie_npu.txt", 1, "6.3", "override", "11.0.0"),
    ("08_ryzen3500u_apu_gfx902_rocm2x.txt", 1, "5.7", "override", "9.0.0"),
    ("15_ryzen5600g_gfx90c_blank_marketing_name_truncated.txt", 1, "5.7", "override", "9.0.0"),
    ("16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt", 1, "5.7", "native", None),
    ("16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt", 2, "5.7", "override", "10.3.0"),
    ("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt", 1, "6.4", "unsupported", None),
    ("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt", 2, "6.4", "override", "10.3.0"),
    ("22_radeon780m_gfx1103_apu_doc_mangled_headers.txt", 1, "6.4", "override", "11.0.0"),
    ("30_rocminfo_docs_mi300x_gfx941_rst_indented.txt", 1, "6.0", "unsupported", None),
    ("31_rx6750gre_gfx1031_rocm57.txt", 1, "5.7", "override", "10.3.0"),
    ("32_rx9060xt_gfx1200_rocm72.txt", 1, "7.2", "native", None),
    ("32_rx9060xt_gfx1200_rocm72.txt", 1, "6.4", "native", None),
    ("32_rx9060xt_gfx1200_rocm72.txt", 1, "6.3", "unsupported", None),
    ("33_rx9070xt_gfx1201_plus_igpu_gfx1036_rocm70.txt", 1, "7.0", "native", None),
    ("33_rx9070xt_gfx1201_plus_igpu_gfx1036_rocm70.txt", 2, "7.0", "override", "10.3.0"),
]


def _load_expected():
    with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as handle:
        return json.load(handle)


def _corpus_gpus(name, data):
    agents = data[name]["agents"]
    gpus = []
    for position, agent in enumerate(agents):
        if agent["type"] != "GPU":
            continue
        gpus.append({
            "agent": position,
            "name": agent["name"],
            "node": agent["node"],
            "index": len(gpus),
            "marketing_name": agent["marketing_name"],
            "compute_units": agent["compute_units"],
            "vram_kb": agent["vram_kb"],
            "uuid": "GPU-XX",
            "integrated": agent["name"] in INTEGRATED,
            "chip_id": AGENT_CHIP.get((name, position), CORPUS_CHIP.get(name)),
        })
    return gpus


def test_corpus_rows_cover_every_gpu():
    data = _load_expected()
    covered = {(f, a) for f, a, _r, _s, _o in CORPUS_ROWS}
    for name, entry in data.items():
        for position, agent in enumerate(entry["agents"]):
            if agent["type"] == "GPU":
                assert (name, position) in covered, (name, position)


@pytest.mark.parametrize("name, agent, rocm, status, override", CORPUS_ROWS)
def test_corpus_gpu(name, agent, rocm, status, override):
    data = _load_expected()
    gpus = _corpus_gpus(name, data)
    result = gpu_environment(gpus, rocm, "auto", include_integrated=True)
    mine = [g for g, raw in zip(result["gpus"], sorted(gpus, key=lambda r: r["index"])) if raw["agent"] == agent][0]
    assert mine["status"] == status, mine["reason"]
    assert mine["recommended_override"] == override
    assert mine["source"]
    if status == "unsupported":
        assert mine["visible"] is False
    else:
        assert mine["visible"] is True
    if override:
        env = result["env"]
        assert env.get("HSA_OVERRIDE_GFX_VERSION") == override or env.get("HSA_OVERRIDE_GFX_VERSION_%d" % mine["node"]) == override
    # module_utils and the per-GPU function agree
    assert gfx.gpu_support(mine["name"], rocm)["status"] == status


def test_corpus_04_overridden_capture_is_explained():
    data = _load_expected()
    result = gpu_environment(_corpus_gpus("04_rx6700xt_override_gfx1030_ansi.txt", data), "6.2")
    gpu = result["gpus"][0]
    assert gpu["reported_name"] == "gfx1030" and gpu["name"] == "gfx1031"
    assert "0x73df" in gpu["reason"]
    # without the chip id the capture is taken at face value: native, no override
    plain = [dict(g, chip_id=None) for g in _corpus_gpus("04_rx6700xt_override_gfx1030_ansi.txt", data)]
    assert gpu_environment(plain, "6.2")["env"] == {}


def test_fixture_32_rx9060xt_reported_under_an_rdna3_override_is_flagged():
    # ROCm/ROCm#5657 shows an RX 9060 XT (Chip ID 0x7590) reported as gfx1100, as HSA_OVERRIDE_GFX_VERSION=11.0.0
    # makes it: the chip id names the real target, and 11.0.0 is not a value its family borrows (cross-major)
    data = _load_expected()
    overridden = [dict(g, name="gfx1100") for g in _corpus_gpus("32_rx9060xt_gfx1200_rocm72.txt", data)]
    name, note = gfx.resolve_reported_target(overridden[0]["name"], overridden[0]["chip_id"])
    assert name == "gfx1100" and "0x7590 is gfx1200" in note
    assert gfx.resolve_reported_target("gfx1200", 30096) == ("gfx1200", None)


def test_fixture_33_rx9070xt_default_hides_the_igpu():
    data = _load_expected()
    result = gpu_environment(_corpus_gpus("33_rx9070xt_gfx1201_plus_igpu_gfx1036_rocm70.txt", data), "7.0")
    assert result["env"] == {"ROCR_VISIBLE_DEVICES": "0"}
    assert result["gpus"][0]["status"] == "native" and result["gpus"][0]["visible"] is True
    assert "integrated" in result["gpus"][1]["reason"]


def test_corpus_19_rx580_with_igpu():
    data = _load_expected()
    result = gpu_environment(_corpus_gpus("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt", data), "6.4")
    assert result["env"] == {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "ROCR_VISIBLE_DEVICES": "1"}
    assert "8.0.3" in result["gpus"][0]["reason"]


def test_corpus_16_default_hides_igpu():
    data = _load_expected()
    result = gpu_environment(_corpus_gpus("16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt", data), "6.2")
    assert result["env"] == {"ROCR_VISIBLE_DEVICES": "0"}
    assert "integrated" in result["gpus"][1]["reason"]


# ---------------------------------------------------------------------------------------------
# gpu_environment: which of the usable GPUs a job trains on (select)
# ---------------------------------------------------------------------------------------------
RX7900_B = _gpu("gfx1100", 2, 1, uuid="GPU-0000000000000002", cu=96)
RX7900_C = _gpu("gfx1100", 3, 2, uuid="GPU-0000000000000003", cu=96)

SELECT_ROWS = [
    # id, gpus, select, expected env, expected visibility by node
    ("all keeps every usable GPU", [RX7900, RX7900_B, RX7900_C], "all", {}, {1: True, 2: True, 3: True}),
    ("a count keeps the first N by index", [RX7900, RX7900_B, RX7900_C], 2,
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202,GPU-0000000000000002"}, {1: True, 2: True, 3: False}),
    ("a count as the inventory's string", [RX7900, RX7900_B, RX7900_C], "1", {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202"},
     {1: True, 2: False, 3: False}),
    ("a list keeps those indices", [RX7900, RX7900_B, RX7900_C], [2, 0],
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202,GPU-0000000000000003"}, {1: True, 2: False, 3: True}),
    ("leaving out the card that needs an override drops the override", [RX7900, RX6700], [0],
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202"}, {1: True, 2: False}),
    ("the iGPU hidden first, then the count of what is left", [RX6800XT, IGPU_2], 1,
     {"ROCR_VISIBLE_DEVICES": "GPU-e0ce170bfa1769dd"}, {1: True, 2: False}),
]


@pytest.mark.parametrize("gpus, select, env, visible", [r[1:] for r in SELECT_ROWS], ids=[r[0] for r in SELECT_ROWS])
def test_gpu_environment_select(gpus, select, env, visible):
    result = gpu_environment(gpus, "6.4", "auto", False, select=select)
    assert result["env"] == env
    assert {g["node"]: g["visible"] for g in result["gpus"]} == visible
    assert result["usable_gpus"] == sum(visible.values())
    for gpu in result["gpus"]:
        if not visible[gpu["node"]] and gpu["name"] == "gfx1100":
            assert "not selected" in gpu["reason"], gpu


@pytest.mark.parametrize("select, words", [
    (4, "asks for 4 GPU(s) but 3 are usable"),
    ([0, 5], "index(es) [5] that are not usable"),
    (0, "select must be"),
    ("two", "select must be"),
    ([], "select must be"),
    ([True], "select must be"),
    (True, "select must be"),
])
def test_gpu_environment_select_refuses_what_cannot_be_met(select, words):
    with pytest.raises(ValueError) as raised:
        gpu_environment([RX7900, RX7900_B, RX7900_C], "6.4", "auto", False, select=select)
    assert words in str(raised.value)


def test_a_hidden_integrated_gpu_cannot_be_selected():
    with pytest.raises(ValueError, match=r"index\(es\) \[1\] that are not usable; the usable GPUs are \[0\]"):
        gpu_environment([RX6800XT, IGPU_2], "6.4", "auto", False, select=[1])


STRIX_HALO_GPU = {"node": 1, "name": "gfx1151", "marketing_name": "Radeon 8060S Graphics", "vram_kb": 67108864, "integrated": True}
RX9070XT_GPU = {"node": 1, "name": "gfx1201", "marketing_name": "AMD Radeon RX 9070 XT", "vram_kb": 16695296}
DEBIAN_6_18 = {"release": "6.18.44-fc-v1300", "version": "#1 SMP", "distribution": "Debian", "distribution_version": "12"}


@pytest.mark.parametrize(
    "gpus, version, kernel, status, warned",
    [
        ([STRIX_HALO_GPU], "7.1.0", DEBIAN_6_18, "unsupported", True),
        ([STRIX_HALO_GPU], "7.2.3", DEBIAN_6_18, "supported", False),
        ([STRIX_HALO_GPU], "7.1.0", None, "unknown", True),  # no kernel facts: AMD's table cannot be read
        ([RX9070XT_GPU], "7.1.0", DEBIAN_6_18, "unknown", False),  # not a Ryzen AI Max: nothing to say
    ],
)
def test_gpu_environment_reports_amds_apu_kernel_verdict(gpus, version, kernel, status, warned):
    result = gpu_environment(gpus, version, kernel=kernel)
    assert result["apu_kernel"]["status"] == status
    assert any("gfx1151: AMD" in warning for warning in result["warnings"]) is warned


@pytest.mark.parametrize(
    "gfx, version, official, fragment",
    [
        ("gfx1201", "6.4.0", False, "AMD supports it from ROCm 6.4.1 on, not on 6.4.0"),  # relnotes_641
        ("gfx1101", "6.4.0", False, "from ROCm 6.4.1 on"),
        ("gfx1201", "6.4.1", True, "officially supported on ROCm 6.4"),
        ("gfx1201", "6.4", True, "officially supported on ROCm 6.4"),  # a bare line names no point release
        ("gfx1100", "6.4.0", True, "officially supported on ROCm 6.4"),
        ("gfx1201", "7.1.0", True, "officially supported on ROCm 7.1"),
    ],
)
def test_official_support_from_the_point_release_amd_added_it(gfx, version, official, fragment):
    result = gpu_support(gfx, version)
    assert result["official"] is official and fragment in result["reason"], result["reason"]

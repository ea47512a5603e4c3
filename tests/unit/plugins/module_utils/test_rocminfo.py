# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os
import random
import re

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils.rocminfo import (
    APU_GFX_TARGETS,
    ERROR_HINTS,
    ERROR_KINDS,
    RocminfoParseError,
    gpu_is_integrated,
    make_error,
    parse_rocminfo,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "rocminfo")
with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as _handle:
    EXPECTED = json.load(_handle)
CAPTURES = sorted(EXPECTED)
WITH_AGENTS = [name for name in CAPTURES if EXPECTED[name]["agents"]]
AGENT_KEYS = ("node", "type", "name", "marketing_name", "compute_units", "uuid", "chip_id", "isa", "vram_kb")
GIB_KB = 1024 * 1024


def load(name):
    # newline="" keeps the bytes as they are (no universal-newline translation)
    with open(os.path.join(FIXTURES, name), encoding="utf-8", newline="") as handle:
        return handle.read()


def facts(result):
    """The fields expected.json records, from a parse result."""
    return {
        "error": result["error"]["kind"] if result["error"] else None,
        "agents": [{k: a[k] for k in ("type", "name", "marketing_name", "compute_units", "node", "vram_kb")} for a in result["agents"]],
    }


def test_every_capture_has_a_fixture_and_expected_facts():
    on_disk = sorted(f for f in os.listdir(FIXTURES) if f.endswith(".txt"))
    assert on_disk == CAPTURES
    with open(os.path.join(FIXTURES, "SOURCES.md"), encoding="utf-8") as handle:
        sources = handle.read()
    for name in CAPTURES:
        assert "`%s`" % name in sources


@pytest.mark.parametrize("name", CAPTURES)
def test_capture_matches_expected(name):
    assert facts(parse_rocminfo(load(name))) == EXPECTED[name]


@pytest.mark.parametrize("name", CAPTURES)
def test_result_shape(name):
    result = parse_rocminfo(load(name))
    assert set(result) == {"runtime_version", "driver", "agents", "error"}
    for agent in result["agents"]:
        assert tuple(agent) == AGENT_KEYS
        assert isinstance(agent["isa"], list)
        assert isinstance(agent["marketing_name"], str)
    if result["agents"]:
        assert result["error"] is None
    else:
        assert set(result["error"]) == {"kind", "message", "hint"}
        assert result["error"]["kind"] in ERROR_KINDS
        assert result["error"]["hint"] == ERROR_HINTS[result["error"]["kind"]]


# runtime_version, driver and the per-agent fields expected.json does not hold
DETAILS = [
    ("01_mi300x_x4_epyc_2numa.txt", "1.1", {"state": "loaded", "version": None}, 2,
     {"uuid": "GPU-8d1457e2c20f59d2", "chip_id": 29857, "isa": ["amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"]}),
    ("02_mi25_gfx900_x7_threadripper.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"uuid": None, "chip_id": 26720, "isa": ["amdgcn-amd-amdhsa--gfx900:xnack-"]}),
    ("03_vega20_gfx906_x8_epyc_4numa_ansi.txt", "1.1", {"state": "loaded", "version": None}, 4,
     {"uuid": None, "chip_id": 26273, "isa": ["amdgcn-amd-amdhsa--gfx906"]}),
    ("04_rx6700xt_override_gfx1030_ansi.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"uuid": "GPU-XX", "chip_id": 0x73DF, "isa": ["amdgcn-amd-amdhsa--gfx1030"]}),
    ("05_wsl_rx7800xt_gfx1101.txt", "1.1", None, 1,
     {"uuid": "GPU-fa361c759788a037", "chip_id": 29822, "isa": ["amdgcn-amd-amdhsa--gfx1101", "amdgcn-amd-amdhsa--gfx11-generic"]}),
    ("06_rx7900xtx_gfx1100_rocm61.txt", "1.14", {"state": "loaded", "version": "6.10.5"}, 1,
     {"uuid": "GPU-69e905a91bab9202", "chip_id": 0x744C, "isa": ["amdgcn-amd-amdhsa--gfx1100"]}),
    ("07_strix_halo_gfx1151_with_aie_npu.txt", "1.18", {"state": "loaded", "version": None}, 1,
     {"uuid": "GPU-XX", "chip_id": 5510, "isa": ["amdgcn-amd-amdhsa--gfx1151", "amdgcn-amd-amdhsa--gfx11-generic"]}),
    ("07_strix_halo_gfx1151_with_aie_npu.txt", "1.18", {"state": "loaded", "version": None}, 2,
     {"uuid": "AIE-XX", "chip_id": 0, "isa": [], "type": "DSP", "vram_kb": None}),
    ("08_ryzen3500u_apu_gfx902_rocm2x.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"uuid": None, "chip_id": 0x15D8, "isa": ["amdgcn-amd-amdhsa--gfx902+xnack"], "vram_kb": None}),
    ("08_ryzen3500u_apu_gfx902_rocm2x.txt", "1.1", {"state": "loaded", "version": None}, 0,
     {"uuid": None, "chip_id": 0x15D8, "isa": []}),
    ("15_ryzen5600g_gfx90c_blank_marketing_name_truncated.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"uuid": "GPU-XX", "chip_id": 5688, "marketing_name": "", "isa": ["amdgcn-amd-amdhsa--gfx90c:xnack-"]}),
    ("16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt", "1.1", {"state": "loaded", "version": None}, 2,
     {"uuid": "GPU-XX", "chip_id": 0x164E, "isa": ["amdgcn-amd-amdhsa--gfx1036"]}),
    ("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt", "1.15", {"state": "loaded", "version": None}, 2,
     {"chip_id": 0x164E, "isa": ["amdgcn-amd-amdhsa--gfx1036", "amdgcn-amd-amdhsa--gfx10-3-generic"]}),
    ("22_radeon780m_gfx1103_apu_doc_mangled_headers.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"chip_id": 6400, "isa": ["amdgcn-amd-amdhsa--gfx1103"]}),
    ("30_rocminfo_docs_mi300x_gfx941_rst_indented.txt", "1.1", None, 1,
     {"uuid": "GPU-a8673551b40c6374", "chip_id": 29857, "isa": ["amdgcn-amd-amdhsa--gfx941:sramecc+:xnack-"]}),
    ("30_rocminfo_docs_mi300x_gfx941_rst_indented.txt", "1.1", None, 0,
     {"uuid": "CPU-XX", "chip_id": 0, "isa": [], "marketing_name": "AMD Ryzen 9 7950X 16-Core Processor\\"}),
    ("31_rx6750gre_gfx1031_rocm57.txt", "1.1", {"state": "loaded", "version": None}, 1,
     {"uuid": "GPU-XX", "chip_id": 0x73DF, "isa": ["amdgcn-amd-amdhsa--gfx1031"]}),
    ("12_err_rock_not_loaded_out_of_resources_rocm29.txt", None, {"state": "not_loaded", "version": None}, None, None),
    ("28_err_rock_module_not_live_mi250.txt", None, {"state": "not_live", "version": None}, None, None),
]


@pytest.mark.parametrize("name, runtime, driver, index, fields", DETAILS)
def test_capture_details(name, runtime, driver, index, fields):
    result = parse_rocminfo(load(name))
    assert result["runtime_version"] == runtime
    assert result["driver"] == driver
    if index is not None:
        agent = result["agents"][index]
        for key, value in fields.items():
            assert agent[key] == value, key


ERRORS = [
    ("10_err_kfd_cannot_allocate_out_of_resources_navi14.txt", "kfd_cannot_allocate_memory",
     "Unable to open /dev/kfd read-write: Cannot allocate memory"),
    ("12_err_rock_not_loaded_out_of_resources_rocm29.txt", "rock_not_loaded", "ROCk module is NOT loaded, possibly no GPU devices"),
    ("26_err_kfd_permission_denied_not_in_render_group.txt", "kfd_permission_denied", "Unable to open /dev/kfd read-write: Permission denied"),
    ("28_err_rock_module_not_live_mi250.txt", "rock_not_live", "ROCk module is NOT live, possibly no GPU devices"),
]


@pytest.mark.parametrize("name, kind, message", ERRORS)
def test_capture_error_message(name, kind, message):
    error = parse_rocminfo(load(name))["error"]
    assert error == {"kind": kind, "message": message, "hint": ERROR_HINTS[kind]}


HSA_OOR = ("Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. "
           "This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events.")

CRAFTED_ERRORS = [
    ("empty", "", "unknown", ""),
    ("whitespace only", " \n\r\n\t\n", "unknown", ""),
    ("not found", "bash: rocminfo: command not found\n", "unknown", "bash: rocminfo: command not found"),
    ("eperm", "ROCk module is loaded\nUnable to open /dev/kfd read-write: Operation not permitted\n"
     "root is member of render group\n", "kfd_operation_not_permitted", "Unable to open /dev/kfd read-write: Operation not permitted"),
    ("oor only", "ROCk module is loaded\nhsa api call failure at: /src/rocminfo/rocminfo.cc:1142\n" + HSA_OOR + "\n",
     "hsa_out_of_resources", HSA_OOR),
    ("enoent then oor", "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n"
     "hsa api call failure at: rocminfo.cc:1142\n" + HSA_OOR + "\n", "hsa_out_of_resources", HSA_OOR),
    ("segfault", "ROCk module version 6.8.5 is loaded\nSegmentation fault (core dumped)\n", "segfault", "Segmentation fault (core dumped)"),
    ("other hsa status", "ROCk module is loaded\nhsa api call failure at: rocminfo.cc:1102\n"
     "Call returned HSA_STATUS_ERROR: A generic error has occurred.\n", "unknown", "Call returned HSA_STATUS_ERROR: A generic error has occurred."),
    ("group line only", 'ROCk module is loaded\nbob is not member of "render" group, the default DRM access group.\n' + HSA_OOR + "\n",
     "kfd_permission_denied", 'bob is not member of "render" group, the default DRM access group.'),
    ("thunk wording", "hsaKmtOpenKFD: failed to open /dev/kfd: Permission denied\n", "kfd_permission_denied",
     "hsaKmtOpenKFD: failed to open /dev/kfd: Permission denied"),
    ("member line is no error", "ROCk module is loaded\nbob is member of render group\n" + HSA_OOR + "\n", "hsa_out_of_resources", HSA_OOR),
    ("enoent alone", "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n", "unknown",
     "Unable to open /dev/kfd read-write: No such file or directory"),
    ("not loaded beats kfd", "ROCk module is NOT loaded, possibly no GPU devices\n"
     "Unable to open /dev/kfd read-write: Permission denied\n", "rock_not_loaded", "ROCk module is NOT loaded, possibly no GPU devices"),
    ("kfd beats oor", "\x1b[37mROCk module is loaded\x1b[0m\n\x1b[31mUnable to open /dev/kfd read-write: Permission denied\x1b[0m\n"
     "hsa api call failure at: rocminfo.cc:1142\n" + HSA_OOR + "\n", "kfd_permission_denied", "Unable to open /dev/kfd read-write: Permission denied"),
    ("oor beats segfault", HSA_OOR + "\nSegmentation fault\n", "hsa_out_of_resources", HSA_OOR),
    ("lost ESC bytes", "[37mROCk module is NOT live, possibly no GPU devices[0m\n", "rock_not_live", "ROCk module is NOT live, possibly no GPU devices"),
    ("crlf", "ROCk module is loaded\r\nUnable to open /dev/kfd read-write: Permission denied\r\n", "kfd_permission_denied",
     "Unable to open /dev/kfd read-write: Permission denied"),
    ("headers only", "ROCk module is loaded\n=====================\nHSA System Attributes\n=====================\n"
     "Runtime Version:         1.1\n", "unknown", "ROCk module is loaded"),
]


@pytest.mark.parametrize("label, text, kind, message", CRAFTED_ERRORS, ids=[c[0] for c in CRAFTED_ERRORS])
def test_crafted_errors(label, text, kind, message):
    result = parse_rocminfo(text)
    assert result["agents"] == []
    assert result["error"]["kind"] == kind
    assert result["error"]["message"] == message
    assert result["error"]["hint"].startswith(ERROR_HINTS[kind])


def test_enoent_hint_mentions_devices():
    text = "Unable to open /dev/kfd read-write: No such file or directory\n" + HSA_OOR
    assert "--device /dev/kfd" in parse_rocminfo(text)["error"]["hint"].split("OUT_OF_RESOURCES")[-1]


@pytest.mark.parametrize("kind, words", [
    ("kfd_permission_denied", ["render", "video", "log in again"]),
    ("rock_not_loaded", ["modprobe amdgpu", "reboot", "DKMS", "Secure Boot"]),
    ("rock_not_live", ["dmesg", "reboot", "Secure Boot"]),
    ("kfd_cannot_allocate_memory", ["unsupported", "HSA_OVERRIDE_GFX_VERSION"]),
    ("hsa_out_of_resources", ["unsupported or masked", "HSA_OVERRIDE_GFX_VERSION", "render and video", "10.3.0", "11.0.0"]),
    ("kfd_operation_not_permitted", ["--device /dev/kfd"]),
    ("segfault", ["ROCR_VISIBLE_DEVICES"]),
])
def test_hints_say_what_to_do(kind, words):
    for word in words:
        assert word in ERROR_HINTS[kind]


def test_every_kind_has_a_hint():
    for kind in ERROR_KINDS:
        assert ERROR_HINTS[kind]
    assert make_error("something-new", None) == {"kind": "something-new", "message": "", "hint": ERROR_HINTS["unknown"]}


def test_not_loaded_banner_followed_by_agents_is_no_error():
    text = load("06_rx7900xtx_gfx1100_rocm61.txt").replace(
        "ROCk module version 6.10.5 is loaded", "ROCk module is NOT loaded, possibly no GPU devices")
    result = parse_rocminfo(text)
    assert result["error"] is None
    assert result["driver"] == {"state": "not_loaded", "version": None}
    assert facts(result)["agents"] == EXPECTED["06_rx7900xtx_gfx1100_rocm61.txt"]["agents"]


# ---------------------------------------------------------------- variants of every capture

def _lines(text):
    return text.split("\n")


def v_crlf(text):
    return text.replace("\n", "\r\n")


def v_cr(text):
    return text.replace("\n", "\r")


def v_indent8(text):
    return "\n".join(("        " + ln) if ln else ln for ln in _lines(text))


def v_tabs(text):
    return "\n".join(("\t" + ln) if ln else ln for ln in _lines(text))


def v_unpadded(text):
    return "\n".join(ln.rstrip() for ln in _lines(text))


def v_flattened(text):
    return "\n".join(ln.strip() for ln in _lines(text))


def v_ansi(text):
    return "\n".join("\x1b[37m%s\x1b[0m" % ln for ln in _lines(text))


def v_ansi_lost_esc(text):
    return "\n".join("[1;32m%s[0m" % ln for ln in _lines(text))


def v_scroll(text):
    return "\n".join("%s%s[%d/1815]" % (ln, " " * (i % 7), i) if i % 3 == 0 else ln for i, ln in enumerate(_lines(text)))


def v_no_pool_info(text):
    return "\n".join(ln for ln in _lines(text) if ln.strip() != "Pool Info:")


def v_no_pool_headers(text):
    return "\n".join(ln for ln in _lines(text) if not re.match(r"^\s*(Pool Info:|Pool \d+)\s*$", ln))


def v_no_isa_headers(text):
    return "\n".join(ln for ln in _lines(text) if not re.match(r"^\s*(ISA Info:|ISA \d+)\s*$", ln))


def v_no_agent_headers(text):
    return "\n".join(ln for ln in _lines(text) if not re.match(r"^\s*Agent \d+\s*$", ln))


def v_no_done(text):
    return "\n".join(ln for ln in _lines(text) if "*** Done ***" not in ln)


def v_blank_lines(text):
    return "\n\n".join(_lines(text))


def v_trailing_noise(text):
    return "sh: 1: lsmod: not found\nuser is member of render group\n" + text + "\n\x1b[0m$ \n"


def v_bytes(text):
    return text.encode("utf-8")


VARIANTS = [v_crlf, v_cr, v_indent8, v_tabs, v_unpadded, v_flattened, v_ansi, v_ansi_lost_esc, v_scroll,
            v_no_pool_info, v_no_pool_headers, v_no_isa_headers, v_no_agent_headers, v_no_done, v_blank_lines,
            v_trailing_noise, v_bytes]


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.__name__ for v in VARIANTS])
@pytest.mark.parametrize("name", CAPTURES)
def test_capture_variants_parse_alike(name, variant):
    original = parse_rocminfo(load(name))
    result = parse_rocminfo(variant(load(name)))
    assert facts(result) == EXPECTED[name]
    assert [a["uuid"] for a in result["agents"]] == [a["uuid"] for a in original["agents"]]
    assert [a["chip_id"] for a in result["agents"]] == [a["chip_id"] for a in original["agents"]]
    assert [a["isa"] for a in result["agents"]] == [a["isa"] for a in original["agents"]]
    assert result["runtime_version"] == original["runtime_version"]
    assert result["driver"] == original["driver"]


@pytest.mark.parametrize("name", WITH_AGENTS)
def test_truncation_at_every_line(name):
    """Every line-boundary truncation parses; agents seen so far are right as far as they go."""
    lines = load(name).split("\n")
    expected = EXPECTED[name]["agents"]
    full = parse_rocminfo(load(name))["agents"]
    for cut in range(len(lines) + 1):
        result = parse_rocminfo("\n".join(lines[:cut]))
        agents = result["agents"]
        assert len(agents) <= len(expected)
        assert (result["error"] is None) == bool(agents)
        for pos, agent in enumerate(agents):
            want = dict(expected[pos], uuid=full[pos]["uuid"], chip_id=full[pos]["chip_id"])
            complete = pos < len(agents) - 1
            for key, value in want.items():
                if complete:
                    assert agent[key] == value, (cut, pos, key)
                else:
                    assert agent[key] in (None, "", value), (cut, pos, key)
            assert agent["isa"] == full[pos]["isa"][:len(agent["isa"])]


def test_npu_agent_is_dsp_without_vram():
    agents = parse_rocminfo(load("07_strix_halo_gfx1151_with_aie_npu.txt"), details=True)["agents"]
    assert [(a["type"], a["node"]) for a in agents] == [("CPU", 0), ("GPU", 1), ("DSP", 0)]
    assert agents[2]["vram_kb"] is None
    assert agents[1]["memory_properties"] == ["APU"]
    assert agents[0]["memory_properties"] == []


def test_details_flag_only_adds_memory_properties():
    plain = parse_rocminfo(load("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt"))
    rich = parse_rocminfo(load("19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt"), details=True)
    assert [a["memory_properties"] for a in rich["agents"]] == [[], [], ["APU"]]
    for agent in rich["agents"]:
        del agent["memory_properties"]
    assert rich == plain


GPU_TEMPLATE = """*******
Agent {n}
*******
  Name:                    {name}
  Uuid:                    GPU-XX
  Marketing Name:          {mkt}
  Node:                    {n}
  Device Type:             GPU
  Chip ID:                 {chip}
  Compute Unit:            {cu}
  Pool Info:
    Pool 1
      Segment:                 {seg1}
      Size:                    {size1}
    Pool 2
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    {size2}
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--{name}
"""


@pytest.mark.parametrize("seg1, size1, size2, chip, cu, want_vram, want_chip, want_cu", [
    ("GLOBAL; FLAGS: COARSE GRAINED", "1024(0x400) KB", "2048(0x800) KB", "29772(0x744c)", "96", 1024, 29772, 96),
    ("GLOBAL; FLAGS: KERNARG, COARSE GRAINED", "1024(0x400) KB", "2048(0x800) KB", "29772(0x744c", "96", 2048, 29772, 96),
    ("GLOBAL; FLAGS: EXTENDED FINE GRAINED", "1024 KB", "1056364836(0x3ef6c424) KB", "0x744c", "96(0x60)", 1056364836, 0x744C, 96),
    ("GLOBAL; FLAGS:", "1024 KB", "2048KB", "garbage", "", 2048, None, None),
    ("GLOBAL;   FLAGS:   COARSE GRAINED\\", "7 KB", "8 KB", "1", "2", 7, 1, 2),
    ("GROUP", "64(0x40) KB", "not a number", "1", "2", None, 1, 2),
])
def test_pool_and_number_forms(seg1, size1, size2, chip, cu, want_vram, want_chip, want_cu):
    text = GPU_TEMPLATE.format(n=1, name="gfx1100", mkt="X", chip=chip, cu=cu, seg1=seg1, size1=size1, size2=size2)
    agent = parse_rocminfo(text)["agents"][0]
    assert (agent["vram_kb"], agent["chip_id"], agent["compute_units"]) == (want_vram, want_chip, want_cu)


def test_eight_gpu_server_and_marker_lines():
    text = "ROCk module version 6.8.5 is loaded\n==========\nHSA Agents\n==========\n"
    text += "".join(GPU_TEMPLATE.format(n=i, name="gfx90a", mkt="AMD Instinct MI250X", chip="29704(0x7408)", cu="110",
                                        seg1="GLOBAL; FLAGS: COARSE GRAINED", size1="67092480(0x3ffc000) KB", size2="1 KB")
                    for i in range(1, 9))
    text += "*** Done ***\n"
    agents = parse_rocminfo(text)["agents"]
    assert [a["node"] for a in agents] == list(range(1, 9))
    assert {a["vram_kb"] for a in agents} == {67092480}
    assert all(a["isa"] == ["amdgcn-amd-amdhsa--gfx90a"] for a in agents)


def test_alloc_recommended_granule_overflow_and_scroll_marker_on_header():
    text = load("06_rx7900xtx_gfx1100_rocm61.txt").replace("Agent 2                  ", "Agent 2                  [12/1815]")
    assert facts(parse_rocminfo(text)) == EXPECTED["06_rx7900xtx_gfx1100_rocm61.txt"]


def test_text_after_done_is_not_an_agent():
    text = load("06_rx7900xtx_gfx1100_rocm61.txt") + "\n*******\n  Name:  bogus\n  Device Type: GPU\n"
    assert len(parse_rocminfo(text)["agents"]) == 2
    twice = load("06_rx7900xtx_gfx1100_rocm61.txt") + "\n" + load("06_rx7900xtx_gfx1100_rocm61.txt")
    assert len(parse_rocminfo(twice)["agents"]) == 4  # explicit "Agent N" headers still count
    text = load("06_rx7900xtx_gfx1100_rocm61.txt") + "\nhsa api call failure at: x\n  Device Type: GPU\n"
    assert len(parse_rocminfo(text)["agents"]) == 2


@pytest.mark.parametrize("value", [None, 1, 1.5, ["ROCk module is loaded"], {"a": 1}, object()])
def test_non_text_raises_documented_exception(value):
    with pytest.raises(RocminfoParseError):
        parse_rocminfo(value)
    assert issubclass(RocminfoParseError, ValueError)


def test_undecodable_bytes_are_accepted():
    result = parse_rocminfo(b"\xff\xfe\x00garbage\x80\n")
    assert result["agents"] == [] and result["error"]["kind"] == "unknown"


# ---------------------------------------------------------------- fuzz

def _check_shape(result):
    assert set(result) == {"runtime_version", "driver", "agents", "error"}
    assert result["runtime_version"] is None or isinstance(result["runtime_version"], str)
    assert result["driver"] is None or result["driver"]["state"] in ("loaded", "not_loaded", "not_live")
    for agent in result["agents"]:
        assert tuple(agent) == AGENT_KEYS
        for key in ("node", "compute_units", "chip_id", "vram_kb"):
            assert agent[key] is None or isinstance(agent[key], int)
        assert isinstance(agent["marketing_name"], str)
        assert all(isinstance(i, str) for i in agent["isa"])
    if result["agents"]:
        assert result["error"] is None
    else:
        assert result["error"]["kind"] in ERROR_KINDS
        assert isinstance(result["error"]["message"], str)


def _mutations(rng):
    texts = [load(name) for name in CAPTURES]
    alphabet = "ROCkAgent*:=\n\r\t \x1b[0m()0x1234567890GLOBAL;FLAGS COARSE GRAINED Name Node Size Pool ISA Device Type GPU CPU"
    for _round in range(1500):
        yield bytes(rng.getrandbits(8) for _byte in range(rng.randint(0, 400))).decode("latin-1")
        yield "".join(rng.choice(alphabet) for _char in range(rng.randint(0, 600)))
    for _round in range(1500):
        text = rng.choice(texts)
        lines = text.split("\n")
        op = rng.randrange(6)
        if op == 0:
            rng.shuffle(lines)
            yield "\n".join(lines)
        elif op == 1:
            yield text[:rng.randint(0, len(text))]
        elif op == 2:
            start = rng.randint(0, len(text))
            yield text[start:start + rng.randint(0, 3000)]
        elif op == 3:
            yield "\n".join(ln for ln in lines if rng.random() > 0.3)
        elif op == 4:
            chars = list(text)
            for _edit in range(rng.randint(1, 50)):
                chars[rng.randrange(len(chars))] = chr(rng.choice([0, 7, 13, 27, 58, 0x85, 0x2028, 0xD800, 0xFFFF, rng.randint(0, 0x10FFFF)]))
            yield "".join(chars)
        else:
            mixed = [ln for t in rng.sample(texts, 2) for ln in t.split("\n")]
            yield "\n".join(rng.sample(mixed, min(len(mixed), rng.randint(1, 400))))


def test_fuzz_never_raises():
    rng = random.Random(20240917)
    count = 0
    for text in _mutations(rng):
        _check_shape(parse_rocminfo(text))
        count += 1
    assert count >= 4500


# ---------------------------------------------------------------- integrated rule

@pytest.mark.parametrize("name, vram_kb, cu, props, gtt_kb, want", [
    ("gfx1100", 25149440, 96, [], None, False),           # RX 7900 XTX
    ("gfx1030", 16760832, 72, None, None, False),         # RX 6800 XT
    ("gfx1030", 12566528, 40, None, None, False),         # RX 6700 XT under override
    ("gfx803", 8388608, 36, None, None, False),           # RX 580
    ("gfx942", 201310208, 304, None, None, False),        # MI300X
    ("gfx900", 16760832, 64, None, None, False),          # MI25
    ("gfx1036", 524288, 2, None, None, True),             # Raphael iGPU
    ("gfx90c", 4194304, 7, None, None, True),             # 5600G
    ("gfx902", None, 11, None, None, True),               # 3500U, no VRAM pool
    ("gfx1103", 7796616, 12, None, None, True),           # 780M
    ("gfx1151", 67108864, 40, ["APU"], None, True),       # Strix Halo
    ("gfx1151", 67108864, 40, None, None, True),          # Strix Halo, older rocminfo
    ("gfx1100", 8388608, 12, None, None, True),           # 780M behind HSA_OVERRIDE_GFX_VERSION=11.0.0
    ("gfx1030", 4194304, 16, None, None, True),           # 4 GiB, 16 CUs
    ("gfx1034", 4194304, 22, None, None, False),          # 4 GiB but 22 CUs
    ("gfx1034", 4194304, 22, None, 16 * GIB_KB, True),    # ollama GTT rule
    ("gfx1100", 25149440, 96, None, 16 * GIB_KB, False),
    ("gfx1100", 25149440, 96, ["APU"], None, True),
    ("gfx90c:xnack-", 4194304, 7, None, None, True),
    (None, 25149440, None, None, None, False),
    (None, 0, None, None, None, True),
])
def test_gpu_is_integrated(name, vram_kb, cu, props, gtt_kb, want):
    assert gpu_is_integrated(name, vram_kb, cu, memory_properties=props, gtt_kb=gtt_kb) is want


def test_apu_targets_are_lowercase_gfx_names():
    assert all(re.match(r"^gfx[0-9a-f]+$", t) for t in APU_GFX_TARGETS)

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which SDPA kernel runs (support_matrix.SDPA_KERNELS through attention.sdpa_kernel), per target and torch line."""

from __future__ import annotations

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils.attention import (
    AttentionPolicyError,
    attention_backend,
    sdpa_kernel,
)

EXPERIMENTAL = {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"}

# N = AOTriton kernels as shipped, E = only with TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1, M = math kernel,
# U = experimental because its kernels are wrong on that line (never switched on: math).
# Written out by hand from the sources in support_matrix.SOURCES (not derived from the data under test).
LINES = ("2.2.2", "2.3.1", "2.4.0", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1+rocm6.4", "2.10.0", "2.11.0", "2.12.0",
         "2.13.0+rocm7.2", "2.14.0")
TABLE = {
    # torch:   2.2 2.3 2.4 2.5 2.6 2.7 2.8 2.9 2.10 2.11 2.12 2.13 2.14
    "gfx906": "M M M M M M M M M M M M M",
    "gfx908": "M M M M M M M M M M M M M",
    "gfx90a": "M N N N N N N N N N N N N",
    "gfx942": "M N N N N N N N N N N N N",
    "gfx950": "M M M M M E N N N N N N N",
    "gfx1010": "M M M M M M M M M M M M M",
    "gfx1030": "M M M M M M M M M M M M M",
    "gfx1100": "M M M E E N N U N N N N N",
    "gfx1101": "M M M M M M E E E E E E E",
    "gfx1102": "M M M M M M M E E E E E E",
    "gfx1103": "M M M M M M M M E E E E E",
    "gfx1150": "M M M M M M M E E E E E E",
    "gfx1151": "M M M M M M M E E E E N N",
    "gfx1152": "M M M M M M M M M E E E E",
    "gfx1200": "M M M M M M M E E E E E E",
    "gfx1201": "M M M M M E N N N N N N N",
}
CELLS = [(target, torch, cell) for target, row in TABLE.items() for torch, cell in zip(LINES, row.split())]


@pytest.mark.parametrize("target, torch, cell", CELLS, ids=["%s-%s" % cell[:2] for cell in CELLS])
def test_kernel_per_target_and_torch_line(target, torch, cell):
    on = sdpa_kernel([target], torch)
    off = sdpa_kernel([target], torch, experimental=False)
    if cell == "N":
        assert on["kernel"] == off["kernel"] == "flash" and on["env"] == off["env"] == {}, on
    elif cell == "E":
        assert on == {"kernel": "flash", "env": EXPERIMENTAL, "reason": on["reason"]} and "experimental" in on["reason"]
        assert off["kernel"] == "math" and off["env"] == {} and "experimental kernels are off" in off["reason"]
    elif cell == "U":
        assert on == off and on["kernel"] == "math" and on["env"] == {}, on
        assert "wrong results" in on["reason"]
    else:
        assert on == off and on["kernel"] == "math" and on["env"] == {}, on
        assert "math kernel" in on["reason"]


def test_table_covers_every_data_row():
    covered = {sm.sdpa_kernels_for_torch(torch)["torch"] for torch in LINES if sm.sdpa_kernels_for_torch(torch)}
    assert covered == {row["torch"] for row in sm.SDPA_KERNELS}
    listed = {t for row in sm.SDPA_KERNELS for t in row["native"] + row["experimental"]}
    assert listed <= set(TABLE) | {"gfx1153"}


@pytest.mark.parametrize("row", sm.SDPA_KERNELS, ids=[row["torch"] for row in sm.SDPA_KERNELS])
def test_data_rows_are_sourced_and_consistent(row):
    assert set(row) - {"unsafe"} == {"torch", "aotriton", "native", "experimental", "verified", "sources", "notes"}
    assert set(row.get("unsafe", ())) <= set(row["experimental"])
    assert isinstance(row["verified"], bool) and row["notes"]
    assert row["sources"] and all(name in sm.SOURCES for name in row["sources"])
    assert not set(row["native"]) & set(row["experimental"])
    assert all(t.startswith("gfx") for t in row["native"] + row["experimental"])
    assert "gfx1030" not in row["native"] + row["experimental"]  # RDNA2: math everywhere (ROCm/aotriton#118)


def test_rows_ascend_and_start_where_aotriton_does():
    keys = [tuple(int(p) for p in row["torch"].split(".")) for row in sm.SDPA_KERNELS]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert sm.SDPA_KERNELS[0]["torch"] == sm.SDPA_KERNELS_BEFORE == "2.3"
    assert sm.AOTRITON_EXPERIMENTAL_ENV == EXPERIMENTAL


@pytest.mark.parametrize("gpus, torch, kernel, env, fragment", [
    # RDNA2 under the override runs gfx1030 code: math (the RX 6700 XT case)
    ([{"name": "gfx1031", "override": "10.3.0"}], "2.9.1", "math", {}, "gfx1030"),
    # RX 7800 XT borrowing gfx1100: wrong kernels on 2.9 (AOTriton 0.11b: math), native from 2.10
    ([{"name": "gfx1101", "override": "11.0.0"}], "2.9.1", "math", {}, "gfx1100"),
    # RX 7800 XT on its own target: experimental on 2.9, switched on
    ([{"name": "gfx1101"}], "2.9.1", "flash", EXPERIMENTAL, "gfx1101"),
    ([{"name": "gfx1101", "override": "11.0.0"}], "2.10.0", "flash", {}, "gfx1100"),
    # torch 2.13 (AOTriton 0.12b): gfx1100 and gfx1151 native, gfx1101 still experimental, RDNA2 still math
    ([{"name": "gfx1101", "override": "11.0.0"}], "2.13.0+rocm7.2", "flash", {}, "AOTriton 0.12b"),
    ([{"name": "gfx1151"}], "2.13.0", "flash", {}, "gfx1151"),
    ([{"name": "gfx1101"}], "2.13.0", "flash", EXPERIMENTAL, "gfx1101"),
    ([{"name": "gfx1031", "override": "10.3.0"}], "2.13.0", "math", {}, "gfx1030"),
    # a mixed rig: one math GPU makes the process math (the smallest card sizes the plan anyway)
    (["gfx1100", "gfx1030"], "2.10.0", "math", {}, "gfx1030"),
    (["gfx942", "gfx1101"], "2.9.1", "flash", EXPERIMENTAL, "gfx1101"),
    (["gfx942", "gfx1100"], "2.9.1", "math", {}, "wrong results"),
    ([{"name": "gfx1100"}, {"name": "gfx1036", "visible": False}], "2.8.0", "flash", {}, "gfx1100"),
    ([], "2.9.1", "flash", {}, "CPU"),
    (["gfx1100"], None, "math", {}, "unknown"),
    (["gfx942"], "2.2.2", "math", {}, "no AOTriton"),
])
def test_attention_backend_carries_the_kernel_and_its_env(gpus, torch, kernel, env, fragment):
    result = attention_backend(gpus, requested="sdpa", torch_version=torch)
    assert result["backend"] == "sdpa" and result["sdpa_kernel"] == kernel, result
    assert result["env"] == env and fragment in result["sdpa_reason"], result


def test_experimental_env_joins_the_triton_switch_only_for_sdpa():
    triton = {"installed": True, "triton": True}
    fa2 = attention_backend(["gfx1100"], triton, "auto", "2.10.0")
    assert fa2["backend"] == "fa2" and fa2["env"] == {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
    assert fa2["sdpa_kernel"] is None and fa2["sdpa_reason"] == ""
    auto = attention_backend(["gfx1101"], None, "auto", "2.9.1")
    assert auto["backend"] == "sdpa" and auto["env"] == EXPERIMENTAL and auto["sdpa_kernel"] == "flash"
    off = attention_backend(["gfx1101"], None, "auto", "2.9.1", aotriton_experimental=False)
    assert off["env"] == {} and off["sdpa_kernel"] == "math"
    eager = attention_backend(["gfx1101"], None, "disabled", "2.9.1")
    assert eager["env"] == {} and eager["sdpa_kernel"] is None


def test_result_env_never_aliases_the_data():
    result = attention_backend(["gfx1101"], requested="sdpa", torch_version="2.9.1")
    result["env"]["X"] = "1"
    assert sm.AOTRITON_EXPERIMENTAL_ENV == EXPERIMENTAL


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": ["gfx1100"], "aotriton_experimental": "yes"}, "true or false"),
    ({"gpus": ["gfx1100"], "torch_version": "2.x"}, "not a version"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(AttentionPolicyError, match=message):
        attention_backend(**kwargs)


@pytest.mark.parametrize("torch", ["latest", "2", "x.9"])
def test_lookup_rejects_what_is_no_version(torch):
    with pytest.raises(ValueError, match="X.Y"):
        sm.sdpa_kernels_for_torch(torch)

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests of plugins/module_utils/attention.py (pure function, no Ansible)."""

from __future__ import annotations

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils.attention import (
    AttentionPolicyError,
    attention_backend,
    effective_target,
)

CK = {"installed": True, "ck": True, "triton": False, "version": "2.8.0"}
TRITON = {"installed": True, "ck": False, "triton": True, "version": "2.8.0"}
BOTH = {"installed": True, "ck": True, "triton": True, "version": "2.8.0"}
NONE = None
TRITON_ENV = {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}

# (id, gpus, flash_attn, requested, torch, expected backend, expected env, reason fragment, fallback)
ROWS = [
    ("mi300-ck-auto", ["gfx942"], CK, "auto", None, "fa2", {}, "CK backend", False),
    ("mi250-ck-fa2", ["gfx90a:sramecc+:xnack-"], CK, "fa2", None, "fa2", {}, "CK backend", False),
    ("mi355-ck", ["gfx950"], CK, "auto", None, "fa2", {}, "gfx950", False),
    ("mi300-both-prefers-ck", ["gfx942"], BOTH, "auto", None, "fa2", {}, "CK backend", False),
    ("mi300-triton-only", ["gfx942"], TRITON, "auto", None, "fa2", TRITON_ENV, "Triton backend", False),
    ("rdna3-triton", ["gfx1100"], TRITON, "auto", None, "fa2", TRITON_ENV, "Triton backend", False),
    ("rdna3-navi32-triton", ["gfx1101"], TRITON, "fa2", None, "fa2", TRITON_ENV, "gfx1101", False),
    ("rdna3-ck-only-build", ["gfx1100"], CK, "auto", None, "sdpa", {}, "only the CK backend", False),
    ("rdna3-ck-only-fa2-request", ["gfx1100"], CK, "fa2", None, "sdpa", {}, "fa2 requested but", True),
    ("rdna3-not-installed", ["gfx1100"], NONE, "auto", None, "sdpa", {}, "not installed", False),
    ("rdna3-not-installed-fa2", ["gfx1100"], NONE, "fa2", None, "sdpa", {}, "llamafactory_flash_attn_install", True),
    ("rdna2-no-build", ["gfx1030"], BOTH, "auto", None, "sdpa", {}, "no ROCm FlashAttention-2 build exists for gfx1030", False),
    ("rdna4-no-build", ["gfx1201"], TRITON, "fa2", None, "sdpa", {}, "gfx1201", True),
    ("apu-no-build", ["gfx1103"], TRITON, "auto", None, "sdpa", {}, "gfx1103", False),
    ("mi100-no-build", ["gfx908"], CK, "auto", None, "sdpa", {}, "gfx908", False),
    ("cpu-only", [], NONE, "auto", None, "sdpa", {}, "CPU-only", False),
    ("cpu-only-fa2", [], BOTH, "fa2", None, "sdpa", {}, "CPU-only", True),
    ("cpu-only-disabled", [], NONE, "disabled", None, "disabled", {}, "on request", False),
    ("disabled-on-request", ["gfx942"], CK, "disabled", None, "disabled", {}, "on request", False),
    ("sdpa-on-request", ["gfx942"], CK, "sdpa", None, "sdpa", {}, "on request", False),
    ("sdpa-request-old-torch", ["gfx942"], CK, "sdpa", "2.1.1", "disabled", {}, "eager", True),
    ("old-torch-auto", ["gfx1030"], NONE, "auto", "2.0.1+rocm5.4.2", "disabled", {}, "eager", False),
    ("new-torch-auto", ["gfx1030"], NONE, "auto", "2.9.1+rocm6.4", "sdpa", {}, "using sdpa", False),
    ("mixed-rig-rdna3-rdna2", ["gfx1100", "gfx1030"], TRITON, "auto", None, "sdpa", {}, "gfx1030", False),
    ("mixed-rig-mi300-rdna3-ck", ["gfx942", "gfx1100"], CK, "auto", None, "sdpa", {}, "gfx1100", False),
    ("mixed-rig-mi300-rdna3-triton", ["gfx942", "gfx1100"], TRITON, "auto", None, "fa2", TRITON_ENV, "Triton", False),
    ("two-7900xtx", ["gfx1100", "gfx1100"], TRITON, "auto", None, "fa2", TRITON_ENV, "gfx1100", False),
    # gpu_env's GPU dicts: overridden GPUs count as the target they borrow, hidden ones are ignored
    ("gfx1031-overridden-to-gfx1030", [{"name": "gfx1031", "override": "10.3.0", "visible": True}], TRITON, "auto",
     None, "sdpa", {}, "gfx1030", False),
    ("gfx1101-overridden-to-gfx1100", [{"name": "gfx1101", "override": "11.0.0", "visible": True}], TRITON, "auto",
     None, "fa2", TRITON_ENV, "gfx1100", False),
    ("igp-hidden", [{"name": "gfx1100", "override": None, "visible": True},
                    {"name": "gfx1036", "override": None, "visible": False}], TRITON, "auto", None, "fa2", TRITON_ENV,
     "Triton", False),
    ("rocm-facts-dict", [{"name": "gfx942:sramecc+:xnack-", "node": 1}], CK, "auto", None, "fa2", {}, "gfx942", False),
    ("all-hidden-is-cpu", [{"name": "gfx803", "visible": False}], CK, "auto", None, "sdpa", {}, "CPU-only", False),
    ("installed-false-flag", ["gfx942"], {"installed": False, "ck": True}, "auto", None, "sdpa", {}, "not installed", False),
    ("case-insensitive-request", ["gfx942"], CK, "FA2", None, "fa2", {}, "CK", False),
]


@pytest.mark.parametrize("gpus, flash_attn, requested, torch, backend, env, fragment, fallback",
                         [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_policy_table(gpus, flash_attn, requested, torch, backend, env, fragment, fallback):
    result = attention_backend(gpus, flash_attn=flash_attn, requested=requested, torch_version=torch)
    assert result["backend"] == backend, result
    assert result["env"] == env, result
    assert fragment in result["reason"], result["reason"]
    assert result["fallback"] is fallback, result
    assert result["requested"] == requested.lower()
    assert set(result) == {"backend", "requested", "reason", "env", "gpus", "fallback", "sdpa_kernel", "sdpa_reason"}


def test_table_is_large_enough():
    assert len(ROWS) >= 15


def test_result_never_aliases_the_module_constant():
    result = attention_backend(["gfx1100"], TRITON)
    result["env"]["X"] = "1"
    assert attention_backend(["gfx1100"], TRITON)["env"] == TRITON_ENV


def test_per_gpu_explanation():
    result = attention_backend([{"name": "gfx1031", "override": "10.3.0"}, "gfx942"], CK)
    assert result["gpus"] == [
        {"target": "gfx1030", "reported": "gfx1031", "fa2_routes": []},
        {"target": "gfx942", "reported": "gfx942", "fa2_routes": ["ck", "triton"]},
    ]


@pytest.mark.parametrize("gpu, expected", [
    ("gfx1100", ("gfx1100", "gfx1100")),
    ("GFX90A:xnack-", ("gfx90a", "gfx90a")),
    ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", ("gfx942", "gfx942")),
    ({"name": "gfx1032", "override": "10.3.0"}, ("gfx1030", "gfx1032")),
    ({"name": "gfx90c", "override": "9.0.0"}, ("gfx900", "gfx90c")),
    ({"name": "gfx1100", "visible": False}, None),
])
def test_effective_target(gpu, expected):
    assert effective_target(gpu) == expected


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": ["gfx1100"], "requested": "flash"}, "not one of"),
    ({"gpus": ["gfx1100"], "requested": None}, "not one of"),
    ({"gpus": "gfx1100"}, "must be a list"),
    ({"gpus": ["nvidia"]}, "not a gfx target"),
    ({"gpus": [1100]}, "must be a string"),
    ({"gpus": [{"node": 1}]}, "without 'name'"),
    ({"gpus": [{"name": "gfx1031", "override": "10.3"}]}, "major.minor.stepping"),
    ({"gpus": ["gfx1100"], "flash_attn": True}, "which backend"),
    ({"gpus": ["gfx1100"], "flash_attn": "yes"}, "must be a dict"),
    ({"gpus": ["gfx1100"], "torch_version": "latest"}, "not a version"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(AttentionPolicyError, match=message):
        attention_backend(**kwargs)


# ansible_facts.rocm.gpus as they are + the gpu_env module's env dict
RIG = [
    {"node": 1, "index": 0, "name": "gfx1100", "uuid": "a1b2c3d4e5f60718"},
    {"node": 2, "index": 1, "name": "gfx1101", "uuid": "1122334455667788"},
    {"node": 3, "index": 2, "name": "gfx1036", "uuid": None, "integrated": True},
]


@pytest.mark.parametrize("gpus, env, flash_attn, backend, targets", [
    ([RIG[0]], {}, TRITON, "fa2", ["gfx1100"]),
    ([{"node": 1, "name": "gfx1031"}], {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}, TRITON, "sdpa", ["gfx1030"]),
    ([{"node": 1, "name": "gfx1101"}], {"HSA_OVERRIDE_GFX_VERSION_1": "11.0.0"}, TRITON, "fa2", ["gfx1100"]),
    (RIG, {"ROCR_VISIBLE_DEVICES": "GPU-a1b2c3d4e5f60718,GPU-1122334455667788"}, TRITON, "fa2", ["gfx1100", "gfx1101"]),
    (RIG, {"ROCR_VISIBLE_DEVICES": "0"}, TRITON, "fa2", ["gfx1100"]),
    (RIG, {}, TRITON, "sdpa", ["gfx1100", "gfx1101", "gfx1036"]),
    (RIG, {"ROCR_VISIBLE_DEVICES": "2"}, TRITON, "sdpa", ["gfx1036"]),
])
def test_environment_is_applied(gpus, env, flash_attn, backend, targets):
    result = attention_backend(gpus, flash_attn, env=env)
    assert result["backend"] == backend, result
    assert [g["target"] for g in result["gpus"]] == targets


def test_environment_must_be_a_dict():
    with pytest.raises(AttentionPolicyError, match="env must be a dict"):
        attention_backend([RIG[0]], env="HSA_OVERRIDE_GFX_VERSION=10.3.0")


def test_none_gpus_is_cpu_only():
    assert attention_backend(None)["backend"] == "sdpa"

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of plugins/filter/attention.py and its sidecar documentation."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter import attention as attention_filter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FILTERS = attention_filter.FilterModule().filters()


def test_filter_names():
    assert set(FILTERS) == {"attention_backend"}


@pytest.mark.parametrize("args, backend, env", [
    ((["gfx1100"], {"installed": True, "triton": True}, "auto"), "fa2", {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}),
    ((["gfx942"], {"installed": True, "ck": True}), "fa2", {}),
    (([{"name": "gfx1031", "override": "10.3.0", "visible": True}],), "sdpa", {}),
    (([],), "sdpa", {}),
    ((["gfx942"], None, "disabled"), "disabled", {}),
    ((["gfx1101"], None, "auto", "2.9.1+rocm6.4"), "sdpa", {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"}),
    ((["gfx1101"], None, "auto", "2.9.1+rocm6.4", None, False), "sdpa", {}),
    ((["gfx1100"], None, "auto", "2.9.1+rocm6.4"), "sdpa", {}),  # 0.11b's gfx1100 kernels give wrong results
])
def test_filter_applies_the_policy(args, backend, env):
    result = FILTERS["attention_backend"](*args)
    assert result["backend"] == backend
    assert result["env"] == env


def test_filter_takes_rocm_facts_and_the_gpu_env_dict():
    gpus = [{"node": 1, "index": 0, "name": "gfx1031", "uuid": None}]
    result = FILTERS["attention_backend"](gpus, None, "auto", "2.9.1", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert result["gpus"] == [{"target": "gfx1030", "reported": "gfx1031", "fa2_routes": []}]


def test_filter_error_names_the_fqcn():
    with pytest.raises(AnsibleFilterError, match=r"^radeonlab\.llm\.attention_backend: .*not one of"):
        FILTERS["attention_backend"](["gfx1100"], None, "eager")


def test_sidecar_documents_the_filter():
    with open(os.path.join(ROOT, "plugins", "filter", "attention_backend.yml"), encoding="utf-8") as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == "attention_backend"
    options = doc["DOCUMENTATION"]["options"]
    assert set(options) == {"_input", "flash_attn", "requested", "torch_version", "env", "aotriton_experimental"}
    assert options["requested"]["choices"] == ["auto", "disabled", "sdpa", "fa2"]
    assert doc["DOCUMENTATION"]["positional"] == "_input, flash_attn, requested, torch_version, env, aotriton_experimental"
    assert "_value" in doc["RETURN"]

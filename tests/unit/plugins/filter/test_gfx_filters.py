# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of plugins/filter/gfx.py and its sidecar documentation."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter import gfx as gfx_filter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FILTERS = gfx_filter.FilterModule().filters()


def test_filter_names():
    assert set(FILTERS) == {"hsa_override", "gpu_support", "torch_for_rocm", "gpu_env", "rocm_apt_lines"}


@pytest.mark.parametrize("gfx, rocm, expected", [
    ("gfx1031", "6.2", "10.3.0"),
    ("GFX1101", "6.1.2", "11.0.0"),
    ("gfx1100", "6.4", ""),
    ("gfx90a:sramecc+:xnack-", "6.2.4", ""),
    ("gfx90c", "7.0.0", "9.0.0"),
])
def test_hsa_override(gfx, rocm, expected):
    assert FILTERS["hsa_override"](gfx, rocm) == expected


@pytest.mark.parametrize("gfx, rocm, words", [
    ("gfx803", "6.4", "unsupported GPU"),
    ("gfx10xx", "6.4", "malformed gfx target"),
    ("gfx1031", "six", "malformed ROCm version"),
])
def test_hsa_override_errors_name_the_fqcn(gfx, rocm, words):
    with pytest.raises(AnsibleFilterError) as info:
        FILTERS["hsa_override"](gfx, rocm)
    assert "radeonlab.llm.hsa_override" in str(info.value) and words in str(info.value)


def test_gpu_support_does_not_fail_for_unsupported():
    support = FILTERS["gpu_support"]("gfx803", "6.4")
    assert support["status"] == "unsupported" and "pre-Vega" in support["reason"]
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm.gpu_support"):
        FILTERS["gpu_support"]("", "6.4")


def test_torch_for_rocm():
    row = FILTERS["torch_for_rocm"]("6.4")
    assert (row["torch"], row["torchvision"], row["torchaudio"]) == ("2.9.1", "0.24.1", "2.9.1")
    assert FILTERS["torch_for_rocm"]("6.3", "2.7")["torch"] == "2.7.1"
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm.torch_for_rocm.*2.9.1.*6.2"):
        FILTERS["torch_for_rocm"]("6.2", "2.9.1")


def test_gpu_env_filter_matches_module_logic():
    gpus = [{"name": "gfx1030", "node": 1, "index": 0, "uuid": "GPU-e0ce170bfa1769dd"},
            {"name": "gfx1036", "node": 2, "index": 1, "integrated": True}]
    assert FILTERS["gpu_env"](gpus, "6.4")["env"] == {"ROCR_VISIBLE_DEVICES": "GPU-e0ce170bfa1769dd"}
    assert FILTERS["gpu_env"](gpus, "6.4", "auto", True)["env"] == {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm.gpu_env"):
        FILTERS["gpu_env"](gpus, "6.4", "10.3")


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_sidecar_documentation(name):
    path = os.path.join(ROOT, "plugins", "filter", name + ".yml")
    with open(path, encoding="utf-8") as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == name
    assert doc["DOCUMENTATION"]["short_description"]
    assert "_input" in doc["DOCUMENTATION"]["options"]
    assert "radeonlab.llm.%s" % name in doc["EXAMPLES"]
    yaml.safe_load(doc["EXAMPLES"])
    assert "_value" in doc["RETURN"]

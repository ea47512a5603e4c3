# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the radeonlab.llm.gpu_env module (argument handling, check mode, results)."""

from __future__ import annotations

import json
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.radeonlab.llm.plugins.modules import gpu_env

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "rocminfo")


def run_module(args, capsys, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as info:
            gpu_env.main()
    out = json.loads(capsys.readouterr().out)
    return info.value.code, out


RIG_MIXED = [
    {"name": "gfx1100", "node": 1, "index": 0, "uuid": "GPU-69e905a91bab9202", "integrated": False,
     "marketing_name": "Radeon RX 7900 XTX", "compute_units": 96, "vram_kb": 25149440, "chip_id": 29772,
     "isa": ["amdgcn-amd-amdhsa--gfx1100"]},
    {"name": "gfx1031", "node": 2, "index": 1, "uuid": "GPU-XX", "integrated": False,
     "marketing_name": "AMD Radeon RX 6700 XT", "compute_units": 40, "vram_kb": 12566528, "chip_id": 29663,
     "isa": ["amdgcn-amd-amdhsa--gfx1031"]},
    {"name": "gfx1036", "node": 3, "index": 2, "uuid": "GPU-XX", "integrated": True,
     "marketing_name": "AMD Radeon Graphics", "compute_units": 2, "vram_kb": 524288, "chip_id": 5710,
     "isa": ["amdgcn-amd-amdhsa--gfx1036", "amdgcn-amd-amdhsa--gfx10-3-generic"]},
]

MODULE_ROWS = [
    ("mixed 6.4 auto", dict(rocm_version="6.4.1"),
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202,1"}, "per_node", 2),
    ("mixed 6.4 include iGPU", dict(rocm_version="6.4", include_integrated=True),
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "HSA_OVERRIDE_GFX_VERSION_3": "10.3.0"}, "per_node", 3),
    ("mixed 6.1 auto", dict(rocm_version="6.1.2"),
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202"}, "none", 1),
    ("mixed off", dict(rocm_version="6.4", override="off"),
     {"ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202,1"}, "none", 2),
    ("mixed explicit", dict(rocm_version="6.2", override="10.3.0"),
     {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "ROCR_VISIBLE_DEVICES": "GPU-69e905a91bab9202,1"}, "per_node", 2),
]


@pytest.mark.parametrize("args, env, mode, usable", [r[1:] for r in MODULE_ROWS], ids=[r[0] for r in MODULE_ROWS])
@pytest.mark.parametrize("check_mode", [False, True])
def test_module(args, env, mode, usable, check_mode, capsys):
    rc, out = run_module(dict(args, gpus=RIG_MIXED), capsys, check_mode)
    assert rc == 0, out
    assert out["changed"] is False
    assert out["env"] == env
    assert out["override_mode"] == mode
    assert out["usable_gpus"] == usable
    assert [g["node"] for g in out["gpus"]] == [1, 2, 3]
    assert out["gpus"][0]["status"] == "native" and out["gpus"][0]["override"] is None
    assert out["matrix_version"]


@pytest.mark.parametrize("args, words", [
    (dict(rocm_version="six"), "malformed ROCm version"),
    (dict(rocm_version="5.6"), "not covered"),
    (dict(rocm_version="6.4", override="gfx1030"), "did you mean 10.3.0"),
    (dict(rocm_version="6.4", override="64.0.0"), "out of range"),
    (dict(rocm_version="6.4", override=""), "gfx000"),
])
def test_module_fails_cleanly(args, words, capsys):
    rc, out = run_module(dict(args, gpus=RIG_MIXED), capsys)
    assert rc == 1
    assert out["failed"] is True and words in out["msg"]


def test_module_rejects_malformed_gpu(capsys):
    rc, out = run_module(dict(gpus=[{"name": "gfx10xx", "node": 1}], rocm_version="6.4"), capsys)
    assert rc == 1 and "gpus[0]" in out["msg"]


def test_module_requires_arguments(capsys):
    rc, out = run_module(dict(gpus=RIG_MIXED), capsys)
    assert rc == 1 and "rocm_version" in out["msg"]


@pytest.fixture
def warnings(monkeypatch):
    """Collect module.warn() calls (under pytest ansible may route warnings to the controller display)."""
    collected = []
    monkeypatch.setattr(gpu_env.AnsibleModule, "warn", lambda self, msg, *a, **k: collected.append(msg))
    return collected


def test_module_warns_on_inherited_override(capsys, monkeypatch, warnings):
    monkeypatch.setenv("HSA_OVERRIDE_GFX_VERSION", "10.3.0")
    rc, out = run_module(dict(gpus=RIG_MIXED, rocm_version="6.4"), capsys)
    assert rc == 0
    assert any("HSA_OVERRIDE_GFX_VERSION set" in w for w in warnings)


def test_module_warns_when_nothing_is_usable(capsys, warnings):
    rc, out = run_module(dict(gpus=[{"name": "gfx803", "node": 1}], rocm_version="6.4"), capsys)
    assert rc == 0 and out["env"] == {} and out["usable_gpus"] == 0
    assert any("no GPU is usable" in w for w in warnings)
    assert "warnings" not in out or all(not isinstance(w, str) or "no GPU" in w for w in out["warnings"])


def test_module_corpus_19(capsys):
    with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as handle:
        agents = json.load(handle)["19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt"]["agents"]
    gpus = [dict(name=a["name"], node=a["node"], index=i, uuid="GPU-XX", integrated=a["name"] == "gfx1036",
                 marketing_name=a["marketing_name"], compute_units=a["compute_units"], vram_kb=a["vram_kb"])
            for i, a in enumerate(a for a in agents if a["type"] == "GPU")]
    rc, out = run_module(dict(gpus=gpus, rocm_version="6.4"), capsys)
    assert rc == 0
    assert out["env"] == {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0", "ROCR_VISIBLE_DEVICES": "1"}
    assert out["gpus"][0]["status"] == "unsupported" and out["gpus"][0]["visible"] is False


def test_documentation_matches_argument_spec():
    import yaml

    doc = yaml.safe_load(gpu_env.DOCUMENTATION)
    yaml.safe_load(gpu_env.EXAMPLES)
    yaml.safe_load(gpu_env.RETURN)
    with patch_module_args({"gpus": [], "rocm_version": "6.4"}):
        module = gpu_env.build_module()
    spec = module.argument_spec
    assert set(doc["options"]) == set(spec)
    for name, option in doc["options"].items():
        assert option.get("type") == spec[name].get("type")
        assert option.get("required", False) == spec[name].get("required", False)
        assert option.get("default") == spec[name].get("default")
        assert option.get("elements") == spec[name].get("elements")

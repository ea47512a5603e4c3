# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where training runs: the GPU facts against what torch sees (decide is a pure table; the probe runs the fake torch)."""

from __future__ import annotations

import json
import os

import pytest
from lora_cases import RX6800XT_16G, RX7900XTX_24G, STRIX_HALO_96G, TORCH_RX6800XT_KIB, gpu_fact, torch_device, torch_view

from radeonlab_lora import devices

XTX = gpu_fact()
XT = gpu_fact(1, RX6800XT_16G, "gfx1030", "Radeon RX 6800 XT")
ROCM_XTX = torch_view([torch_device()])
ROCM_BOTH = torch_view([torch_device(), torch_device("Radeon RX 6800 XT", TORCH_RX6800XT_KIB, "gfx1030")])
ROCM_NONE = torch_view([])
CPU_TORCH = torch_view([], hip=None, version="2.9.1+cpu")
CUDA_TORCH = torch_view([], hip=None, version="2.9.1+cu128", cuda="12.8")
NO_TORCH = {"torch": None, "hip": None, "cuda": None, "count": 0, "devices": [], "error": "ModuleNotFoundError: No module named 'torch'"}
HALO = gpu_fact(0, STRIX_HALO_96G, "gfx1151", "Radeon 8060S Graphics", integrated=True)
ROCM_HALO = torch_view([torch_device("Radeon 8060S Graphics", 62 << 20, "gfx1151")])
ROCM_SMALL_CARD = torch_view([torch_device("Radeon RX 6800 XT", TORCH_RX6800XT_KIB, "gfx1030")])

# facts, requested, view, torch_without_hip -> train_on, ok, reason fragment, message fragments
DECISIONS = {
    "cpu asked": ([XTX], "cpu", ROCM_XTX, False, "cpu", True, "lora_job_device: cpu asked for", []),
    "no GPU facts, auto": ([], "auto", CPU_TORCH, False, "cpu", True, "the GPU facts show no visible GPU", []),
    "no GPU facts, auto, torch sees one": ([], "auto", ROCM_XTX, False, "cpu", True, "no visible GPU", ["are the facts stale?"]),
    "no GPU facts, gpu": ([], "gpu", CPU_TORCH, False, "gpu", False, "no visible GPU", ["lora_job_device is gpu but the GPU facts show no visible GPU"]),
    "integrated only, a bare carve-out": ([gpu_fact(integrated=True, vram_kb=524288)], "auto", ROCM_XTX, False, "cpu", True, "no visible GPU",
                                          ["integrated"]),
    # torch reports an APU's memory as it likes (GTT, a share of it): not compared
    "Strix Halo, integrated only": ([HALO], "auto", ROCM_HALO, False, "gpu", True, "torch sees the GPUs", ["(integrated)", "gfx1151"]),
    "Strix Halo, gpu asked": ([HALO], "gpu", ROCM_HALO, False, "gpu", True, "torch sees the GPUs", []),
    "Strix Halo, torch has no HIP here": ([HALO], "auto", CPU_TORCH, True, "cpu", True, "torch has no HIP here", []),
    "Strix Halo, torch sees none": ([HALO], "auto", ROCM_NONE, False, "gpu", False, "disagree", ["render and video groups"]),
    "matching GPU": ([XTX], "auto", ROCM_XTX, False, "gpu", True, "torch sees the GPUs", ["Radeon RX 7900 XTX", "HIP 6.4.43482"]),
    "matching GPU, gpu asked": ([XTX], "gpu", ROCM_XTX, True, "gpu", True, "torch sees the GPUs", []),
    "matching two GPUs": ([XTX, XT], "auto", ROCM_BOTH, False, "gpu", True, "torch sees the GPUs", []),
    "CPU torch with the switch": ([XTX], "auto", CPU_TORCH, True, "cpu", True, "torch has no HIP here (torch_without_hip)", ["2.9.1+cpu"]),
    "CPU torch without the switch": ([XTX], "auto", CPU_TORCH, False, "gpu", False, "disagree",
                                     ["gfx1100 Radeon RX 7900 XTX 23.98 GiB", "torch 2.9.1+cpu (HIP none, CUDA none) sees 0 GPU(s)",
                                      "reinstall it from the ROCm index", "pytorch_rocm", "lora_job_device: cpu"]),
    "CUDA torch": ([XTX], "auto", CUDA_TORCH, False, "gpu", False, "disagree", ["CUDA 12.8", "CPU or CUDA wheel"]),
    "no torch at all": ([XTX], "auto", NO_TORCH, False, "gpu", False, "disagree", ["torch cannot be imported", "No module named 'torch'"]),
    "count 2 vs 1": ([XTX, XT], "auto", ROCM_XTX, False, "gpu", False, "disagree",
                     ["2 visible GPU(s)", "sees 1 GPU(s)", "HIP_VISIBLE_DEVICES hide cards", "HSA_OVERRIDE_GFX_VERSION"]),
    "count 1 vs 2": ([XTX], "auto", ROCM_BOTH, False, "gpu", False, "disagree", ["torch sees cards that the facts leave out"]),
    "ROCm torch sees none": ([XTX], "auto", ROCM_NONE, False, "gpu", False, "disagree", ["render and video groups", "gpu_groups", "HSA_OVERRIDE"]),
    "ROCm torch sees none, switch does not apply": ([XTX], "auto", ROCM_NONE, True, "gpu", False, "disagree", ["render and video groups"]),
    "VRAM mismatch": ([XTX], "auto", ROCM_SMALL_CARD, False, "gpu", False, "disagree",
                      ["VRAM differs by more than 10%", "#0 Radeon RX 7900 XTX 23.98 GiB in the facts", "15.95 GiB", "numbered in another order"]),
    "gpu asked with the switch": ([XTX], "gpu", CPU_TORCH, True, "gpu", False, "torch has no HIP here",
                                  ["lora_job_device is gpu but torch has no HIP here", "lora_job_device: auto"]),
}


@pytest.mark.parametrize("case", DECISIONS.values(), ids=list(DECISIONS))
def test_decide(case):
    facts, requested, view, switch, train_on, ok, reason, fragments = case
    decision = devices.decide(devices.gpus_from_facts({"gpus": facts}), requested, view, switch)
    assert (decision.train_on, decision.ok, decision.requested) == (train_on, ok, requested)
    assert reason in decision.reason
    for fragment in fragments:
        assert fragment in decision.message
    assert decision.as_dict()["facts_gpus"] == [{"index": g["index"], "gfx": g["name"], "name": g["marketing_name"],
                                                 "vram_gib": round(g["vram_kb"] / (1 << 20), 2)} for g in facts]


def test_only_fitting_causes_are_listed():
    wheel = devices.decide(devices.gpus_from_facts({"gpus": [XTX]}), "auto", CPU_TORCH, False).message
    assert "render and video" not in wheel and "HIP_VISIBLE_DEVICES" not in wheel
    fewer = devices.decide(devices.gpus_from_facts({"gpus": [XTX, XT]}), "auto", ROCM_XTX, False).message
    assert "ROCm index" not in fewer and "render and video" not in fewer
    assert fewer.index("HIP_VISIBLE_DEVICES") < fewer.index("HSA_OVERRIDE_GFX_VERSION")


def test_message_names_the_visibility_environment():
    view = {**ROCM_XTX, "env": {"HIP_VISIBLE_DEVICES": "0", "ROCR_VISIBLE_DEVICES": None}}
    message = devices.decide(devices.gpus_from_facts({"gpus": [XTX, XT]}), "auto", view, False).message
    assert "with HIP_VISIBLE_DEVICES=0" in message and "ROCR_VISIBLE_DEVICES=" not in message


def test_unknown_request_is_an_error():
    with pytest.raises(ValueError, match="device must be one of"):
        devices.decide([], "npu", {}, False)


@pytest.mark.parametrize("facts, expected", [
    (None, []),
    ({"gpus": []}, []),
    ({"vram_kb": 0}, []),
    ({"vram_kb": RX7900XTX_24G, "marketing_name": "Radeon RX 7900 XTX"}, [(0, None, "Radeon RX 7900 XTX", RX7900XTX_24G)]),
    ({"gpus": [XT, XTX]}, [(0, "gfx1100", "Radeon RX 7900 XTX", RX7900XTX_24G), (1, "gfx1030", "Radeon RX 6800 XT", RX6800XT_16G)]),
    ({"agents": [{"type": "CPU", "name": "Ryzen"}, {"type": "GPU", "name": "gfx1100", "vram_kb": RX7900XTX_24G}]}, [(0, "gfx1100", "gfx1100", RX7900XTX_24G)]),
    ({"rocm": {"gpus": [XTX]}, "ram_kb": 1}, [(0, "gfx1100", "Radeon RX 7900 XTX", RX7900XTX_24G)]),
])
def test_gpus_from_facts(facts, expected):
    assert [(g["index"], g["gfx"], g["name"], g["vram_kb"]) for g in devices.gpus_from_facts(facts)] == expected


def test_probe_runs_torch_view_in_a_child_with_the_given_environment(monkeypatch):
    monkeypatch.setenv("FAKE_TORCH_HIP", "6.4.43482")
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device()]))
    view = devices.probe({**os.environ, "HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert (view["torch"], view["hip"], view["cuda"], view["count"], view["error"]) == ("2.9.1+fake", "6.4.43482", None, 1, None)
    assert view["devices"] == [{"index": 0, "name": "Radeon RX 7900 XTX", "total_kib": 25116672, "arch": "gfx1100"}]
    assert view["env"]["HSA_OVERRIDE_GFX_VERSION"] == "11.0.0"
    assert devices.view_summary(view) == {"version": "2.9.1+fake", "hip": "6.4.43482", "cuda": None, "count": 1,
                                          "devices": ["Radeon RX 7900 XTX"], "error": None}


def test_probe_of_a_cpu_torch_and_of_no_torch(monkeypatch):
    view = devices.probe()
    assert (view["torch"], view["hip"], view["count"], view["devices"]) == ("2.9.1+fake", None, 0, [])
    monkeypatch.setenv("FAKE_TORCH_IMPORT_ERROR", "libamdhip64.so: cannot open shared object file")
    view = devices.probe()
    assert view["torch"] is None and "ImportError: libamdhip64.so" in view["error"] and view["count"] == 0


def test_probe_that_cannot_run_says_why(monkeypatch):
    monkeypatch.setattr(devices.sys, "executable", "/nonexistent/python")
    view = devices.probe()
    assert view["torch"] is None and "did not finish" in view["error"]

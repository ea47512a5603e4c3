# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's view of "7B on a 16 GB card": torch has no HIP, so the llamafactory role's bitsandbytes probe fails with its
reason; the job trains on the CPU (torch_without_hip) and says what the real card would get: QLoRA 4-bit, planned but
unavailable on this host. Without the lab's switch the same facts are a refusal that names QLoRA and why."""

from __future__ import annotations

import json

from lora_cases import QWEN25_7B, TORCH_RX6800XT_KIB, gpu_fact, torch_device

from radeonlab_lora import cli
from radeonlab_lora_report import report

# The 16 GB capture of the shared corpus: rocminfo/16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt (ROCm/ROCm#2330):
# GPU gfx1030 "AMD Radeon RX 6800 XT" node 1 vram_kb 16760832, and the iGPU gfx1036 (512 MB, integrated: not sized).
RX6800XT = gpu_fact(vram_kb=16760832, gfx="gfx1030", name="AMD Radeon RX 6800 XT")
IGPU = {**gpu_fact(index=1, vram_kb=524288, gfx="gfx1036", name="AMD Radeon Graphics"), "integrated": True}
# What roles/llamafactory/files/kernel_probe.py bitsandbytes records in the lab (tests/unit/roles/llamafactory/test_bitsandbytes_probe.py)
LAB_PROBE = {"ok": False, "version": "0.50.2",
             "reason": "torch 2.9.1+cpu has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU"}
FACTS = {"gpus": [RX6800XT, IGPU], "bitsandbytes": LAB_PROBE}


def _check(job, tmp_path, capsys, facts=None):
    job_path, facts_path = tmp_path / "job.json", tmp_path / "gpu.json"
    job_path.write_text(json.dumps(job))
    facts_path.write_text(json.dumps(facts or FACTS))
    rc = cli.main(["check", "--job", str(job_path), "--gpu-facts", str(facts_path)])
    return rc, json.loads(capsys.readouterr().out)


def test_lab_shows_qlora_planned_and_why_it_is_unavailable(tiny_job, tmp_path, capsys):
    job = {**tiny_job, "model_config": QWEN25_7B, "cutoff_len": 1024, "attention": "sdpa", "torch_without_hip": True}
    rc, out = _check(job, tmp_path, capsys)
    assert rc == 0 and out["plan"]["device"] == "cpu"
    gpu_plan = out["gpu_plan"]
    assert gpu_plan["decision"] == "refuse" and gpu_plan["vram_gib"] == 15.98
    assert gpu_plan["alternatives"]["qlora4"] == {"needed_gib": 9.63, "fits": True, "enabled": True, "available": False,
                                                  "reason": LAB_PROBE["reason"]}
    cell = report.device_cell({"gpu": "AMD Radeon RX 6800 XT"}, {"plan": out["plan"], "device": out["device"], "gpu_plan": gpu_plan})
    assert ("a real AMD Radeon RX 6800 XT would get: QLoRA 4-bit planned, bitsandbytes unavailable on this host (9.6 GiB; bf16 needs "
            "19.7 GiB): torch 2.9.1+cpu has no HIP (a CPU build)") in cell, cell


def test_on_a_real_card_the_refusal_names_qlora_and_the_probe(tiny_job, tmp_path, capsys, monkeypatch):
    """A ROCm torch that sees the RX 6800 XT, but the probe failed there (here: torch's ROCm line has no bitsandbytes build)."""
    monkeypatch.setenv("FAKE_TORCH_HIP", "6.2.41133")
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device("AMD Radeon RX 6800 XT", TORCH_RX6800XT_KIB, "gfx1030")]))
    probe = {"ok": False, "version": "0.50.2", "reason": "bitsandbytes 0.50.2 does not import: RuntimeError: libbitsandbytes_rocm62.so: "
             "cannot open shared object file; expected: bitsandbytes 0.50.2 ships no build for ROCm 6.2"}
    facts = {"gpus": [RX6800XT], "bitsandbytes": probe}  # gpu_environment's visible GPUs: the iGPU is hidden
    rc, out = _check({**tiny_job, "model_config": QWEN25_7B, "cutoff_len": 2048, "attention": "sdpa"}, tmp_path, capsys, facts)
    assert rc == 2 and out["refused"] and out["refusal"] == "memory", out
    assert ("would fit: 4-bit QLoRA (11.9 GiB), but bitsandbytes is unavailable on this host: bitsandbytes 0.50.2 does not import: "
            "RuntimeError: libbitsandbytes_rocm62.so") in out["message"]
    assert "ships no build for ROCm 6.2" in out["message"]

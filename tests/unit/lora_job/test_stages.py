# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After training, each stage sized before anything trains (radeonlab_lora.stages): the sample answers and the API in the
form the job trained in, the merged export in host RAM; the stage that cannot fit is refused by ``check``."""

from __future__ import annotations

import json

import pytest
from lora_cases import QWEN25_7B, RX6800XT_16G, RX7900XTX_24G, STRIX_HALO_96G, TORCH_RX6800XT_KIB, gpu_fact, torch_device

from radeonlab_lora import cli, inference, samples, spec as jobspec, stages
from radeonlab_lora.modelshape import ModelShape
from radeonlab_lora.sizing import device_from_facts, plan_job

GIB = 1 << 20  # KiB
Q7 = ModelShape.from_config(QWEN25_7B)
PROBE_OK = {"ok": True, "reason": "", "version": "0.50.2"}


def job(**overrides) -> dict:
    return jobspec.normalize({"model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "template": "qwen", "cutoff_len": 2048,
                              "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o", "sample_prompts": ["hi"],
                              "export": "merged", "serve": True, **overrides})


def facts(vram_kib, ram_gib, **extra) -> dict:
    return {"gpus": [gpu_fact(0, vram_kib, **extra)], "ram_kb": ram_gib * GIB, "bitsandbytes": PROBE_OK}


def sized(spec, host) -> tuple:
    device = device_from_facts(host)
    plan = plan_job(Q7, cutoff_len=spec["cutoff_len"], attention="sdpa", device=device, allow_qlora=True)
    return plan, {stage.name: stage for stage in stages.plan_stages(plan, Q7, device, spec)}


# host facts -> training precision, {stage: (where, precision, fits)}
CASES = {
    # the case: QLoRA on a 16 GB card answers and serves in 4-bit; the export merges in host RAM
    "7B QLoRA on 16 GB, 64 GiB RAM": (
        facts(RX6800XT_16G, 64), "qlora4", {"samples": ("gpu", "qlora4", True), "export": ("cpu", "bf16", True), "api": ("gpu", "qlora4", True)}),
    "7B bf16 on 24 GB, 64 GiB RAM": (
        facts(RX7900XTX_24G, 64), "bf16", {"samples": ("gpu", "bf16", True), "export": ("cpu", "bf16", True), "api": ("gpu", "bf16", True)}),
    # 16 GiB of RAM cannot hold a 7B model's bf16 weights to merge them (15.3 GiB RSS measured)
    "7B QLoRA on 16 GB, 16 GiB RAM": (
        facts(RX6800XT_16G, 16), "qlora4", {"samples": ("gpu", "qlora4", True), "export": ("cpu", "bf16", False), "api": ("gpu", "qlora4", True)}),
    # an APU: inference on the GPU's share of the unified memory, the export in the RAM the OS sees
    "Strix Halo 96 GiB carve-out, 32 GiB RAM": (
        {"gpus": [gpu_fact(0, STRIX_HALO_96G, "gfx1151", "Radeon 8060S Graphics", integrated=True)], "ram_kb": 32 * GIB}, "bf16",
        {"samples": ("gpu", "bf16", True), "export": ("cpu", "bf16", True), "api": ("gpu", "bf16", True)}),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_each_stage_is_sized_in_the_form_the_job_trained(case):
    host, precision, expected = case
    plan, by_name = sized(job(), host)
    assert plan.decision == "train" and plan.precision == precision, plan.message
    assert {name: (stage.where, stage.precision, stage.fits) for name, stage in by_name.items()} == expected


def test_a_4bit_base_is_what_makes_the_16gb_card_answer():
    bf16 = stages.inference_estimate(Q7, "bf16", 2112, 8)
    four_bit = stages.inference_estimate(Q7, "qlora4", 2112, 8)
    device = device_from_facts(facts(RX6800XT_16G, 64))
    assert bf16.needed_gib(device.reserve_gib) > device.vram_gib, "bf16 inference of 7B does not fit 16 GB"
    assert four_bit.needed_gib(device.reserve_gib) < 8.0
    assert bf16.weights_gib == pytest.approx(Q7.params * 2 / (1 << 30))


def test_the_runtime_reserve_counts_once():
    """A 16 GB card that keeps 5 GiB for other processes (the GPU lab caps its cards the same way): training fits in the 11 GiB left
    and so do the 4-bit answers; counted twice, the reserve refused them (H100, 2026-12-07)."""
    plan, by_name = sized(job(), {**facts(RX6800XT_16G, 64), "reserve_gib": 5.0})
    answers = by_name["samples"]
    assert plan.decision == "train" and plan.precision == "qlora4", plan.message
    assert (answers.available_gib, answers.estimate_gib["reserve"]) == (plan.vram_gib, 5.0)
    assert answers.fits and answers.needed_gib > plan.vram_gib - 5.0, "the case must be one the double count refused"


def test_only_the_stages_the_job_runs_are_sized():
    host = facts(RX7900XTX_24G, 64)
    assert list(sized(job(), host)[1]) == ["samples", "export", "api"]
    assert not sized(job(sample_prompts=[], export="adapter", serve=False), host)[1]


def test_unknown_ram_leaves_the_export_unchecked():
    host = {"gpus": [gpu_fact(0, RX7900XTX_24G)], "bitsandbytes": PROBE_OK}
    export = sized(job(), host)[1]["export"]
    assert export.available_gib is None and export.fits


def test_the_refusal_names_the_stage_and_the_fix():
    by_name = sized(job(), facts(RX6800XT_16G, 16))[1]
    message = stages.refusal(list(by_name.values()))
    assert message.startswith("refused: the merged export (export: merged) needs 16.")
    assert "of host RAM" in message and "export: adapter" in message
    assert stages.refusal([by_name["samples"], by_name["api"]]) is None


def test_check_refuses_before_training_and_keeps_the_stages_in_the_plan(tiny_job, tmp_path, capsys, monkeypatch):
    """A ROCm torch that sees the RX 6800 XT: QLoRA trains there, but 16 GiB of RAM cannot merge the 7B model."""
    monkeypatch.setenv("FAKE_TORCH_HIP", "6.4.43482")
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device("AMD Radeon RX 6800 XT", TORCH_RX6800XT_KIB, "gfx1030")]))
    spec = {**tiny_job, "model_config": QWEN25_7B, "cutoff_len": 2048, "attention": "sdpa", "sample_prompts": ["hi"], "export": "merged",
            "serve": True}
    host = {"gpus": [gpu_fact(0, RX6800XT_16G, "gfx1030", "AMD Radeon RX 6800 XT")], "ram_kb": 16 * GIB, "bitsandbytes": PROBE_OK}
    job_path, facts_path = tmp_path / "job.json", tmp_path / "gpu.json"
    job_path.write_text(json.dumps(spec))
    facts_path.write_text(json.dumps(host))
    code = cli.main(["check", "--job", str(job_path), "--gpu-facts", str(facts_path)])
    printed = json.loads(capsys.readouterr().out)
    assert code == 2 and printed["refused"] is True, printed
    assert printed["message"].startswith("refused: the merged export (export: merged)"), printed["message"]
    assert [(s["name"], s["precision"], s["fits"]) for s in printed["plan"]["stages"]] == [
        ("samples", "qlora4", True), ("export", "bf16", False), ("api", "qlora4", True)]
    host["ram_kb"] = 64 * GIB
    facts_path.write_text(json.dumps(host))
    assert cli.main(["check", "--job", str(job_path), "--gpu-facts", str(facts_path)]) == 0, "with 64 GiB of RAM it trains"


def test_a_4bit_run_answers_and_serves_with_the_4bit_base(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "plan.json").write_text(json.dumps({"precision": "qlora4", "double_quantization": True}))
    spec = job()
    request = samples.request(spec, str(run_dir))
    assert (request["precision"], request["double_quantization"]) == ("qlora4", True)
    for args in (samples.chat_args(request, True), inference.api_config(spec, str(run_dir))):
        assert (args["quantization_bit"], args["quantization_type"], args["double_quantization"]) == (4, "nf4", True)
    (run_dir / "plan.json").write_text(json.dumps({"precision": "bf16"}))
    assert "precision" not in samples.request(spec, str(run_dir)), "a bf16 run's request (and its key) stays as it was"
    assert "quantization_bit" not in inference.api_config(spec, str(run_dir))


# Peak allocated GiB of each inference stage of a 7B job (cutoff 2048), measured on an NVIDIA H100 capped to the card:
# tests/bench/after/run_stages.sh tests/bench/plans/stages_16g_24g.txt, 2026-12-07 (docs/performance/
# h100_2026-12-07_stages24.jsonl). The estimate before margin is at or over each peak, by at most 10 %.
MEASURED_INFERENCE_GIB = {
    "qlora4 sample answers": ("qlora4", 5.81),
    "qlora4 API": ("qlora4", 5.78),
    "bf16 sample answers": ("bf16", 14.83),
    "bf16 API": ("bf16", 14.80),
}


@pytest.mark.parametrize("case", MEASURED_INFERENCE_GIB.values(), ids=list(MEASURED_INFERENCE_GIB))
def test_the_inference_estimate_covers_the_measured_peak(case):
    precision, peak = case
    estimate = stages.inference_estimate(Q7, precision, stages.context_tokens(job()), 8).total_gib
    assert peak <= estimate <= peak * 1.10, (estimate, peak)

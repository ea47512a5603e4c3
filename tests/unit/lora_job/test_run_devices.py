# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``run``/``check`` decide the device first: train where the facts say, refuse a torch that disagrees, record what happened."""

from __future__ import annotations

import json
import os

import pytest
from lora_cases import gpu_fact, matching_view, read_calls, torch_view

from radeonlab_lora import cli, runner, spec as jobspec, state

GPU_FACTS = {"gpus": [gpu_fact()], "ram_kb": 32 << 20, "bitsandbytes_ok": False}
CPU_FACTS = {"gpus": [], "ram_kb": 32 << 20}


def run(job, facts, lines=None):
    return runner.run_job(jobspec.normalize(job), facts, (lines if lines is not None else []).append)


def root_status(job):
    return state.read_json(os.path.join(job["output_dir"], "status.json"))


def check(job, facts, tmp_path, capsys):
    job_path, facts_path = tmp_path / "job-check.json", tmp_path / "gpu.json"
    job_path.write_text(json.dumps(job))
    facts_path.write_text(json.dumps(facts))
    rc = cli.main(["check", "--job", str(job_path), "--gpu-facts", str(facts_path)])
    captured = capsys.readouterr()
    return rc, json.loads(captured.out), captured.err


def test_torch_without_hip_trains_on_the_cpu_and_shows_the_gpu_plan(tiny_job, fake_cli):
    job = {**tiny_job, "torch_without_hip": True}
    assert run(job, GPU_FACTS) == runner.EXIT_OK
    status = root_status(job)
    device = status["device"]
    assert (device["train_on"], device["ok"], device["reason"]) == ("cpu", True, "torch has no HIP here (torch_without_hip)")
    assert device["torch"] == {"version": "2.9.1+fake", "hip": None, "cuda": None, "count": 0, "devices": [], "error": None}
    assert (status["plan"]["device"], status["plan"]["precision"]) == ("cpu", "fp32")
    assert (status["gpu_plan"]["device"], status["gpu_plan"]["precision"], status["gpu_plan"]["decision"]) == ("gpu", "bf16", "train")
    assert read_calls(fake_cli)[0]["config"]["use_cpu"] is True
    assert status["peak_memory"]["kind"] == "cpu_rss" and status["peak_memory"]["gib"] > 0
    assert status["attempts"][0]["peak_memory"] == status["peak_memory"]
    assert (status["tokens_per_second"], status["tokens_per_second_basis"]) == (512.0, "samples x cutoff_len (upper bound)")


def test_matching_gpu_trains_on_it_and_measures_gpu_memory(tiny_job, fake_cli, gpu_torch, monkeypatch):
    monkeypatch.setenv("FAKE_LF_USE_TORCH", "1")
    monkeypatch.setenv("FAKE_TORCH_PEAK_BYTES", str(5 << 29))
    monkeypatch.setenv("FAKE_LF_TOKENS_SEEN", "3000")
    assert run(tiny_job, GPU_FACTS) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert (status["device"]["train_on"], status["device"]["torch"]["devices"], status["gpu_plan"]) == ("gpu", ["Radeon RX 7900 XTX"], None)
    assert (status["plan"]["device"], status["plan"]["precision"]) == ("gpu", "bf16")
    assert "use_cpu" not in read_calls(fake_cli)[0]["config"]
    assert status["peak_memory"] == {"kind": "gpu_allocated", "gib": 2.5}
    assert (status["tokens_per_second"], status["tokens_per_second_basis"]) == (1500.0, "num_input_tokens_seen / train_runtime")


def test_mismatch_refuses_before_training_and_says_why(tiny_job, fake_cli, tmp_path, capsys):
    lines = []
    assert run(tiny_job, GPU_FACTS, lines) == runner.EXIT_REFUSED
    assert read_calls(fake_cli) == []
    status = root_status(tiny_job)
    assert (status["state"], status["attempt"], status["attempts"], status["device"]["ok"]) == ("failed", 0, [], False)
    assert "torch.version.hip is None" in status["message"] and "Radeon RX 7900 XTX" in status["message"] and lines[-1] == status["message"]
    # the run dir a check on a healthy host would have named says so too, so the role shows the message
    assert state.read_json(os.path.join(status["run_dir"], "status.json"))["message"] == status["message"]

    rc, result, err = check(tiny_job, GPU_FACTS, tmp_path, capsys)
    assert (rc, result["refused"], result["refusal"], result["done"], result["device"]["ok"]) == (2, True, "device", False, False)
    assert result["message"] == status["message"] and err.strip() == status["message"]


def test_mismatch_leaves_a_succeeded_run_alone(tiny_job, fake_cli, gpu_torch, monkeypatch):
    assert run(tiny_job, GPU_FACTS) == runner.EXIT_OK
    run_dir = root_status(tiny_job)["run_dir"]
    monkeypatch.delenv("FAKE_TORCH_HIP")  # a CPU wheel installed over the ROCm one
    monkeypatch.setenv("FAKE_TORCH_DEVICES", "[]")
    assert run(tiny_job, GPU_FACTS) == runner.EXIT_REFUSED
    assert state.read_json(os.path.join(run_dir, "status.json"))["state"] == "succeeded"
    assert root_status(tiny_job)["state"] == "failed" and len(read_calls(fake_cli)) == 1


def test_gpu_requested_without_gpu_facts_is_refused(tiny_job, fake_cli):
    assert run({**tiny_job, "device": "gpu"}, CPU_FACTS) == runner.EXIT_REFUSED
    assert "lora_job_device is gpu but the GPU facts show no visible GPU" in root_status(tiny_job)["message"]
    assert read_calls(fake_cli) == []


def test_check_reports_the_device_and_the_gpu_plan(tiny_job, tmp_path, capsys):
    rc, result, _err = check({**tiny_job, "torch_without_hip": True}, GPU_FACTS, tmp_path, capsys)
    assert (rc, result["refused"], result["device"]["train_on"], result["plan"]["device"], result["gpu_plan"]["device"]) == (0, False, "cpu", "cpu", "gpu")
    rc, result, _err = check({**tiny_job, "device": "cpu"}, GPU_FACTS, tmp_path, capsys)
    assert (rc, result["device"]["reason"], result["plan"]["device"]) == (0, "lora_job_device: cpu asked for", "cpu")


@pytest.mark.parametrize("facts", [{"ram_kb": 32 << 20}, {"ram_kb": 32 << 20, "bitsandbytes_ok": True}])
def test_facts_without_gpu_keys_take_the_cards_from_sysfs(tiny_job, tmp_path, capsys, monkeypatch, facts):
    monkeypatch.setattr(cli.sizing, "probe_device", lambda: {"gpus": [{"type": "GPU", "vram_kb": 25149440, "name": "card0"}], "ram_kb": 1})
    rc, result, _err = check({**tiny_job, "torch_without_hip": True}, facts, tmp_path, capsys)
    assert (rc, result["device"]["train_on"], result["gpu_plan"]["vram_gib"]) == (0, "cpu", 23.98)


def test_hash_depends_on_the_effective_plan_and_the_stack(tiny_job):
    spec = jobspec.normalize(tiny_job)
    on_gpu = runner.prepare(spec, GPU_FACTS, matching_view(GPU_FACTS))
    again = runner.prepare(spec, GPU_FACTS, matching_view(GPU_FACTS))
    other_torch = runner.prepare(spec, GPU_FACTS, {**matching_view(GPU_FACTS), "torch": "2.10.0+rocm7.0", "hip": "7.0.1"})
    assert on_gpu.config_hash == again.config_hash != other_torch.config_hash  # a ROCm upgrade that moved torch trains again
    switched = runner.prepare({**spec, "torch_without_hip": True}, GPU_FACTS, torch_view([], hip=None))
    no_gpu = runner.prepare(spec, CPU_FACTS, torch_view([], hip=None))
    assert switched.config_hash == no_gpu.config_hash != on_gpu.config_hash  # the CPU plan is the CPU plan, however it was reached
    assert switched.gpu_plan.as_dict() == on_gpu.plan.as_dict() and no_gpu.gpu_plan is None

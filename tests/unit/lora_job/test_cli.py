# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora`` subcommands."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from lora_cases import FILES, QWEN25_7B, R9700_32G, RX6800XT_16G, RX7900XTX_24G, STRIX_HALO_96G, gpu_fact

from radeonlab_lora import cli, state


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_plan_prints_decision(tiny_job, tmp_path, capsys):
    job = _write(tmp_path, "job.json", {**tiny_job, "model": "Qwen/Qwen2.5-7B", "model_config": QWEN25_7B, "cutoff_len": 2048, "attention": "sdpa"})
    facts = _write(tmp_path, "facts.json", {"vram_kb": RX7900XTX_24G})
    assert cli.main(["plan", "--job", job, "--gpu-facts", facts]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["decision"], plan["per_device_train_batch_size"], plan["gradient_checkpointing"], plan["model_shape"]["layers"]) == ("train", 1, True, 28)


def test_plan_on_a_strix_halo_trains_on_its_gpu(tiny_job, tmp_path, capsys):
    """gfx1151 integrated, 96 GiB GPU pool, 32 GiB left to the CPU: a 7B job at cutoff 2048 trains on the GPU."""
    job = _write(tmp_path, "job.json", {**tiny_job, "model": "Qwen/Qwen2.5-7B", "model_config": QWEN25_7B, "cutoff_len": 2048})
    facts = _write(tmp_path, "facts.json", {"gpus": [gpu_fact(0, STRIX_HALO_96G, "gfx1151", "Radeon 8060S Graphics", integrated=True)],
                                            "ram_kb": 32 << 20})
    assert cli.main(["plan", "--job", job, "--gpu-facts", facts]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["device"], plan["decision"], plan["precision"]) == ("gpu", "train", "bf16")
    assert plan["unified_memory"]["pool_gib"] == 96.0 and "GPU, unified memory: 96.0 of 96.0 GiB" in plan["message"]


def test_plan_on_an_r9700_trains_on_its_gpu(tiny_job, tmp_path, capsys):
    job = _write(tmp_path, "job.json", {**tiny_job, "model": "Qwen/Qwen2.5-7B", "model_config": QWEN25_7B, "cutoff_len": 2048})
    facts = _write(tmp_path, "facts.json", {"gpus": [gpu_fact(0, R9700_32G, "gfx1201", "AMD Radeon AI PRO R9700")], "ram_kb": 64 << 20})
    assert cli.main(["plan", "--job", job, "--gpu-facts", facts]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["device"], plan["decision"], plan["unified_memory"]) == ("gpu", "train", None)


def test_plan_refusal_exits_nonzero_with_numbers(tiny_job, tmp_path, capsys):
    job = _write(tmp_path, "job.json", {**tiny_job, "model": "Qwen/Qwen2.5-7B", "model_config": QWEN25_7B, "cutoff_len": 2048})
    facts = _write(tmp_path, "facts.json", {"vram_kb": RX6800XT_16G})
    assert cli.main(["plan", "--job", job, "--gpu-facts", facts]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["decision"] == "refuse"
    assert "needs 22.0 GiB" in captured.err and "15.98 GiB" in captured.err


def test_render_writes_run_layout(tiny_job, tmp_path, capsys):
    job = _write(tmp_path, "job.json", tiny_job)
    out = tmp_path / "rendered"
    assert cli.main(["render", "--job", job, "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["config_hash"]) == 64 and all(result["changed"].values())
    assert sorted(os.listdir(out)) == ["data", "plan.json", "train.yaml"]
    assert json.loads((out / "train.yaml").read_text())["dataset_dir"] == f"{out}/data"
    assert cli.main(["render", "--job", job, "--out", str(out)]) == 0
    assert not any(json.loads(capsys.readouterr().out)["changed"].values())  # idempotent


def _status_output(text):
    """The status command's JSON object and its last line."""
    body, last = text.rstrip("\n").rsplit("\n", 1)
    return json.loads(body), last


def test_status_never_run_and_stale(tiny_job, tmp_path, capsys):
    job = _write(tmp_path, "job.json", tiny_job)
    assert cli.main(["status", "--job", job]) == 0
    status, last = _status_output(capsys.readouterr().out)
    assert (status["state"], status["verdict"], last) == (None, "died", "none: never run")
    state.write_json_atomic(os.path.join(tiny_job["output_dir"], "status.json"), state.new_status("h", "/x", state="running", output_dir="/x/output"))
    assert cli.main(["status", "--job", job]) == 0
    status, last = _status_output(capsys.readouterr().out)
    assert status["stale"] is True and status["verdict"] == "died" and last == "running: no progress yet"


def test_status_of_one_config_not_the_last_run(tiny_job, tmp_path, capsys):
    """A config that already succeeded reports its own run, even after another config ran later."""
    job = _write(tmp_path, "job.json", tiny_job)
    root = tiny_job["output_dir"]
    done, later = os.path.join(root, "aaa"), os.path.join(root, "bbb")
    state.write_json_atomic(os.path.join(done, "status.json"), state.new_status("aaa", done, state="succeeded", final_loss=1.29))
    state.write_json_atomic(os.path.join(later, "status.json"), state.new_status("bbb", later, state="succeeded", final_loss=1.96))
    state.write_json_atomic(os.path.join(root, "status.json"), state.new_status("bbb", later, state="succeeded", final_loss=1.96))
    assert cli.main(["status", "--job", job]) == 0
    assert _status_output(capsys.readouterr().out)[0]["final_loss"] == 1.96
    assert cli.main(["status", "--job", job, "--run-dir", done]) == 0
    assert _status_output(capsys.readouterr().out)[0]["final_loss"] == 1.29
    assert cli.main(["status", "--job", job, "--run-dir", str(tmp_path)]) == 2
    assert "not a run directory of this job" in capsys.readouterr().err


def test_invalid_job_exits_2(tmp_path, capsys):
    job = _write(tmp_path, "job.json", {"model": "x"})
    assert cli.main(["plan", "--job", job]) == 2
    assert "template is required" in capsys.readouterr().err


def test_module_entry_point(tiny_job, tmp_path):
    job = _write(tmp_path, "job.json", tiny_job)
    result = subprocess.run([sys.executable, "-m", "radeonlab_lora", "plan", "--job", job], env={**os.environ, "PYTHONPATH": FILES},
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and json.loads(result.stdout)["device"] == "cpu"

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``run`` end to end against a fake llamafactory-cli: retry, resume after a kill, skip when done, retrain on change."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from lora_cases import QWEN25_05B, QWEN25_7B, RX7900XTX_24G, TORCH_RX6800XT_KIB, read_calls, torch_device

from radeonlab_lora import cli, runner, spec as jobspec, state


def run(job, lines=None):
    out = lines if lines is not None else []
    return runner.run_job(jobspec.normalize(job), job.get("gpu"), out.append)


def root_status(job):
    return state.read_json(os.path.join(job["output_dir"], "status.json"))


def start_runner(job, tmp_path, **env):
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    environment = {**os.environ, **env}  # PYTHONPATH: the fake torch and the runner (conftest)
    return subprocess.Popen([sys.executable, "-m", "radeonlab_lora", "run", "--job", str(path)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_success_then_already_done(tiny_job, fake_cli):
    lines = []
    assert run(tiny_job, lines) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert status["state"] == "succeeded" and status["attempt"] == 1
    assert (status["global_step"], status["max_steps"], status["first_loss"], status["final_loss"]) == (6, 6, pytest.approx(2.6667, abs=1e-3), 1.0)
    assert status["attention"] == "auto" and status["retry_reasons"] == []
    assert status["duration_s"] > 0 and status["started_at"] and status["finished_at"]
    assert status["progress"] == "step 6/6 (100%), loss 1.00, ETA 0:00:00"
    assert os.path.isfile(os.path.join(status["adapter_dir"], "adapter_model.safetensors"))
    assert len(read_calls(fake_cli)) == 1

    lines = []
    assert run(tiny_job, lines) == runner.EXIT_OK
    assert lines[-1].startswith("already done")
    assert len(read_calls(fake_cli)) == 1  # not trained again
    assert root_status(tiny_job)["state"] == "succeeded"


def test_held_out_samples_give_the_status_a_first_and_final_eval_loss(tiny_job, fake_cli):
    assert run({**tiny_job, "val_size": 0.1}) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert (status["first_eval_loss"], status["final_eval_loss"]) == (pytest.approx(3.5 - 2.0 * 2 / 6), 1.25)  # eval_steps = save_steps 2
    assert read_calls(fake_cli)[0]["config"]["do_eval"] is True
    assert run(tiny_job) == runner.EXIT_OK  # none held out: another config, no eval loss
    assert (root_status(tiny_job)["first_eval_loss"], root_status(tiny_job)["final_eval_loss"]) == (None, None)


def test_rendered_files_in_run_dir(tiny_job, fake_cli):
    run(tiny_job)
    run_dir = root_status(tiny_job)["run_dir"]
    assert sorted(os.listdir(run_dir)) == ["attempt-1.yaml", "data", "output", "peak-attempt-1.json", "plan.json", "status.json", "train.log",
                                           "train.yaml"]
    info = json.load(open(os.path.join(run_dir, "data", "dataset_info.json")))
    assert info["tiny_alpaca"]["file_name"] == tiny_job["dataset"]["file"]
    config = read_calls(fake_cli)[0]["config"]
    assert config["dataset_dir"] == os.path.join(run_dir, "data") and config["output_dir"] == os.path.join(run_dir, "output")


def test_hip_error_retries_with_sdpa_then_succeeds(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_FAIL_ATTN", "auto")
    assert run({**tiny_job, "packing": True}) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert status["state"] == "succeeded" and status["attempt"] == 2 and status["attention"] == "sdpa"
    first, second = status["attempts"]
    assert (first["outcome"], first["failure"], first["settings"]["flash_attn"]) == ("failed", "hip_kernel", "auto")
    assert "invalid device function" in first["evidence"]
    assert (second["settings"]["flash_attn"], second["settings"]["packing"], second["settings"]["neat_packing"]) == ("sdpa", False, False)
    assert len(status["retry_reasons"]) == 1 and "retrying with flash_attn=sdpa" in status["retry_reasons"][0]
    configs = [call["config"] for call in read_calls(fake_cli)]
    assert [(c["flash_attn"], c["packing"]) for c in configs] == [("auto", True), ("sdpa", False)]


def test_hip_error_everywhere_stops_after_disabled(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_FAIL_ATTN", "auto,sdpa,disabled")
    assert run(tiny_job) == runner.EXIT_FAILED
    status = root_status(tiny_job)
    assert status["state"] == "failed" and status["attempt"] == 3
    assert [a["settings"]["flash_attn"] for a in status["attempts"]] == ["auto", "sdpa", "disabled"]
    assert "no attention fallback left" in status["message"]


def test_oom_halves_batch_keeping_effective_batch(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_OOM_ABOVE", "1")
    assert run(tiny_job) == runner.EXIT_OK
    status = root_status(tiny_job)
    batches = [(a["settings"]["per_device_train_batch_size"], a["settings"]["gradient_accumulation_steps"]) for a in status["attempts"]]
    assert batches == [(4, 1), (2, 2), (1, 4)]
    assert all("not retried with the same settings" in reason for reason in status["retry_reasons"])


def test_other_failure_is_not_retried(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_FAIL_OTHER", "ValueError: Cannot find dataset")
    assert run(tiny_job) == runner.EXIT_FAILED
    status = root_status(tiny_job)
    assert status["attempt"] == 1 and status["message"] == "training failed, not retried (ValueError: Cannot find dataset)"
    log = open(os.path.join(status["run_dir"], "train.log")).read()
    assert "===== radeonlab_lora attempt 1" in log and "ValueError: Cannot find dataset" in log


def test_exit_zero_without_adapter_is_a_failure(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_NO_ADAPTER", "1")
    assert run(tiny_job) == runner.EXIT_FAILED
    assert "without writing the adapter files" in root_status(tiny_job)["message"]


def test_rerun_after_failure_resumes_from_checkpoint(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_NO_ADAPTER", "1")  # trains through step 6 (checkpoints 2, 4, 6) but "fails"
    run(tiny_job)
    monkeypatch.delenv("FAKE_LF_NO_ADAPTER")
    assert run(tiny_job) == runner.EXIT_OK
    assert read_calls(fake_cli)[-1]["config"]["resume_from_checkpoint"].endswith("checkpoint-6")
    assert root_status(tiny_job)["attempts"][-1]["resumed_from"] == "checkpoint-6"


def test_changed_config_trains_in_fresh_dir_and_switching_back_is_done(tiny_job, fake_cli):
    assert run(tiny_job) == runner.EXIT_OK
    first_dir = root_status(tiny_job)["run_dir"]
    changed = {**tiny_job, "learning_rate": 1e-3}
    assert run(changed) == runner.EXIT_OK
    second_dir = root_status(changed)["run_dir"]
    assert second_dir != first_dir and os.path.isdir(first_dir)
    assert len(read_calls(fake_cli)) == 2
    assert read_calls(fake_cli)[1]["config"]["resume_from_checkpoint"] is None  # never resumes another config's checkpoint
    lines = []
    assert run(tiny_job, lines) == runner.EXIT_OK and lines[-1].startswith("already done")
    assert len(read_calls(fake_cli)) == 2
    assert root_status(tiny_job)["run_dir"] == first_dir


def test_resume_after_runner_and_trainer_are_killed(tiny_job, fake_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LF_STEPS", "10")
    job = {**tiny_job, "save_steps": 2}
    proc = start_runner(job, tmp_path, FAKE_LF_SLEEP="0.25")
    prepared = runner.prepare(jobspec.normalize(job), job["gpu"])
    wait_for(lambda: state.last_checkpoint(prepared.output_dir) and state.last_checkpoint(prepared.output_dir).endswith("checkpoint-4"))
    trainer_pid = int((fake_cli / "trainer.pid").read_text())
    proc.send_signal(signal.SIGKILL)  # power cut: runner and trainer die without a word
    os.kill(trainer_pid, signal.SIGKILL)
    proc.wait()
    wait_for(lambda: not state.JobLock.held_by_other(job["output_dir"]))
    assert root_status(job)["state"] == "running"  # the runner never got to write anything else

    assert cli.main(["status", "--job", str(tmp_path / "job.json")]) == 0

    assert run(job) == runner.EXIT_OK
    status = root_status(job)
    assert status["state"] == "succeeded" and status["global_step"] == 10
    first, second = status["attempts"]
    assert first["outcome"] == "interrupted" and "runner died" in first["evidence"]
    assert second["resumed_from"] in ("checkpoint-4", "checkpoint-6")
    assert read_calls(fake_cli)[-1]["config"]["resume_from_checkpoint"].endswith(second["resumed_from"])


def test_sigterm_stops_trainer_records_and_resumes(tiny_job, fake_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LF_STEPS", "40")
    proc = start_runner(tiny_job, tmp_path, FAKE_LF_SLEEP="0.1")
    prepared = runner.prepare(jobspec.normalize(tiny_job), tiny_job["gpu"])
    wait_for(lambda: state.last_checkpoint(prepared.output_dir) is not None)
    trainer_pid = int((fake_cli / "trainer.pid").read_text())
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=20)[0]
    assert proc.returncode == 128 + signal.SIGTERM, output
    with pytest.raises(ProcessLookupError):
        os.kill(trainer_pid, 0)  # the trainer went down with the runner
    status = root_status(tiny_job)
    assert status["state"] == "failed" and "interrupted by signal 15; re-run resumes from checkpoint-" in status["message"]
    assert status["attempts"][0]["outcome"] == "interrupted"

    assert run(tiny_job) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert status["attempts"][1]["resumed_from"].startswith("checkpoint-") and status["global_step"] == 40


def test_second_runner_is_locked_out(tiny_job, fake_cli, tmp_path):
    proc = start_runner(tiny_job, tmp_path, FAKE_LF_STEPS="100", FAKE_LF_SLEEP="0.1")
    try:
        wait_for(lambda: (root_status(tiny_job) or {}).get("state") == "running")
        lines = []
        assert run(tiny_job, lines) == runner.EXIT_LOCKED
        assert "not starting a second one" in lines[-1]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def test_completed_but_unrecorded_is_not_retrained(tiny_job, fake_cli):
    run(tiny_job)
    status = root_status(tiny_job)
    os.unlink(os.path.join(status["run_dir"], "status.json"))  # killed right after the trainer finished
    lines = []
    assert run(tiny_job, lines) == runner.EXIT_OK
    assert "completed before the runner could record it" in lines[-1]
    assert len(read_calls(fake_cli)) == 1


def test_refusal_does_not_train(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_TORCH_HIP", "6.4.43482")
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device("Radeon RX 6800 XT", TORCH_RX6800XT_KIB, "gfx1030")]))
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "gpu": {"vram_kb": 16760832}}
    lines = []
    assert run(job, lines) == runner.EXIT_REFUSED
    status = root_status(job)
    assert status["state"] == "failed" and status["message"].startswith("refused:") and status["plan"]["decision"] == "refuse"
    assert read_calls(fake_cli) == []


def test_env_reaches_trainer_but_not_status_or_log(tiny_job, fake_cli):
    assert run({**tiny_job, "env": {"FAKE_SECRET": "hf_s3cr3t"}}) == runner.EXIT_OK
    assert read_calls(fake_cli)[0]["env_secret"] == "hf_s3cr3t"
    run_dir = root_status(tiny_job)["run_dir"]
    for name in ("status.json", "train.log", "train.yaml", "attempt-1.yaml", "plan.json"):
        assert "hf_s3cr3t" not in open(os.path.join(run_dir, name)).read()
    assert "FAKE_SECRET" in open(os.path.join(run_dir, "train.log")).read()  # the name only


def test_missing_cli(tiny_job, fake_cli):
    assert run({**tiny_job, "llamafactory_cli": "no-such-llamafactory-cli"}) == runner.EXIT_FAILED
    assert "not found" in root_status(tiny_job)["message"]


def test_missing_local_inputs_are_reported_before_planning(tiny_job, tmp_path):
    with pytest.raises(jobspec.SpecError, match="dataset file .* does not exist"):
        run({**tiny_job, "dataset": {"name": "d", "file": str(tmp_path / "nope.json")}})
    with pytest.raises(jobspec.SpecError, match="model directory .* does not exist"):
        run({**tiny_job, "model": str(tmp_path / "no-model")})
    path = tmp_path / "job.json"
    path.write_text(json.dumps({**tiny_job, "model": str(tmp_path / "no-model")}))
    assert cli.main(["run", "--job", str(path)]) == 2


def test_fallback_to_eager_is_resized(tiny_job, fake_cli, gpu_torch, monkeypatch):
    """sdpa fits batch 2 without checkpointing; eager (disabled) at that batch would not: the retry drops to batch 1."""
    monkeypatch.setenv("FAKE_LF_FAIL_ATTN", "sdpa")
    job = {**tiny_job, "model": "Qwen/Qwen2.5-0.5B", "model_config": QWEN25_05B, "cutoff_len": 2048, "attention": "sdpa",
           "effective_batch_size": 8, "gpu": {"vram_kb": RX7900XTX_24G}}
    assert run(job) == runner.EXIT_OK
    first, second = root_status(job)["attempts"]
    assert (first["settings"]["per_device_train_batch_size"], first["settings"]["gradient_checkpointing"]) == (2, False)
    assert second["settings"] == {"flash_attn": "disabled", "packing": False, "neat_packing": False, "per_device_train_batch_size": 1,
                                  "gradient_accumulation_steps": 8, "gradient_checkpointing": False}


def _check(job, tmp_path, capsys):
    path = tmp_path / "job-check.json"
    path.write_text(json.dumps(job))
    files_before = sorted(os.walk(job["output_dir"])) if os.path.isdir(job["output_dir"]) else []
    rc = cli.main(["check", "--job", str(path)])
    result = json.loads(capsys.readouterr().out)
    after = sorted(os.walk(job["output_dir"])) if os.path.isdir(job["output_dir"]) else []
    assert files_before == after  # check never writes
    return rc, result


def test_check_says_train_before_and_done_after_and_train_again_on_change(tiny_job, fake_cli, tmp_path, capsys):
    rc, before = _check(tiny_job, tmp_path, capsys)
    assert (rc, before["refused"], before["done"], before["trained"]) == (0, False, False, False)
    assert run(tiny_job) == runner.EXIT_OK
    capsys.readouterr()
    rc, after = _check(tiny_job, tmp_path, capsys)
    assert (rc, after["done"], after["config_hash"]) == (0, True, before["config_hash"])
    changed = {**tiny_job, "learning_rate": tiny_job.get("learning_rate", 1e-4) * 2}
    rc, other = _check(changed, tmp_path, capsys)
    assert (rc, other["done"], other["trained"]) == (0, False, False) and other["config_hash"] != before["config_hash"]


def test_check_refuses_with_numbers(tiny_job, tmp_path, capsys):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B", "model_config": QWEN25_7B, "cutoff_len": 2048, "gpu": {"vram_kb": 16760832}}
    rc, result = _check(job, tmp_path, capsys)
    assert rc == runner.EXIT_REFUSED and result["refused"] is True and "GiB" in result["message"]


def test_spec_sdpa_kernel_sizes_the_plan(tiny_job):
    """The llamafactory role's sdpa_kernel reaches the plan; a spec without it plans sdpa as flash (as before)."""
    from radeonlab_lora.modelshape import ModelShape
    from radeonlab_lora.sizing import Device

    shape, device = ModelShape.from_config(QWEN25_7B), Device(48 * 2**20)
    base = {**tiny_job, "attention": "sdpa", "cutoff_len": 2048}
    old = runner.make_plan(jobspec.normalize(base), shape, device)
    flash = runner.make_plan(jobspec.normalize({**base, "sdpa_kernel": "flash"}), shape, device)
    math_ = runner.make_plan(jobspec.normalize({**base, "sdpa_kernel": "math"}), shape, device)
    assert old.as_dict() == flash.as_dict()
    assert (flash.attention_memory, flash.gradient_checkpointing) == ("sdpa", False)
    assert (math_.attention_memory, math_.gradient_checkpointing) == ("math", True)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Status file, checkpoints, done detection, the job lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from radeonlab_lora import state


def _checkpoint(output, step, complete=True):
    path = output / f"checkpoint-{step}"
    path.mkdir(parents=True)
    if complete:
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))


def test_last_checkpoint_is_numeric_and_complete(tmp_path):
    _checkpoint(tmp_path, 9)
    _checkpoint(tmp_path, 10)
    _checkpoint(tmp_path, 12, complete=False)  # being written when killed
    (tmp_path / "checkpoint-x").mkdir()
    assert state.last_checkpoint(str(tmp_path)) == str(tmp_path / "checkpoint-10")
    assert [entry[0] for entry in state.checkpoints(str(tmp_path))] == [9, 10]
    assert state.last_checkpoint(str(tmp_path / "missing")) is None


def test_atomic_write_and_torn_read(tmp_path):
    path = tmp_path / "s" / "status.json"
    state.write_json_atomic(str(path), {"state": "running"})
    assert state.read_json(str(path)) == {"state": "running"}
    assert not [name for name in os.listdir(tmp_path / "s") if name.startswith(".tmp")]
    path.write_text('{"state": "runn')
    assert state.read_json(str(path)) is None
    path.write_text("[1]")
    assert state.read_json(str(path)) is None


def test_write_text_if_changed(tmp_path):
    path = str(tmp_path / "a" / "f.txt")
    assert state.write_text_if_changed(path, "x")
    assert not state.write_text_if_changed(path, "x")
    assert state.write_text_if_changed(path, "y")


def test_is_done_needs_status_hash_and_adapter(tmp_path):
    run_dir = tmp_path / "abc"
    output = run_dir / "output"
    output.mkdir(parents=True)
    state.write_json_atomic(str(run_dir / "status.json"), state.new_status("h1", str(run_dir), state="succeeded"))
    assert not state.is_done(str(run_dir), "h1")  # no adapter yet
    (output / "adapter_model.safetensors").write_text("w")
    (output / "adapter_config.json").write_text("{}")
    assert state.is_done(str(run_dir), "h1")
    assert not state.is_done(str(run_dir), "h2")
    (output / "adapter_model.safetensors").write_text("")
    assert not state.is_done(str(run_dir), "h1")  # an empty adapter is not an adapter


def test_training_completed_and_final_metrics(tmp_path):
    for name in state.ADAPTER_FILES:
        (tmp_path / name).write_text("x")
    assert not state.training_completed(str(tmp_path))
    history = [{"loss": 3.0}, {"eval_loss": 1}, {"loss": 1.5}]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 6, "max_steps": 6, "log_history": history}))
    assert state.training_completed(str(tmp_path))
    assert state.final_metrics(str(tmp_path)) == {"global_step": 6, "max_steps": 6, "first_loss": 3.0, "final_loss": 1.5,
                                                  "first_eval_loss": 1, "final_eval_loss": 1}
    (tmp_path / "eval_results.json").write_text(json.dumps({"eval_loss": 0.75}))  # LLaMA-Factory's evaluation after the last step
    assert state.final_metrics(str(tmp_path))["final_eval_loss"] == 0.75


def test_final_metrics_without_held_out_samples_has_no_eval_loss(tmp_path):
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 2, "log_history": [{"loss": 2.0}, {"loss": 1.0}]}))
    metrics = state.final_metrics(str(tmp_path))
    assert (metrics["first_eval_loss"], metrics["final_eval_loss"], metrics["final_loss"]) == (None, None, 1.0)


def test_clear_unresumable_output(tmp_path):
    out = tmp_path / "output"
    out.mkdir()
    (out / "trainer_log.jsonl").write_text("{}\n")
    assert state.clear_unresumable_output(str(out)) and not out.exists()
    out.mkdir()
    _checkpoint(out, 2)
    assert not state.clear_unresumable_output(str(out)) and out.exists()


def test_lock_is_exclusive_and_visible(tmp_path):
    first = state.JobLock(str(tmp_path))
    assert first.acquire()
    second = state.JobLock(str(tmp_path))
    assert not second.acquire(timeout_s=0.2)
    assert state.JobLock.held_by_other(str(tmp_path))
    first.release()
    assert not state.JobLock.held_by_other(str(tmp_path))
    assert second.acquire(timeout_s=0.2)
    second.release()


def test_lock_is_inherited_by_a_child_that_outlives_the_holder(tmp_path):
    lock = state.JobLock(str(tmp_path))
    assert lock.acquire()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"], pass_fds=(lock.fd,))
    os.close(lock.fd)  # the holder "dies" without unlocking
    lock.fd = None
    try:
        assert state.JobLock.held_by_other(str(tmp_path))
    finally:
        child.wait()
    assert not state.JobLock.held_by_other(str(tmp_path))

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""export: merged - llamafactory-cli export after training, sized against the free disk before anything trains."""

from __future__ import annotations

import collections
import json
import os

from lora_cases import QWEN25_7B, read_calls

from radeonlab_lora import cli, export, runner, spec as jobspec, state

Usage = collections.namedtuple("Usage", "total used free")


def run(job, lines=None):
    out = lines if lines is not None else []
    return runner.run_job(jobspec.normalize(job), job.get("gpu"), out.append)


def exports(fake_cli):
    path = fake_cli / "exports.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def root_status(job):
    return state.read_json(os.path.join(job["output_dir"], "status.json"))


def check(job, tmp_path, capsys):
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    code = cli.main(["check", "--job", str(path)])
    return code, json.loads(capsys.readouterr().out)


def test_the_export_config_merges_on_the_cpu_into_the_run_dir():
    spec = jobspec.normalize({"model": "/m", "template": "qwen", "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o",
                              "export": "merged"})
    cfg = export.config(spec, "/o/abc")
    assert (cfg["adapter_name_or_path"], cfg["export_dir"], cfg["export_device"], cfg["export_legacy_format"]) == (
        "/o/abc/output", "/o/abc/merged", "cpu", False)
    assert cfg["finetuning_type"] == "lora" and cfg["model_name_or_path"] == "/m"


def test_the_size_is_the_local_weights_or_the_parameters_in_the_configs_dtype(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"x" * 1000)
    (model / "tokenizer.json").write_bytes(b"x" * 5000)  # not weights
    local = jobspec.normalize({"model": str(model), "template": "qwen", "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o"})
    assert export.needed_bytes(local, params=10**9) == int(1000 * export.MARGIN) + export.SLACK_BYTES
    hub = jobspec.normalize({"model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "template": "qwen",
                             "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o"})
    assert export.needed_bytes(hub, params=7_615_616_512) == int(7_615_616_512 * 2 * export.MARGIN) + export.SLACK_BYTES


def test_a_merged_export_is_written_once_after_training(tiny_job, fake_cli, tmp_path, capsys):
    job = {**tiny_job, "export": "merged"}
    assert run(job) == runner.EXIT_OK
    status = root_status(job)
    merged = os.path.join(status["run_dir"], "merged")
    assert status["state"] == "succeeded" and status["export"]["state"] == "merged" and status["export"]["dir"] == merged
    assert status["export"]["files"] == ["config.json", "model.safetensors", "tokenizer.json"] and status["export"]["bytes"] > 0
    assert len(exports(fake_cli)) == 1 and exports(fake_cli)[0]["adapter_name_or_path"] == os.path.join(status["run_dir"], "output")
    assert run(job) == runner.EXIT_OK and len(exports(fake_cli)) == 1, "a re-run exports nothing"
    code, printed = check(job, tmp_path, capsys)
    assert code == 0 and printed["done"] is True


def test_an_export_asked_for_later_is_written_without_training_again(tiny_job, fake_cli, tmp_path, capsys):
    assert run(tiny_job) == runner.EXIT_OK
    job = {**tiny_job, "export": "merged"}
    printed = check(job, tmp_path, capsys)[1]
    assert (printed["done"], printed["trained"]) == (False, True), "owed an export, trained earlier"
    lines = []
    assert run(job, lines) == runner.EXIT_OK
    assert len(read_calls(fake_cli)) == 1 and len(exports(fake_cli)) == 1
    assert lines[-1].startswith("succeeded: after-training steps done; trained earlier")


def test_a_disk_too_small_for_the_merged_model_is_refused_before_training(tiny_job, fake_cli, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(export.shutil, "disk_usage", lambda path: Usage(1 << 30, 1 << 30, 1 << 20))
    code, printed = check({**tiny_job, "export": "merged"}, tmp_path, capsys)
    assert code == runner.EXIT_REFUSED and printed["refusal"] == "disk" and not read_calls(fake_cli)
    assert "export: merged needs 0.1 GiB for the merged model" in printed["message"] and "only 0.0 GiB are free" in printed["message"]
    assert check(tiny_job, tmp_path, capsys)[0] == 0, "the adapter alone needs no such room"


def test_a_failed_export_is_recorded_and_the_trained_job_still_succeeds(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_FAIL_EXPORT", "1")
    assert run({**tiny_job, "export": "merged"}) == runner.EXIT_OK
    status = root_status(tiny_job)
    assert status["state"] == "succeeded"
    assert status["export"] == {"state": "failed", "message": "llamafactory-cli export exited 1 (export.log)", "dir": None}
    assert not os.path.exists(os.path.join(status["run_dir"], "merged", export.MARKER))


def test_only_rank_0_exports(tiny_job):
    spec = jobspec.normalize({**tiny_job, "export": "merged"})
    assert export.pending(spec, "/nowhere", "h", node_rank=0) and not export.pending(spec, "/nowhere", "h", node_rank=1)

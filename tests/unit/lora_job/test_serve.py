# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lora_job_serve: the API config the play writes, and the one way the three after-training steps load the model."""

from __future__ import annotations

import json

import pytest

from radeonlab_lora import cli, export, inference, samples, spec as jobspec

JOB = {"model": "Qwen/Qwen2.5-0.5B-Instruct", "model_revision": "v1.0", "template": "qwen", "trust_remote_code": True,
       "dataset": {"name": "d", "file": "/d.json"}, "sample_prompts": ["hi"], "export": "merged"}


def _spec(tmp_path):
    return jobspec.normalize({**JOB, "output_dir": str(tmp_path / "runs")})


def test_the_api_serves_this_runs_adapter_on_the_base_model_with_the_jobs_template(tmp_path):
    spec = _spec(tmp_path)
    run_dir = str(tmp_path / "runs" / "abc")
    assert inference.api_config(spec, run_dir) == {
        "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "model_revision": "v1.0", "template": "qwen", "finetuning_type": "lora",
        "trust_remote_code": True, "adapter_name_or_path": run_dir + "/output", "infer_backend": "huggingface"}


def test_samples_export_and_api_load_the_same_model_and_adapter(tmp_path):
    spec = _spec(tmp_path)
    run_dir = str(tmp_path / "runs" / "abc")
    loaded = ("model_name_or_path", "model_revision", "template", "finetuning_type", "trust_remote_code", "adapter_name_or_path")
    api = inference.api_config(spec, run_dir)
    sampled = samples.chat_args(samples.request(spec, run_dir), with_adapter=True)
    exported = export.config(spec, run_dir)
    assert [{key: cfg[key] for key in loaded} for cfg in (sampled, exported)] == [{key: api[key] for key in loaded}] * 2
    assert "adapter_name_or_path" not in samples.chat_args(samples.request(spec, run_dir), with_adapter=False)


def test_api_config_prints_the_config_for_a_run_dir_of_the_job(tmp_path, capsys):
    job = tmp_path / "job.json"
    job.write_text(json.dumps({**JOB, "output_dir": str(tmp_path / "runs")}))
    assert cli.main(["api-config", "--job", str(job), "--run-dir", str(tmp_path / "runs" / "abc")]) == 0
    assert json.loads(capsys.readouterr().out)["adapter_name_or_path"] == str(tmp_path / "runs" / "abc" / "output")


@pytest.mark.parametrize("args, error", [
    ([], "api-config needs --run-dir"),
    (["--run-dir", "/etc"], "is not a run directory of this job"),
])
def test_api_config_refuses_a_missing_or_foreign_run_dir(tmp_path, capsys, args, error):
    job = tmp_path / "job.json"
    job.write_text(json.dumps({**JOB, "output_dir": str(tmp_path / "runs")}))
    assert cli.main(["api-config", "--job", str(job)] + args) == 2
    assert error in capsys.readouterr().err

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report_to (lora_job_report_to): the spec's choices, LLaMA-Factory's report_to, the trainer's tracker environment, and a
config hash that does not change with it (a finished job is not trained again because its curves go elsewhere)."""

from __future__ import annotations

import json
import os
import re

import pytest
from lora_cases import matching_view, read_calls

from radeonlab_lora import render, runner, spec as jobspec, state
from radeonlab_lora.spec import SpecError

URI = "https://tracker:SecretMlflowPw8@mlflow.example:5000"
QUIET = {"MLFLOW_DISABLE_TELEMETRY": "true"}  # mlflow 3.x's usage telemetry off


@pytest.fixture(autouse=True)
def no_tracker_env(monkeypatch):
    for name in ("TENSORBOARD_LOGGING_DIR", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_TRACKING_URI", "MLFLOW_DISABLE_TELEMETRY"):
        monkeypatch.delenv(name, raising=False)


def _prepared(job):
    return runner.prepare(jobspec.normalize(job), job.get("gpu"), matching_view(job.get("gpu")))


# report_to given (absent: not in the job) -> the spec's value, or a fragment of the refusal
SPEC_CASES = {
    "absent": ("absent", "none"),
    "none": ("none", "none"),
    "tensorboard": ("tensorboard", "tensorboard"),
    "mlflow": ("mlflow", "mlflow"),
    "a tracker the role does not offer": ("wandb", "report_to must be one of ['none', 'tensorboard', 'mlflow'], got 'wandb'"),
    "a list": (["tensorboard"], "report_to must be one of ['none', 'tensorboard', 'mlflow'], got ['tensorboard']"),
    "empty": ("", "report_to must be one of"),
}


@pytest.mark.parametrize("given, expected", SPEC_CASES.values(), ids=list(SPEC_CASES))
def test_the_spec_takes_none_tensorboard_or_mlflow(tiny_job, given, expected):
    job = dict(tiny_job) if given == "absent" else {**tiny_job, "report_to": given}
    if expected in jobspec.REPORT_TO_CHOICES:
        assert jobspec.normalize(job)["report_to"] == expected
    else:
        with pytest.raises(SpecError, match=re.escape(expected)):
            jobspec.normalize(job)


# report_to, the runner's environment -> what the trainer's environment gets besides it ({output}: the adapter's folder)
ENV_CASES = {
    "none": ("none", {}, {}),
    "tensorboard: the event files in <output>/runs": ("tensorboard", {}, {"TENSORBOARD_LOGGING_DIR": "{output}/runs"}),
    "mlflow: the job's name as the experiment": ("mlflow", {"MLFLOW_TRACKING_URI": URI}, {"MLFLOW_EXPERIMENT_NAME": "tiny", **QUIET}),
    "mlflow: an experiment the environment names": ("mlflow", {"MLFLOW_TRACKING_URI": URI, "MLFLOW_EXPERIMENT_NAME": "team"},
                                                    {"MLFLOW_EXPERIMENT_NAME": "team", **QUIET}),
}


@pytest.mark.parametrize("report_to, env, added", ENV_CASES.values(), ids=list(ENV_CASES))
def test_the_config_says_report_to_and_the_trainer_gets_the_tracker_environment(tiny_job, report_to, env, added):
    prepared = _prepared({**tiny_job, "report_to": report_to})
    assert prepared.train_config()["report_to"] == report_to
    assert "logging_dir" not in prepared.train_config()  # deprecated in transformers 5 and unread: the variable says it
    expected = {name: value.format(output=prepared.output_dir) for name, value in added.items()}
    assert render.tracker_env(prepared.spec, prepared.output_dir, env) == expected


@pytest.mark.parametrize("env", [{}, {"MLFLOW_TRACKING_URI": ""}, {"MLFLOW_EXPERIMENT_NAME": "team"}])
def test_mlflow_without_a_tracking_uri_is_refused(tiny_job, env):
    prepared = _prepared({**tiny_job, "report_to": "mlflow"})
    with pytest.raises(render.RenderError, match="report_to mlflow needs MLFLOW_TRACKING_URI"):
        render.tracker_env(prepared.spec, prepared.output_dir, env)


@pytest.mark.parametrize("report_to", ["tensorboard", "mlflow"])
def test_where_the_curves_go_does_not_change_the_config_hash(tiny_job, report_to):
    base, reporting = _prepared(tiny_job), _prepared({**tiny_job, "report_to": report_to})
    assert reporting.config_hash == base.config_hash and reporting.run_dir == base.run_dir
    assert render.config_text(reporting.train_config()) != render.config_text(base.train_config())


def test_a_tensorboard_job_gives_the_trainer_its_event_folder(tiny_job, fake_cli):
    job = {**tiny_job, "report_to": "tensorboard"}
    assert runner.run_job(jobspec.normalize(job), job["gpu"], lambda line: None) == runner.EXIT_OK
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    [call] = read_calls(fake_cli)
    assert call["config"]["report_to"] == "tensorboard"
    assert call["trackers"] == {"TENSORBOARD_LOGGING_DIR": os.path.join(status["output_dir"], "runs")}


def test_a_job_done_without_a_tracker_is_not_trained_again_for_one(tiny_job, fake_cli):
    assert runner.run_job(jobspec.normalize(tiny_job), tiny_job["gpu"], lambda line: None) == runner.EXIT_OK
    lines = []
    job = {**tiny_job, "report_to": "tensorboard"}
    assert runner.run_job(jobspec.normalize(job), job["gpu"], lines.append) == runner.EXIT_OK
    assert lines[-1].startswith("already done") and len(read_calls(fake_cli)) == 1


def test_mlflow_without_a_tracking_uri_fails_before_the_trainer_starts(tiny_job, fake_cli):
    lines = []
    job = {**tiny_job, "report_to": "mlflow"}
    assert runner.run_job(jobspec.normalize(job), job["gpu"], lines.append) == runner.EXIT_FAILED
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    assert status["state"] == "failed" and "needs MLFLOW_TRACKING_URI" in status["message"] and status["attempts"] == []
    assert read_calls(fake_cli) == []


def test_mlflow_reaches_the_trainer_and_its_uri_stays_out_of_status_and_log(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", URI)  # the unit's environment file
    job = {**tiny_job, "report_to": "mlflow"}
    assert runner.run_job(jobspec.normalize(job), job["gpu"], lambda line: None) == runner.EXIT_OK
    [call] = read_calls(fake_cli)
    assert call["trackers"] == {"MLFLOW_TRACKING_URI": URI, "MLFLOW_EXPERIMENT_NAME": "tiny", **QUIET}
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    written = {name: open(os.path.join(status["run_dir"], name), encoding="utf-8").read()
               for name in ("status.json", "train.log", "train.yaml", "attempt-1.yaml")}
    assert [name for name, text in written.items() if "SecretMlflowPw8" in text] == []
    assert json.loads(written["train.yaml"])["report_to"] == "mlflow"

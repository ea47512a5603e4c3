# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lora_job_report_to in the role: the job spec's report_to, the preflight's refusals (the MLflow URI never shown whole), the
unit's environment file, and which event files on the controller results_tensorboard.yml removes."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "lora_job"))
PASSWORD = "SecretMlflowPw8"
URI = "https://tracker:%s@mlflow.example:5000" % PASSWORD


def _templar(**given):
    loader = DataLoader()
    variables = {}
    for part in ("defaults", "vars"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part, "main.yml"), trusted_as_template=True))
    variables.update({"lora_job_name": "job", "lora_job_model": "/srv/model", "inventory_hostname": "h", "ansible_facts": {},
                      "ansible_play_hosts_all": ["h"], "playbook_dir": "/ctl"}, **given)
    return Templar(loader=loader, variables=variables)


def _task(name, prefix):
    with open(os.path.join(ROLE, "tasks", name), encoding="utf-8") as handle:
        return next(entry for entry in yaml.safe_load(handle) if entry["name"].startswith(prefix))


def _trusted(variables):
    """A task's vars as the play reads them (templates, not plain strings)."""
    return {name: trust_as_template(value) for name, value in variables.items()}


@pytest.mark.parametrize("given, spec", [({}, "none"), ({"lora_job_report_to": "tensorboard"}, "tensorboard"),
                                         ({"lora_job_report_to": "mlflow", "lora_job_mlflow_tracking_uri": URI}, "mlflow")])
def test_the_job_spec_carries_report_to_and_never_the_tracking_uri(given, spec):
    rendered = _templar(**given).template(trust_as_template("{{ _lora_job_spec }}"))
    assert rendered["report_to"] == spec and PASSWORD not in repr(rendered)


# lora_job_report_to, lora_job_mlflow_tracking_uri -> fragments of the preflight's problems (empty: accepted)
PREFLIGHT = {
    "none": ("none", "", []),
    "tensorboard": ("tensorboard", "", []),
    "mlflow to a server": ("mlflow", URI, []),
    "mlflow to a plain http server": ("mlflow", "http://10.0.0.5:5000", []),
    "mlflow without a server": ("mlflow", "", ["lora_job_report_to mlflow logs only to the MLflow server you name",
                                               "set lora_job_mlflow_tracking_uri"]),
    "a tracker the role does not offer": ("wandb", "", ["lora_job_report_to must be none, tensorboard or mlflow (got 'wandb')"]),
    "a server without a scheme": ("mlflow", "tracker:%s@mlflow.example" % PASSWORD, ["lora_job_mlflow_tracking_uri", "has no scheme"]),
    "a server of another scheme": ("mlflow", "file:///srv/mlruns", ["lora_job_mlflow_tracking_uri must be a https:// or http:// URL"]),
    "a newline in the URI": ("mlflow", URI + "\nX=1", ["lora_job_mlflow_tracking_uri contains a control character"]),
}


@pytest.mark.parametrize("report_to, uri, fragments", PREFLIGHT.values(), ids=list(PREFLIGHT))
def test_the_preflight_refuses_mlflow_without_a_server_and_never_shows_its_password(report_to, uri, fragments):
    templar = _templar(lora_job_report_to=report_to, lora_job_mlflow_tracking_uri=uri,
                       **_trusted(_task("preflight_outbound.yml", "Check where the trainer reports")["vars"]))
    problems = " | ".join(templar.template(trust_as_template("{{ __lora_job_report_problems }}")))
    for fragment in fragments:
        assert fragment in problems, problems
    assert bool(problems) is bool(fragments), problems
    assert PASSWORD not in problems


@pytest.mark.parametrize("report_to, line", [("none", None), ("tensorboard", None),
                                             ("mlflow", 'MLFLOW_TRACKING_URI="https://tracker:%s@mlflow.example:5000"' % PASSWORD)])
def test_the_tracking_uri_goes_into_the_root_only_environment_file_with_mlflow_only(report_to, line):
    with open(os.path.join(ROLE, "templates", "lora.env.j2"), encoding="utf-8") as handle:
        template = handle.read()
    text = _templar(lora_job_report_to=report_to, lora_job_mlflow_tracking_uri=URI, ansible_managed="managed").template(
        trust_as_template(template))
    found = [entry for entry in text.splitlines() if entry.startswith("MLFLOW_")]
    assert found == ([line] if line else [])


def test_the_controller_keeps_this_runs_event_files_and_removes_an_earlier_runs(tmp_path):
    folder = tmp_path / "h" / "tensorboard"
    folder.mkdir(parents=True)
    for name in ("events.out.tfevents.1.h.1.0", "events.out.tfevents.2.h.7.0", "notes.txt"):
        (folder / name).write_text("x")
    found = {"files": [{"path": "/var/lib/radeonlab/lora/job/runs/abc/output/runs/events.out.tfevents.2.h.7.0"},
                       {"path": "/var/lib/radeonlab/lora/job/runs/abc/output/runs/events.out.tfevents.3.h.8.0"}]}
    loop = _task("results_tensorboard.yml", "Remove")["loop"]
    stale = _templar(lora_job_results_dir=str(tmp_path), __lora_job_events=found).template(trust_as_template(loop))
    assert stale == [str(folder / "events.out.tfevents.1.h.1.0")]

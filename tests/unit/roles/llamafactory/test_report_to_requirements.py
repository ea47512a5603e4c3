# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""llamafactory_report_to: the tracker package lora_job_report_to needs joins the venv's pinned requirements (the same
wheelhouse and pip job), and site.yml passes the job's choice."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
ROLE = os.path.join(ROOT, "roles", "llamafactory")


def _requirements(**given):
    loader = DataLoader()
    variables = {}
    for part in ("defaults", "vars"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part, "main.yml"), trusted_as_template=True))
    variables.update({"llamafactory_bitsandbytes": False, "llamafactory_metrics": False}, **given)
    return Templar(loader=loader, variables=variables).template(trust_as_template("{{ _llamafactory_requirements }}"))


@pytest.mark.parametrize("report_to, added", [("none", []), ("tensorboard", ["tensorboardX==2.6.5"]),
                                              ("mlflow", ["mlflow-skinny==3.18.0"])])
def test_the_trackers_package_is_installed_pinned_with_the_rest(report_to, added):
    assert _requirements(llamafactory_report_to=report_to) == ["llamafactory==0.9.5"] + added


def test_site_passes_the_jobs_choice_to_the_llamafactory_role():
    with open(os.path.join(ROOT, "playbooks", "site.yml"), encoding="utf-8") as handle:
        plays = yaml.safe_load(handle)
    tasks = [task for play in plays for task in play.get("tasks", [])]
    [llamafactory] = [task for task in tasks if task.get("ansible.builtin.import_role", {}).get("name") == "radeonlab.llm.llamafactory"]
    assert llamafactory["vars"]["llamafactory_report_to"] == "{{ lora_job_report_to | default('none') }}"

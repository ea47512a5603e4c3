# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/venv_pip/vars/main.yml: the background job's shell runs pip for venv_pip_requirements, then (where there are any)
pip --no-deps for venv_pip_no_deps, each with its own pid in the lock; the first failing pip ends the job with its status."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "venv_pip"))
# A stand-in for `python -m pip install ...`: logs its arguments, its pid and the lock's content; FAKE_PIP_FAIL_ON fails it.
FAKE_PIP = """
import json, os, sys
with open(os.environ["FAKE_PIP_LOCK"]) as handle:
    held = handle.read().strip()
with open(os.environ["FAKE_PIP_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "pid": os.getpid(), "lock": held}) + "\\n")
sys.exit(3 if os.environ.get("FAKE_PIP_FAIL_ON", "-") in sys.argv[1:] else 0)
"""


def _render(expression, **given):
    loader = DataLoader()
    variables = {}
    for part in ("defaults", "vars"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part, "main.yml"), trusted_as_template=True))
    variables.update(given)
    return Templar(loader=loader, variables=variables).template(trust_as_template(expression))


def _job(tmp_path, requirements, no_deps, fail_on=None):
    fake = tmp_path / "fake_pip.py"
    fake.write_text(FAKE_PIP)
    lock, log = tmp_path / "lock", tmp_path / "log.jsonl"
    lock.write_text("")
    script = _render("{{ _venv_pip_script }}", venv_pip_requirements=requirements, venv_pip_no_deps=no_deps)
    env = dict(os.environ, FAKE_PIP_LOCK=str(lock), FAKE_PIP_LOG=str(log), FAKE_PIP_FAIL_ON=fail_on or "-")
    # as main.yml runs it under flock: sh -c SCRIPT LOCK + venv_pip_argv (+ --force-reinstall)
    proc = subprocess.run(["sh", "-c", script, str(lock), sys.executable, str(fake), "install", "--force-reinstall"],
                          env=env, check=False, timeout=60)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return script, proc.returncode, calls


def test_without_no_deps_the_shell_becomes_the_one_pip(tmp_path):
    script, rc, calls = _job(tmp_path, ["torch==2.9.1+rocm6.4", "a b"], [])
    assert script.startswith("exec sh -c ") and "--no-deps" not in script
    assert rc == 0 and [c["argv"] for c in calls] == [["install", "--force-reinstall", "torch==2.9.1+rocm6.4", "a b"]]
    assert calls[0]["lock"] == str(calls[0]["pid"])


def test_no_deps_follow_in_a_second_pip_with_its_own_pid(tmp_path):
    _script, rc, calls = _job(tmp_path, ["llamafactory==0.9.5", "bitsandbytes==0.50.2"], ["liger-kernel==0.8.5"])
    assert rc == 0
    assert [c["argv"] for c in calls] == [["install", "--force-reinstall", "llamafactory==0.9.5", "bitsandbytes==0.50.2"],
                                          ["install", "--force-reinstall", "--no-deps", "liger-kernel==0.8.5"]]
    assert [c["lock"] for c in calls] == [str(c["pid"]) for c in calls] and calls[0]["pid"] != calls[1]["pid"]


@pytest.mark.parametrize("fail_on, pips", [("llamafactory==0.9.5", 1), ("liger-kernel==0.8.5", 2)])
def test_a_failing_pip_ends_the_job_with_its_status(tmp_path, fail_on, pips):
    _script, rc, calls = _job(tmp_path, ["llamafactory==0.9.5"], ["liger-kernel==0.8.5"], fail_on=fail_on)
    assert (rc, len(calls)) == (3, pips)


@pytest.mark.parametrize("given, secret", [
    ({"venv_pip_argv": ["pip", "--index-url", "https://u:pw@mirror.lan/simple"], "venv_pip_requirements": ["a==1"]}, True),
    ({"venv_pip_argv": ["pip"], "venv_pip_requirements": ["a @ https://u:pw@mirror.lan/a-1.whl"]}, True),
    ({"venv_pip_argv": ["pip"], "venv_pip_requirements": ["a==1"], "venv_pip_no_deps": ["liger-kernel==0.8.5"]}, False),
])
def test_a_credential_anywhere_in_pips_arguments_turns_the_log_off(given, secret):
    assert _render("{{ _venv_pip_has_credentials }}", **given) is secret

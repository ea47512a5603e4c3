# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``status --wait S --unit U``: the verdict (succeeded|failed|running|died) the role loops on."""

from __future__ import annotations

import json
import os
import stat
import threading
import time

import pytest

from radeonlab_lora import cli, state


@pytest.fixture
def systemctl(tmp_path, monkeypatch):
    """A fake systemctl first on PATH; set its answer with the returned function (None: no systemctl at all)."""
    bindir = tmp_path / "sbin"
    bindir.mkdir()
    script = bindir / "systemctl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")

    def answer(unit_state):
        if unit_state is None:
            monkeypatch.setenv("PATH", str(tmp_path / "empty"))
            return
        script.write_text(f'#!/bin/sh\n[ "$1 $2" = "is-active radeonlab-lora-tiny.service" ] || exit 9\necho {unit_state}\n'
                          f'[ {unit_state} = active ]\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)

    return answer


def _job(tiny_job, tmp_path):
    path = tmp_path / "job.json"
    path.write_text(json.dumps(tiny_job))
    return str(path)


def _status(job, capsys, *extra):
    assert cli.main(["status", "--job", job, *extra]) == 0
    body, last = capsys.readouterr().out.rstrip("\n").rsplit("\n", 1)
    return json.loads(body), last


def _write_state(tiny_job, name, **fields):
    state.write_json_atomic(os.path.join(tiny_job["output_dir"], "status.json"),
                            state.new_status("h", "/x", state=name, output_dir="/x/output", **fields))


UNIT = ["--unit", "radeonlab-lora-tiny.service"]


@pytest.mark.parametrize("job_state, unit_state, verdict, stale", [
    ("succeeded", "inactive", "succeeded", False),
    ("failed", "inactive", "failed", False),
    ("failed", "active", "running", False),  # an earlier run's failure while the restarted unit starts up
    ("failed", "deactivating", "running", False),  # the runner is writing its verdict
    ("running", "active", "running", False),
    ("running", "activating", "running", False),
    ("running", "inactive", "died", True),
    ("running", "failed", "died", True),
    ("running", None, "died", True),  # no systemctl: not active
    ("queued", "inactive", "died", True),
])
def test_verdict(tiny_job, tmp_path, capsys, systemctl, job_state, unit_state, verdict, stale):
    systemctl(unit_state)
    _write_state(tiny_job, job_state)
    status, last = _status(_job(tiny_job, tmp_path), capsys, *UNIT)
    assert (status["verdict"], status.get("stale", False), last) == (verdict, stale, f"{job_state}: no progress yet")


def test_a_held_lock_is_a_live_job_without_a_unit(tiny_job, tmp_path, capsys):
    _write_state(tiny_job, "running")
    lock = state.JobLock(tiny_job["output_dir"])
    assert lock.acquire()
    try:
        # flock is per open file description: held_by_other sees this process's lock as another holder's
        assert _status(_job(tiny_job, tmp_path), capsys)[0]["verdict"] == "running"
    finally:
        lock.release()
    assert _status(_job(tiny_job, tmp_path), capsys)[0]["verdict"] == "died"


def test_wait_returns_as_soon_as_the_job_ends(tiny_job, tmp_path, capsys, systemctl):
    systemctl("active")
    _write_state(tiny_job, "running")
    timer = threading.Timer(0.5, lambda: _write_state(tiny_job, "succeeded", final_loss=1.0))
    timer.start()
    started = time.monotonic()
    status, last = _status(_job(tiny_job, tmp_path), capsys, "--wait", "20", *UNIT)
    timer.join()
    assert (status["verdict"], last) == ("succeeded", "succeeded: no progress yet") and time.monotonic() - started < 5


def test_wait_gives_up_after_the_given_seconds(tiny_job, tmp_path, capsys, systemctl):
    systemctl("active")
    _write_state(tiny_job, "running")
    started = time.monotonic()
    status, _last = _status(_job(tiny_job, tmp_path), capsys, "--wait", "1.2", *UNIT)
    assert status["verdict"] == "running" and 1.1 < time.monotonic() - started < 4


def test_wait_does_not_wait_for_a_dead_job(tiny_job, tmp_path, capsys, systemctl):
    systemctl("inactive")
    _write_state(tiny_job, "running")
    started = time.monotonic()
    assert _status(_job(tiny_job, tmp_path), capsys, "--wait", "30", *UNIT)[0]["verdict"] == "died"
    assert time.monotonic() - started < 3

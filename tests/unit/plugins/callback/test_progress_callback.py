# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The progress callback: a polling task prints one progress line per poll, never "FAILED - RETRYING"."""

import os
import subprocess
import sys

import pytest

from ansible_collections.radeonlab.llm.plugins.callback.progress import progress_line

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - name: Wait for a file that never comes
      ansible.builtin.stat:
        path: {missing}
      register: found
      until: found.stat.exists
      retries: 3
      delay: 1
      ignore_errors: true
"""


@pytest.mark.parametrize(
    "attempt, polls, waited, delay, line",
    [
        (1, 60, 0.4, 10, "waiting [h1]: Wait for pip - poll 1 of 60, 0:00:00 so far, up to 0:09:50 more"),
        (59, 60, 3599, 10, "waiting [h1]: Wait for pip - poll 59 of 60, 0:59:59 so far, up to 0:00:10 more"),
        (5, 3, 7, 2, "waiting [h1]: Wait for pip - poll 5 of 3, 0:00:07 so far, up to 0:00:00 more"),
    ],
)
def test_progress_line(attempt, polls, waited, delay, line):
    assert progress_line("h1", "Wait for pip", attempt, polls, waited, delay) == line


def test_a_polling_task_prints_progress_lines(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY.format(missing=tmp_path / "never"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    env.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collection_path"), ANSIBLE_STDOUT_CALLBACK="radeonlab.llm.progress",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path), HOME=str(tmp_path))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=" + sys.executable, str(tmp_path / "play.yml")]
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    out = run.stdout + run.stderr
    polls = [line for line in out.splitlines() if line.startswith("waiting [localhost]: Wait for a file that never comes - poll ")]
    assert [line.split(" - poll ")[1].split(",")[0] for line in polls] == ["1 of 3", "2 of 3", "3 of 3"], out
    assert "RETRYING" not in out and "ignored=1" in out, out

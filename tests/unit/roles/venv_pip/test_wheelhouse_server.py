# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/venv_pip/files/wheelhouse_server.py: what it serves, pip's hash check through it, its lifetime.

The server is started the way the role starts it, from a process under an ``ansible-playbook`` command
line (here a stand-in script of that name), and must end when that process ends.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request

import pytest

SERVER = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "venv_pip", "files",
                                      "wheelhouse_server.py"))
DEMO = "demo-1.0-py3-none-any.whl"
OTHER = "other-1.0-py3-none-any.whl"

# Stands in for ansible-playbook: runs `wheelhouse_server.py start ...` COUNT times as its child (as a task
# would), prints each JSON answer on a line, then waits until it is killed.
PLAYBOOK = textwrap.dedent("""
    import subprocess, sys, time
    count, argv = int(sys.argv[1]), sys.argv[2:]
    for _ in range(count):
        out = subprocess.run([sys.executable] + argv, stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
        print(out.strip(), flush=True)
    while True:
        time.sleep(1)
""")


def _sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def house(tmp_path, demo_wheel):
    """A wheelhouse as wheelhouse.py leaves it: one recorded wheel, plus things that must never be served."""
    demo_wheel(tmp_path / DEMO, "VALUE = 1\n")
    demo_wheel(tmp_path / OTHER, "VALUE = 2\n")  # on disk but recorded by no download
    (tmp_path / "notes.txt").write_text("not a wheel\n")
    (tmp_path / "sub").mkdir()
    state = tmp_path / ".radeonlab"
    state.mkdir()
    (state / "abc.json").write_text(json.dumps({"files": [
        {"name": DEMO, "size": os.path.getsize(tmp_path / DEMO), "sha256": _sha256(tmp_path / DEMO)}]}))
    (state / "abc.log").write_text("$ pip download --index-url https://user:secret@mirror/simple\n")
    return tmp_path


class Playbook:
    def __init__(self, tmp_path, house, port, count=1, binds=("127.0.0.1",)):
        launcher = tmp_path / "bin" / "ansible-playbook"
        launcher.parent.mkdir(exist_ok=True)
        launcher.write_text(PLAYBOOK)
        argv = [SERVER, "start", "--dir", str(house), "--port", str(port)] + ["--bind=%s" % b for b in binds]
        self.proc = subprocess.Popen([sys.executable, str(launcher), str(count)] + argv,
                                     stdout=subprocess.PIPE, universal_newlines=True)
        self.answers = [json.loads(self.proc.stdout.readline()) for _answer in range(count)]
        self.url = "http://127.0.0.1:%d/" % port

    def end(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def serving(tmp_path, house):
    run = Playbook(tmp_path, house, _free_port())
    assert not run.answers[0].get("failed"), run.answers[0]
    yield run
    run.end()
    if run.answers[0].get("pid"):
        _wait_gone(run.answers[0]["pid"])


def _wait_gone(pid, seconds=6.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return False


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_the_listing_holds_only_recorded_wheels_with_the_sha256_recorded_at_download(serving, house):
    status, page = _get(serving.url)
    assert status == 200
    assert '<a href="%s#sha256=%s">' % (DEMO, _sha256(house / DEMO)) in page
    for hidden in (OTHER, "notes.txt", ".radeonlab", "abc.json", "sub", "secret"):
        assert hidden not in page


@pytest.mark.parametrize("path, code", [
    (DEMO, 200),
    (OTHER, 404),                      # a wheel no download recorded
    ("notes.txt", 404),
    (".radeonlab/abc.json", 404),      # the stamps
    (".radeonlab/abc.log", 404),       # pip's log (it can hold index credentials)
    ("%2eradeonlab/abc.log", 404),
    ("sub/", 404),
    ("../../../etc/passwd", 404),
    ("%2e%2e/%2e%2e/etc/passwd", 404),
    ("demo-1.0-py3-none-any.whl/x", 404),
])
def test_only_recorded_wheels_are_served(serving, path, code):
    assert _get(serving.url + path)[0] == code


def _pip_download(url, dest):
    return subprocess.run(
        [sys.executable, "-m", "pip", "--isolated", "download", "--no-index", "--no-deps", "--disable-pip-version-check",
         "--find-links", url, "--dest", str(dest), "demo==1.0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)


def test_pip_takes_the_recorded_wheel_and_refuses_it_once_changed(serving, house, tmp_path, demo_wheel):
    first = _pip_download(serving.url, tmp_path / "ok")
    assert first.returncode == 0, first.stdout
    assert (tmp_path / "ok" / DEMO).is_file()
    demo_wheel(house / DEMO, "VALUE = 'tampered'\n")  # same name, other bytes: not what the download recorded
    second = _pip_download(serving.url, tmp_path / "tampered")
    assert second.returncode != 0
    assert "DO NOT MATCH THE HASHES" in second.stdout
    assert not (tmp_path / "tampered" / DEMO).exists()


def test_a_second_start_in_the_same_run_reuses_the_server(tmp_path, house):
    run = Playbook(tmp_path, house, _free_port(), count=2)
    try:
        first, second = run.answers
        assert first["changed"] is True and "until ansible-playbook" in first["msg"]
        assert second["changed"] is False and second["pid"] == first["pid"]
        assert "already serving" in second["msg"]
    finally:
        run.end()
        _wait_gone(run.answers[0]["pid"])


def test_the_server_ends_with_the_ansible_playbook_run(tmp_path, house):
    port = _free_port()
    run = Playbook(tmp_path, house, port)
    pid = run.answers[0]["pid"]
    assert _get(run.url)[0] == 200
    run.end()  # the run is over, however it ended (here: killed)
    assert _wait_gone(pid), "the wheelhouse server outlived the ansible-playbook run"
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "something still listens"


def test_stop_ends_it_and_a_second_stop_says_nothing_runs(serving, house):
    port = serving.url.rsplit(":", 1)[1].strip("/")
    stopped = json.loads(subprocess.run([sys.executable, SERVER, "stop", "--dir", str(house), "--port", port],
                                        stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout)
    assert stopped["changed"] is True and stopped["pid"] == serving.answers[0]["pid"]
    assert _wait_gone(stopped["pid"])
    again = json.loads(subprocess.run([sys.executable, SERVER, "stop", "--dir", str(house), "--port", port],
                                      stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout)
    assert again["changed"] is False


def test_a_taken_port_is_refused_with_the_variable_to_change(tmp_path, house):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        run = Playbook(tmp_path, house, taken.getsockname()[1])
        try:
            answer = run.answers[0]
            assert answer["failed"] is True
            assert "cannot serve on 127.0.0.1:%d" % taken.getsockname()[1] in answer["msg"]
            assert "pytorch_rocm_wheelhouse_port" in answer["msg"]
        finally:
            run.end()


def test_an_address_the_controller_does_not_have_is_refused(tmp_path, house):
    run = Playbook(tmp_path, house, _free_port(), binds=("192.0.2.1",))  # TEST-NET-1: on no interface here
    try:
        assert run.answers[0]["failed"] is True
        assert "pytorch_rocm_wheelhouse_bind" in run.answers[0]["msg"]
    finally:
        run.end()


def test_started_outside_ansible_playbook_it_refuses_rather_than_outlive_everything(house):
    out = subprocess.run([sys.executable, SERVER, "start", "--dir", str(house), "--port", str(_free_port()),
                          "--bind", "127.0.0.1"], stdout=subprocess.PIPE, universal_newlines=True, check=False)
    assert out.returncode == 1
    assert "no ansible-playbook process" in json.loads(out.stdout)["msg"]

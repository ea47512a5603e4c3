# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/local_wheels.py: which sdist-only pins lack a wheel, and building them with a fake `pip wheel`."""

from __future__ import annotations

import json
import os
import subprocess
import types

import pytest

INDEX = "https://pypi.org/simple"
JIEBA = "jieba-0.42.1-py3-none-any.whl"


@pytest.fixture
def local_wheels(load_script):
    return load_script("llamafactory", "local_wheels.py")


@pytest.fixture
def fake_pip(local_wheels, monkeypatch):
    """Replace subprocess in the script: `pip wheel` writes ``calls.built`` into --wheel-dir and exits ``calls.rc``."""
    calls = types.SimpleNamespace(argv=[], env=[], built=None, rc=0, output="Building wheel for jieba (pyproject.toml) ... done\n")

    def run(argv, **kwargs):
        calls.argv.append(argv)
        calls.env.append(kwargs["env"])
        if calls.built:
            with open(os.path.join(argv[argv.index("--wheel-dir") + 1], calls.built), "wb") as handle:
                handle.write(b"PK")
        return subprocess.CompletedProcess(argv, calls.rc, stdout=calls.output)

    monkeypatch.setattr(local_wheels, "subprocess", types.SimpleNamespace(run=run, PIPE=subprocess.PIPE, STDOUT=subprocess.STDOUT))
    monkeypatch.setattr(local_wheels, "sys", types.SimpleNamespace(executable="/usr/bin/python3"))
    return calls


def main(local_wheels, capsys, *argv):
    rc = local_wheels.main(list(argv))
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("files, name, version, want", [
    ([JIEBA], "jieba", "0.42.1", JIEBA),
    (["rouge_chinese-1.0.3-py3-none-any.whl"], "rouge-chinese", "1.0.3", "rouge_chinese-1.0.3-py3-none-any.whl"),
    (["Rouge.Chinese-1.0.3-py3-none-any.whl"], "rouge_chinese", "1.0.3", "Rouge.Chinese-1.0.3-py3-none-any.whl"),
    (["jieba-0.42.1-1-py3-none-any.whl"], "jieba", "0.42.1", "jieba-0.42.1-1-py3-none-any.whl"),
    (["jieba-0.42.0-py3-none-any.whl"], "jieba", "0.42.1", None),
    (["jieba-0.42.1.tar.gz", "jieba-0.42.1.whl"], "jieba", "0.42.1", None),
    (["jiebax-0.42.1-py3-none-any.whl"], "jieba", "0.42.1", None),
    ([], "jieba", "0.42.1", None),
], ids=["same", "dash-vs-underscore", "dot-and-case", "build-tag", "other-version", "not-a-wheel", "other-name", "empty"])
def test_existing(local_wheels, tmp_path, files, name, version, want):
    for file in files:
        (tmp_path / file).write_bytes(b"PK")
    assert local_wheels._existing(str(tmp_path), name, version) == want  # pylint: disable=protected-access


def test_check_reports_without_building(local_wheels, fake_pip, tmp_path, capsys):
    directory = tmp_path / "wh"
    directory.mkdir()
    (directory / JIEBA).write_bytes(b"PK")
    rc, out = main(local_wheels, capsys, "--dir", str(directory), "--index-url", INDEX, "--check", "jieba==0.42.1", "rouge-chinese==1.0.3")
    assert rc == 0 and out == {"changed": True, "present": [JIEBA], "built": [], "missing": ["rouge-chinese==1.0.3"]}
    assert fake_pip.argv == []


def test_nothing_to_do(local_wheels, fake_pip, tmp_path, capsys):
    rc, out = main(local_wheels, capsys, "--dir", str(tmp_path / "absent"), "--index-url", INDEX)
    assert rc == 0 and out == {"changed": False, "present": [], "built": [], "missing": []}
    assert not (tmp_path / "absent").exists()


def test_builds_a_pure_wheel(local_wheels, fake_pip, tmp_path, capsys):
    directory = tmp_path / "wh"
    fake_pip.built = JIEBA
    rc, out = main(local_wheels, capsys, "--dir", str(directory), "--index-url", INDEX, "jieba==0.42.1")
    assert rc == 0 and out == {"changed": True, "present": [], "built": [JIEBA], "missing": []}
    argv = fake_pip.argv[0]
    building = argv[argv.index("--wheel-dir") + 1]
    assert argv == ["/usr/bin/python3", "-m", "pip", "--isolated", "wheel", "--disable-pip-version-check", "--progress-bar", "off",
                    "--no-deps", "--no-binary", "jieba", "--index-url", INDEX, "--wheel-dir", building, "jieba==0.42.1"]
    # Built in a private folder under the wheelhouse's state, renamed in, the folder gone: no half wheel is ever in DIR.
    assert os.path.dirname(building) == str(directory / ".radeonlab") and not os.path.exists(building)
    assert (directory / JIEBA).is_file() and (directory / ".radeonlab" / "lock").is_file()
    assert fake_pip.env[0]["PIP_CONFIG_FILE"] == os.devnull
    rc, out = main(local_wheels, capsys, "--dir", str(directory), "--index-url", INDEX, "jieba==0.42.1")
    assert out == {"changed": False, "present": [JIEBA], "built": [], "missing": []} and len(fake_pip.argv) == 1


@pytest.mark.parametrize("built, rc, message", [
    ("jieba-0.42.1-cp311-cp311-linux_x86_64.whl", 0, "jieba==0.42.1 built jieba-0.42.1-cp311-cp311-linux_x86_64.whl, which is not a pure-Python wheel"),
    (None, 1, "pip wheel jieba==0.42.1 failed (rc 1): Building wheel for jieba"),
    (None, 0, "pip wheel jieba==0.42.1 failed (rc 0): "),
], ids=["platform-wheel", "pip-fails", "no-wheel"])
def test_build_failures(local_wheels, fake_pip, tmp_path, capsys, built, rc, message):
    fake_pip.built, fake_pip.rc = built, rc
    code, out = main(local_wheels, capsys, "--dir", str(tmp_path), "--index-url", INDEX, "jieba==0.42.1")
    assert code == 1 and out["failed"] is True and out["msg"].startswith(message)
    assert not list(tmp_path.glob("*.whl")) and not list(tmp_path.glob(".radeonlab/build-*"))  # nothing half-built stays


@pytest.mark.parametrize("requirement", ["jieba", "jieba>=0.42", "jieba==0.42.*", "jieba[extra]==0.42.1", "==0.42.1"])
def test_unpinned_requirements_are_refused(local_wheels, fake_pip, tmp_path, capsys, requirement):
    rc, out = main(local_wheels, capsys, "--dir", str(tmp_path), "--index-url", INDEX, "--check", requirement)
    assert rc == 1 and out == {"failed": True, "msg": "%s is not pinned as NAME==VERSION" % requirement}
    assert fake_pip.argv == []


def test_a_second_writer_waits_for_the_wheelhouse_lock(local_wheels, fake_pip, tmp_path, capsys):
    """While another writer (wheelhouse.py or a second play) holds DIR/.radeonlab/lock, nothing is built."""
    import fcntl  # pylint: disable=import-outside-toplevel
    import threading  # pylint: disable=import-outside-toplevel
    (tmp_path / ".radeonlab").mkdir()
    holder = open(tmp_path / ".radeonlab" / "lock", "w", encoding="utf-8")  # pylint: disable=consider-using-with
    fcntl.flock(holder, fcntl.LOCK_EX)
    fake_pip.built = JIEBA
    worker = threading.Thread(target=local_wheels.main, args=(["--dir", str(tmp_path), "--index-url", INDEX, "jieba==0.42.1"],))
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and fake_pip.argv == []  # waiting for the lock
    (tmp_path / JIEBA).write_bytes(b"PK")  # what the other writer built meanwhile
    holder.close()
    worker.join(10)
    assert not worker.is_alive() and fake_pip.argv == []  # found the other writer's wheel: nothing built twice
    capsys.readouterr()

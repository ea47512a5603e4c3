# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/venv_pip/files/wheelhouse.py: platform tags, set keys, stamps, the pip argv, and runs against a fake pip."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
import types

import pytest

INDEX = "https://download.pytorch.org/whl/rocm6.4"
TORCH = "torch-2.9.1+rocm6.4-cp311-cp311-manylinux_2_28_x86_64.whl"
NUMPY = "numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
SET = {"python_version": "3.11", "platform": "manylinux_2_28_x86_64", "requirements": ["torch==2.9.1+rocm6.4"], "index_url": INDEX}

# A stand-in for `python -m pip download`: prints FAKE_PIP_OUT ({dest} = --dest), writes FAKE_PIP_FILES ({name: size})
# into --dest, appends its argv and PIP_CONFIG_FILE to FAKE_PIP_CALLS, exits with FAKE_PIP_RC.
FAKE_PIP = """
import json, os, sys
argv = sys.argv[1:]
dest = argv[argv.index("--dest") + 1]
with open(os.environ["FAKE_PIP_CALLS"], "a") as log:
    log.write(json.dumps({"argv": argv, "config": os.environ.get("PIP_CONFIG_FILE")}) + "\\n")
for name, size in json.loads(os.environ.get("FAKE_PIP_FILES", "{}")).items():
    with open(os.path.join(dest, name), "wb") as handle:
        handle.write(b"x" * size)
for line in json.loads(os.environ.get("FAKE_PIP_OUT", "[]")):
    print(line.format(dest=dest))
sys.exit(int(os.environ.get("FAKE_PIP_RC", "0")))
"""


@pytest.fixture
def wheelhouse(load_script):
    return load_script("venv_pip", "wheelhouse.py")


@pytest.fixture
def fake_pip(wheelhouse, tmp_path, monkeypatch):
    """wheelhouse.py runs `sys.executable -m pip`: point its sys.executable at the fake; returns the calls log."""
    exe = tmp_path / "fakepython"
    exe.write_text("#!%s\n%s" % (sys.executable, FAKE_PIP))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(wheelhouse, "sys", types.SimpleNamespace(executable=str(exe)))
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_PIP_CALLS", str(calls))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/etc/pip-of-the-controller.conf")
    return calls


def calls_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def manylinux(arch, newest):
    return ["manylinux_2_%d_%s" % (minor, arch) for minor in range(newest, 4, -1)]


@pytest.mark.parametrize("platform, want", [
    ("manylinux_2_28_x86_64", manylinux("x86_64", 28) + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]),
    ("manylinux_2_17_aarch64", manylinux("aarch64", 17) + ["manylinux2014_aarch64", "manylinux2010_aarch64", "manylinux1_aarch64"]),
    ("manylinux_2_12_x86_64", manylinux("x86_64", 12) + ["manylinux2010_x86_64", "manylinux1_x86_64"]),
    ("manylinux_2_5_i686", ["manylinux_2_5_i686", "manylinux1_i686"]),
    ("manylinux2014_x86_64", ["manylinux2014_x86_64"]),
    ("manylinux_3_1_x86_64", ["manylinux_3_1_x86_64"]),
    ("linux_x86_64", ["linux_x86_64"]),
], ids=["glibc-2.28", "glibc-2.17-arm", "glibc-2.12", "glibc-2.5", "legacy-alias", "not-glibc-2", "plain"])
def test_platforms(wheelhouse, platform, want):
    assert wheelhouse.platforms(platform) == want


def test_platforms_spot_values(wheelhouse):
    tags = wheelhouse.platforms("manylinux_2_28_x86_64")
    assert (tags[0], tags[-4], len(tags)) == ("manylinux_2_28_x86_64", "manylinux_2_5_x86_64", 27)


@pytest.mark.parametrize("change, same", [
    ({"requirements": ["torch==2.9.1+rocm6.4"]}, True),
    ({"trusted_hosts": ["mirror.lan"], "pip_options": ["--no-cache-dir"]}, True),
    ({"requirements": ["torch==2.8.0+rocm6.4"]}, False),
    ({"python_version": "3.12"}, False),
    ({"platform": "manylinux_2_34_x86_64"}, False),
    ({"index_url": "https://mirror.lan/simple"}, False),
    ({"extra_index_urls": ["https://pypi.org/simple"]}, False),
    ({"no_deps": []}, True),  # a set without any keeps the key (the stamp) it had before no_deps existed
    ({"no_deps": ["liger-kernel==0.8.5"]}, False),
], ids=["same", "hosts-and-options-ignored", "requirements", "python", "platform", "index", "extra-index", "no-no-deps", "no-deps"])
def test_key_of(wheelhouse, change, same):
    assert (wheelhouse.key_of(dict(SET, **change)) == wheelhouse.key_of(SET)) is same


def test_key_of_is_stable(wheelhouse):
    """The key names the stamps of existing wheelhouses: changing how it is computed downloads everything again."""
    two = dict(SET, requirements=["b==1", "a==2"], extra_index_urls=["y", "x"])
    assert wheelhouse.key_of(two) == wheelhouse.key_of(dict(two, requirements=["a==2", "b==1"], extra_index_urls=["x", "y"]))
    assert wheelhouse.key_of(SET) == "71adf6f80846c379"


def _h(size):
    return hashlib.sha256(b"x" * size).hexdigest()


@pytest.mark.parametrize("stamp, files, want", [
    (None, {}, None),
    ("not json", {}, None),
    ({"files": []}, {}, None),
    ({"files": [{"name": TORCH, "size": 3, "sha256": _h(3)}]}, {}, None),
    ({"files": [{"name": TORCH, "size": 3}]}, {TORCH: 3}, None),
    ({"files": [{"name": TORCH, "size": 3, "sha256": _h(3)}, {"name": NUMPY, "size": 1, "sha256": _h(1)}]}, {TORCH: 3, NUMPY: 1},
     [{"name": TORCH, "size": 3, "sha256": _h(3)}, {"name": NUMPY, "size": 1, "sha256": _h(1)}]),
], ids=["no-stamp", "bad-stamp", "empty-record", "file-gone", "recorded-before-hashes", "complete"])
def test_present(wheelhouse, tmp_path, stamp, files, want):
    path = tmp_path / "stamp.json"
    if stamp is not None:
        path.write_text(stamp if isinstance(stamp, str) else json.dumps(stamp))
    for name, size in files.items():
        (tmp_path / name).write_bytes(b"x" * size)
    assert wheelhouse.present(str(tmp_path), str(path)) == want


@pytest.mark.parametrize("body", [b"xxy", b"xxxx"], ids=["same-size-other-bytes", "other-size"])
def test_a_tampered_wheel_fails_the_check_naming_the_file(wheelhouse, tmp_path, capsys, body):
    """Bytes that differ from the sha256 recorded at download: refused, never re-downloaded over or served."""
    directory = tmp_path / "wh"
    (directory / ".radeonlab").mkdir(parents=True)
    stamp = directory / ".radeonlab" / (wheelhouse.key_of(SET) + ".json")
    stamp.write_text(json.dumps({"files": [{"name": TORCH, "size": 3, "sha256": _h(3)}, {"name": NUMPY, "size": 3, "sha256": _h(3)}]}))
    (directory / NUMPY).write_bytes(b"xxx")
    (directory / TORCH).write_bytes(body)
    assert wheelhouse.main(["--dir", str(directory), "--sets", json.dumps([SET]), "--check"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True
    assert "tampered wheel refused: %s does not match the sha256 recorded at its download (%s)" % (TORCH, stamp) in result["msg"]
    assert NUMPY not in result["msg"]
    print(result["msg"])


def _stamped(wheelhouse, tmp_path, body=b"xxx"):
    """A wheelhouse of one recorded wheel whose stamp carries the wheel's stat as written."""
    directory = tmp_path / "wh"
    (directory / ".radeonlab").mkdir(parents=True)
    (directory / TORCH).write_bytes(body)
    os.utime(directory / TORCH, ns=(10**18, 10**18))  # an mtime no later write has; ctime is the write's
    entry = {"name": TORCH, "size": len(body), "sha256": hashlib.sha256(body).hexdigest(),
             "stat": wheelhouse.stat_of(str(directory / TORCH))}
    stamp = directory / ".radeonlab" / (wheelhouse.key_of(SET) + ".json")
    stamp.write_text(json.dumps({"files": [entry]}))
    return directory, stamp


def test_an_untouched_wheel_is_not_read_again(wheelhouse, tmp_path, monkeypatch):
    directory, stamp = _stamped(wheelhouse, tmp_path)
    monkeypatch.setattr(wheelhouse, "_sha256_file", lambda path: pytest.fail("hashed an untouched wheel: " + path))
    assert [f["name"] for f in wheelhouse.present(str(directory), str(stamp))] == [TORCH]


@pytest.mark.parametrize("rewrite, refused", [
    (lambda path: os.utime(path, ns=(1, 1)), False),  # touched, same bytes: hashed again, still the recorded sha256
    (lambda path: path.write_bytes(b"xxy"), True),  # same size, other bytes, in place (same inode)
    # mtime set back: only ctime tells, and file times tick at the kernel's coarse clock (a few ms), hence the pause
    (lambda path: (time.sleep(0.05), path.write_bytes(b"xxy"), os.utime(path, ns=(10**18, 10**18))), True),
], ids=["touched", "rewritten-in-place", "rewritten-mtime-kept"])
def test_a_changed_stat_means_the_wheel_is_hashed_again(wheelhouse, tmp_path, rewrite, refused):
    directory, stamp = _stamped(wheelhouse, tmp_path)
    rewrite(directory / TORCH)
    if refused:
        with pytest.raises(RuntimeError, match="tampered wheel refused: " + re.escape(TORCH)):
            wheelhouse.present(str(directory), str(stamp))
    else:
        assert [f["name"] for f in wheelhouse.present(str(directory), str(stamp))] == [TORCH]


def test_the_check_hands_each_name_its_recorded_hash(wheelhouse, tmp_path):
    directory = tmp_path / "wh"
    (directory / ".radeonlab").mkdir(parents=True)
    (directory / ".radeonlab" / (wheelhouse.key_of(SET) + ".json")).write_text(
        json.dumps({"files": [{"name": TORCH, "size": 3, "sha256": _h(3)}]}))
    (directory / TORCH).write_bytes(b"xxx")
    (entry,) = wheelhouse.run(str(directory), [SET], check=True)["sets"]
    assert (entry["status"], entry["names"], entry["hashes"]) == ("present", [TORCH], {TORCH: _h(3)})


def test_links_page_carries_the_recorded_sha256(wheelhouse):
    page = wheelhouse.links_page({TORCH: "ab" * 32, "a&b-1.0-py3-none-any.whl": "cd" * 32})
    assert '<a href="torch-2.9.1%2Brocm6.4-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=' + "ab" * 32 + '">' + TORCH + "</a>" in page
    assert '<a href="a%26b-1.0-py3-none-any.whl#sha256=' + "cd" * 32 + '">a&amp;b-1.0-py3-none-any.whl</a>' in page


def test_pip_argv(wheelhouse, monkeypatch):
    monkeypatch.setattr(wheelhouse, "sys", types.SimpleNamespace(executable="/venv/bin/python"))
    wheel_set = dict(SET, platform="manylinux_2_6_x86_64", extra_index_urls=["https://pypi.org/simple"],
                     trusted_hosts=["mirror.lan"], pip_options=["--find-links", "/wh"], requirements=["torch==2.9.1+rocm6.4", "numpy<2"])
    assert wheelhouse.pip_argv(wheel_set, "/wh") == [
        "/venv/bin/python", "-m", "pip", "--isolated", "download", "--disable-pip-version-check", "--progress-bar", "off",
        "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11", "--dest", "/wh", "--index-url", INDEX,
        "--platform", "manylinux_2_6_x86_64", "--platform", "manylinux_2_5_x86_64", "--platform", "manylinux1_x86_64",
        "--extra-index-url", "https://pypi.org/simple", "--trusted-host", "mirror.lan", "--find-links", "/wh",
        "torch==2.9.1+rocm6.4", "numpy<2"]


def test_check_writes_nothing(wheelhouse, tmp_path):
    directory = tmp_path / "wh"
    result = wheelhouse.run(str(directory), [SET], check=True)
    assert not directory.exists()
    assert (result["changed"], result["files"], result["bytes"]) == (True, 0, 0)
    assert [(s["status"], s["key"], s["files"]) for s in result["sets"]] == [("missing", wheelhouse.key_of(SET), 0)]


def test_download_then_present(wheelhouse, fake_pip, tmp_path, monkeypatch):
    directory = tmp_path / "wh"
    monkeypatch.setenv("FAKE_PIP_FILES", json.dumps({TORCH: 5, NUMPY: 3}))
    monkeypatch.setenv("FAKE_PIP_OUT", json.dumps(["Collecting torch==2.9.1+rocm6.4", "Saved ./" + TORCH,
                                                   "File was already downloaded {dest}/" + NUMPY, "Successfully downloaded torch numpy"]))
    first = wheelhouse.run(str(directory), [SET], check=False)
    key = wheelhouse.key_of(SET)
    assert (first["changed"], first["files"], first["bytes"], first["sets"][0]["status"]) == (True, 2, 8, "downloaded")
    stamp = json.loads((directory / ".radeonlab" / (key + ".json")).read_text())
    # the sha256 recorded at download is what the wheelhouse server hands to pip
    assert [{k: v for k, v in f.items() if k != "stat"} for f in stamp["files"]] == [
        {"name": NUMPY, "size": 3, "sha256": hashlib.sha256(b"xxx").hexdigest()},
        {"name": TORCH, "size": 5, "sha256": hashlib.sha256(b"xxxxx").hexdigest()}]
    # and the stat each file had then, so that later checks need not read it again while it is untouched
    assert [f["stat"] for f in stamp["files"]] == [wheelhouse.stat_of(str(directory / n)) for n in (NUMPY, TORCH)]
    assert stamp["set"] == SET
    log = (directory / ".radeonlab" / (key + ".log")).read_text()
    assert log.startswith("$ ") and "Saved ./" + TORCH in log
    (call,) = calls_of(fake_pip)
    assert call["config"] == os.devnull  # isolated from the controller's pip configuration
    assert call["argv"][:3] == ["-m", "pip", "--isolated"] and call["argv"][-1] == "torch==2.9.1+rocm6.4"

    again = wheelhouse.run(str(directory), [SET], check=False)
    assert (again["changed"], again["files"], again["bytes"], again["sets"][0]["status"]) == (False, 2, 8, "present")
    assert len(calls_of(fake_pip)) == 1
    os.remove(directory / TORCH)  # a wheel deleted by hand: the set is fetched again
    assert wheelhouse.run(str(directory), [SET], check=True)["sets"][0]["status"] == "missing"


def test_no_deps_are_downloaded_alone_into_the_same_set(wheelhouse, fake_pip, tmp_path, monkeypatch):
    liger = "liger_kernel-0.8.5-py3-none-any.whl"
    wheel_set = dict(SET, no_deps=["liger-kernel==0.8.5"])
    directory = tmp_path / "wh"
    monkeypatch.setenv("FAKE_PIP_FILES", json.dumps({TORCH: 5, liger: 2}))
    monkeypatch.setenv("FAKE_PIP_OUT", json.dumps(["Saved ./" + TORCH, "Saved ./" + liger]))
    result = wheelhouse.run(str(directory), [wheel_set], check=False)
    assert (result["sets"][0]["status"], result["sets"][0]["names"]) == ("downloaded", sorted([TORCH, liger]))
    first, second = calls_of(fake_pip)
    assert first["argv"][-1] == "torch==2.9.1+rocm6.4" and "--no-deps" not in first["argv"]
    assert second["argv"][-2:] == ["--no-deps", "liger-kernel==0.8.5"] and "torch==2.9.1+rocm6.4" not in second["argv"]
    assert wheelhouse.run(str(directory), [wheel_set], check=True)["sets"][0]["status"] == "present"


@pytest.mark.parametrize("rc, out, files, message", [
    (1, ["ERROR: No matching distribution found for torch==2.9.1+rocm6.4"], {}, "pip download failed (rc 1) for torch==2.9.1+rocm6.4 on Python 3.11"),
    (0, ["Saved ./" + TORCH], {}, "pip reported %s but it is not in" % TORCH),
    (0, ["Successfully downloaded"], {TORCH: 1}, "pip download reported no files"),
], ids=["pip-fails", "saved-file-missing", "nothing-reported"])
def test_download_failures(wheelhouse, fake_pip, tmp_path, monkeypatch, capsys, rc, out, files, message):
    monkeypatch.setenv("FAKE_PIP_RC", str(rc))
    monkeypatch.setenv("FAKE_PIP_OUT", json.dumps(out))
    monkeypatch.setenv("FAKE_PIP_FILES", json.dumps(files))
    directory = tmp_path / "wh"
    assert wheelhouse.main(["--dir", str(directory), "--sets", json.dumps([SET])]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True and message in result["msg"]
    assert not (directory / ".radeonlab" / (wheelhouse.key_of(SET) + ".json")).exists()
    if rc:
        assert out[0] in result["msg"]  # the tail of pip's output is in the message


@pytest.mark.parametrize("sets, message", [
    ('{"python_version": "3.11"}', "--sets must be a JSON list of objects"),
    ('["torch"]', "--sets must be a JSON list of objects"),
    ("[{", "Expecting"),
    (json.dumps([dict(SET, platform="", index_url=None)]), "wheel set lacks platform, index_url"),
    (json.dumps([dict(SET, requirements=[])]), "wheel set lacks requirements"),
], ids=["object", "strings", "not-json", "empty-fields", "no-requirements"])
def test_main_rejects_bad_sets(wheelhouse, tmp_path, capsys, sets, message):
    assert wheelhouse.main(["--dir", str(tmp_path), "--sets", sets, "--check"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True and message in result["msg"]


def test_main_check_prints_the_report(wheelhouse, tmp_path, capsys):
    assert wheelhouse.main(["--dir", str(tmp_path / "wh"), "--sets", json.dumps([SET, dict(SET, python_version="3.12")]), "--check"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["changed"] is True and result["dir"] == str(tmp_path / "wh")
    assert [(s["python_version"], s["status"]) for s in result["sets"]] == [("3.11", "missing"), ("3.12", "missing")]

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/llamafactory_probe.py: `llamafactory-cli env` parsing, the constraints state, and the report
(run with the lora_job fake torch, a fake llamafactory-cli and fake flash_attn installs)."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

# What `llamafactory-cli env` prints (llamafactory/extras/env.py), after a log line and a warning.
ENV_OUT = """[INFO|2025-11-02 10:00:01] llamafactory.extras.misc:143 >> Loading environment
/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:61: UserWarning: something

- `llamafactory` version: 0.9.4
- Platform: Linux-6.8.0-49-generic-x86_64-with-glibc2.39
- Python version: 3.11.9
- PyTorch version: 2.9.1+rocm6.4 (GPU)
- Transformers version: 4.57.1
- GPU type: Radeon RX 7900 XTX
- GPU number: 1
- GPU memory: 23.98GB
- Default data directory: detected
"""
ENV = {"llamafactory_version": "0.9.4", "platform": "Linux-6.8.0-49-generic-x86_64-with-glibc2.39", "python_version": "3.11.9",
       "pytorch_version": "2.9.1+rocm6.4 (GPU)", "transformers_version": "4.57.1", "gpu_type": "Radeon RX 7900 XTX", "gpu_number": "1",
       "gpu_memory": "23.98GB", "default_data_directory": "detected"}

FAKE_CLI = """
import os, sys
if sys.argv[1:] != ["env"]:
    sys.exit(9)
sys.stdout.write(os.environ.get("FAKE_ENV_OUT", ""))
sys.stderr.write(os.environ.get("FAKE_ENV_ERR", ""))
sys.exit(int(os.environ.get("FAKE_ENV_RC", "0")))
"""
# flash_attn/__init__.py imports flash_attn_interface, which imports the CK extension flash_attn_2_cuda unless
# FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE (ROCm/flash-attention). This stand-in does the same and records the import.
FA_INIT = """
import os
open(os.environ["FAKE_FA_IMPORTED"], "a").close()
if os.environ.get("FLASH_ATTENTION_TRITON_AMD_ENABLE", "FALSE") != "TRUE":
    import flash_attn_2_cuda  # noqa: F401
"""


@pytest.mark.parametrize("text, key", [
    ("`llamafactory` version", "llamafactory_version"),
    ("GPU type", "gpu_type"),
    ("  PyTorch version ", "pytorch_version"),
    ("Default data directory", "default_data_directory"),
    ("NPU type / CANN", "npu_type_cann"),
])
def test_env_key(load_script, text, key):
    assert load_script("llamafactory", "llamafactory_probe.py").env_key(text) == key


@pytest.mark.parametrize("text, want", [
    (ENV_OUT, ENV),
    ("\r\n- Platform: Linux\r\n-  GPU number:  2 \r\n", {"platform": "Linux", "gpu_number": "2"}),
    ("- Git commit: 1a2b3c: dirty\n- Empty:\n", {"git_commit": "1a2b3c: dirty", "empty": ""}),
    ("Traceback (most recent call last):\nModuleNotFoundError: No module named 'peft'\n", {}),
    ("", {}),
], ids=["cli-env", "crlf-and-spaces", "colons-and-empty", "traceback", "empty"])
def test_parse_env(load_script, text, want):
    assert load_script("llamafactory", "llamafactory_probe.py").parse_env(text) == want


def test_state(load_script, dist, tmp_path, monkeypatch):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("# pinned by radeonlab.llm.pytorch_rocm\n\ntorch==2.9.1+rocm6.4\n  torchvision==0.24.1+rocm6.4  \n#numpy<2\n")
    dist(tmp_path, "llamafactory", "0.9.4")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = load_script("llamafactory", "llamafactory_probe.py")
    assert probe.state(str(constraints)) == {"python": "%d.%d" % sys.version_info[:2], "llamafactory": "0.9.4",
                                             "constraints": ["torch==2.9.1+rocm6.4", "torchvision==0.24.1+rocm6.4"]}
    assert probe.state(str(tmp_path / "missing.txt"))["constraints"] == []


@pytest.fixture
def venv(tmp_path, dist):
    """A site directory with torch 2.9.1 and llamafactory 0.9.4 installed, and a fake llamafactory-cli."""
    site = tmp_path / "site"
    dist(site, "torch", "2.9.1")
    dist(site, "llamafactory", "0.9.4")
    cli = tmp_path / "llamafactory-cli"
    cli.write_text("#!%s\n%s" % (sys.executable, FAKE_CLI))
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    return site, cli


def report(run_script, json_of, fake_torch, venv, tmp_path, cli=None, **env):
    site, fake_cli = venv
    env = dict({"FAKE_TORCH_VERSION": "2.9.1+rocm6.4", "FAKE_TORCH_HIP": "6.4.43482", "FAKE_ENV_OUT": ENV_OUT,
                "FAKE_FA_IMPORTED": str(tmp_path / "flash_attn_imported")}, **env)
    proc = run_script("llamafactory", "llamafactory_probe.py", "report", "--cli", str(cli or fake_cli), env=env, path=[fake_torch, site])
    assert proc.returncode == 0, proc.stderr
    return json_of(proc)


def test_report(run_script, json_of, fake_torch, venv, tmp_path):
    out = report(run_script, json_of, fake_torch, venv, tmp_path)
    assert out == {"python": "%d.%d.%d" % sys.version_info[:3], "torch": "2.9.1+rocm6.4", "torch_dist": "2.9.1", "hip": "6.4.43482",
                   "cuda": None, "torch_error": None, "llamafactory": "0.9.4", "env": ENV, "env_error": None,
                   "flash_attn": {"installed": False, "version": None, "ck": False, "triton": False}}


@pytest.mark.parametrize("env, cli, error", [
    ({"FAKE_ENV_RC": "1", "FAKE_ENV_OUT": "", "FAKE_ENV_ERR": "ImportError: cannot import name 'x'\n"}, None,
     "rc 1: ImportError: cannot import name 'x'"),
    ({"FAKE_ENV_OUT": "nothing to see\n"}, None, "rc 0: nothing to see"),
    ({}, "no-such-cli", "FileNotFoundError: "),
], ids=["cli-fails", "nothing-parsed", "no-cli"])
def test_report_env_errors(run_script, json_of, fake_torch, venv, tmp_path, env, cli, error):
    out = report(run_script, json_of, fake_torch, venv, tmp_path, cli=cli and str(tmp_path / cli), **env)
    assert out["env"] == {} and out["env_error"].startswith(error)
    assert out["torch"] == "2.9.1+rocm6.4"


def test_report_without_torch(run_script, json_of, fake_torch, venv, tmp_path):
    out = report(run_script, json_of, fake_torch, venv, tmp_path, FAKE_TORCH_IMPORT_ERROR="libamdhip64.so: cannot open shared object file")
    assert (out["torch"], out["hip"], out["torch_dist"]) == (None, None, "2.9.1")
    assert out["torch_error"] == "ImportError: libamdhip64.so: cannot open shared object file"
    assert out["env"] == ENV


def _install_flash_attn(site, dist, package, ck, triton):
    dist(site, "flash_attn", "2.8.3")
    if package:
        os.makedirs(site / "flash_attn")
        (site / "flash_attn" / "__init__.py").write_text(FA_INIT)
    if ck:
        (site / "flash_attn_2_cuda.py").write_text("")  # stands in for flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so
    if triton:
        os.makedirs(site / "flash_attn" / "flash_attn_triton_amd")
        (site / "flash_attn" / "flash_attn_triton_amd" / "__init__.py").write_text("")


@pytest.mark.parametrize("package, ck, triton, want", [
    (True, True, False, {"installed": True, "version": "2.8.3", "ck": True, "triton": False}),
    (True, True, True, {"installed": True, "version": "2.8.3", "ck": True, "triton": True}),
    (True, False, True, {"installed": True, "version": "2.8.3", "ck": False, "triton": True}),
    (False, False, False, {"installed": False, "version": "2.8.3", "ck": False, "triton": False}),
], ids=["ck-build", "ck-build-with-triton-sources", "triton-build", "metadata-only"])
def test_report_flash_attn(run_script, json_of, fake_torch, venv, tmp_path, dist, package, ck, triton, want):
    _install_flash_attn(venv[0], dist, package, ck, triton)
    out = report(run_script, json_of, fake_torch, venv, tmp_path)
    assert out["flash_attn"] == want
    assert not (tmp_path / "flash_attn_imported").exists()  # inspected, never imported


@pytest.mark.parametrize("argv", [[], ["state"], ["report", "--constraints", "x"], ["state", "--constraints", "a", "b"]])
def test_usage(run_script, argv):
    proc = run_script("llamafactory", "llamafactory_probe.py", *argv)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("usage: llamafactory_probe.py state --constraints FILE | report --cli PATH")


def test_main_prints_sorted_json(load_script, tmp_path, capsys):
    probe = load_script("llamafactory", "llamafactory_probe.py")
    assert probe.main(["state", "--constraints", str(tmp_path / "none.txt")]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["constraints"] == [] and out.index('"constraints"') < out.index('"llamafactory"') < out.index('"python"')


def _cached_report(run_script, json_of, fake_torch, venv, tmp_path, **env):
    site, cli = venv
    env = dict({"FAKE_TORCH_VERSION": "2.9.1+rocm6.4", "FAKE_TORCH_HIP": "6.4.43482", "FAKE_ENV_OUT": ENV_OUT,
                "FAKE_FA_IMPORTED": str(tmp_path / "flash_attn_imported")}, **env)
    proc = run_script("llamafactory", "llamafactory_probe.py", "report", "--cli", str(cli), "--cache", str(tmp_path / "probe.json"),
                      env=env, path=[fake_torch, site])
    assert proc.returncode == 0, proc.stderr
    return json_of(proc)


def test_report_is_read_back_while_the_venv_is_unchanged(run_script, json_of, fake_torch, venv, tmp_path):
    first = _cached_report(run_script, json_of, fake_torch, venv, tmp_path)
    assert "cached" not in first and first["torch"] == "2.9.1+rocm6.4"
    # The same venv and environment: read back, even though torch would now say something else.
    again = _cached_report(run_script, json_of, fake_torch, venv, tmp_path, FAKE_TORCH_VERSION="2.9.1+cu128")
    assert again == dict(first, cached=True)


@pytest.mark.parametrize("change", ["install", "uninstall", "environment"])
def test_report_is_probed_again_after_any_change(run_script, json_of, fake_torch, venv, tmp_path, dist, change):
    first = _cached_report(run_script, json_of, fake_torch, venv, tmp_path)
    env = {"FAKE_TORCH_VERSION": "2.9.1+cu128", "FAKE_TORCH_HIP": ""}
    if change == "install":
        dist(venv[0], "flash_attn", "2.8.3")
    elif change == "uninstall":
        for entry in venv[0].glob("llamafactory*"):
            for child in entry.iterdir():
                child.unlink()
            entry.rmdir()
    else:
        env["HIP_VISIBLE_DEVICES"] = "1"
    again = _cached_report(run_script, json_of, fake_torch, venv, tmp_path, **env)
    assert "cached" not in again and again["torch"] == "2.9.1+cu128" and again != first


def test_a_failed_report_is_not_kept(run_script, json_of, fake_torch, venv, tmp_path):
    failed = _cached_report(run_script, json_of, fake_torch, venv, tmp_path, FAKE_ENV_RC="1", FAKE_ENV_OUT="")
    assert failed["env_error"] and not (tmp_path / "probe.json").exists()
    assert "cached" not in _cached_report(run_script, json_of, fake_torch, venv, tmp_path)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/venv_pip/files/torch_probe.py: is a venv already what pip would make of these requirements?

Distributions are minimal dist-info directories on a temporary sys.path entry; the names start with rl-
so that nothing installed in the test venv can answer for them.
"""

from __future__ import annotations

import json

import pytest

ROCM_TORCH = ("rl-torch", "2.9.1+rocm6.4", [
    "rl-filelock>=3", "rl-triton==3.5.1; platform_system == 'Linux'", "rl-win-only; sys_platform == 'win32'", "rl-opt-einsum>=3.3; extra == 'opt-einsum'"])
FILELOCK = ("rl-filelock", "3.16.1", [])
TRITON = ("rl-triton", "3.5.1", ["rl-filelock"])
# (installed distributions, requirements, satisfied, installed versions, problems)
CASES = [
    ([ROCM_TORCH, FILELOCK, TRITON], ["rl-torch==2.9.1+rocm6.4"], True,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1", "rl-triton": "3.5.1"}, []),
    ([ROCM_TORCH, FILELOCK, TRITON], ["rl-torch==2.9.1"], True,  # a pin without local label accepts the ROCm build
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1", "rl-triton": "3.5.1"}, []),
    ([("rl-torch", "2.9.1", []), FILELOCK], ["rl-torch==2.9.1+rocm6.4"], False,  # PyPI's CUDA wheel is the same version number
     {"rl-torch": "2.9.1"}, ["rl-torch 2.9.1 is installed, rl-torch==2.9.1+rocm6.4 wanted"]),
    ([ROCM_TORCH, FILELOCK], ["rl-torch==2.9.1+rocm6.4"], False,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1"},
     ["rl-triton==3.5.1; platform_system == \"Linux\" is not installed (needed by rl-torch 2.9.1+rocm6.4)"]),
    ([ROCM_TORCH, ("rl-filelock", "2.0", []), TRITON], ["rl-torch==2.9.1+rocm6.4"], False,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "2.0", "rl-triton": "3.5.1"},
     ["rl-filelock 2.0 is installed, rl-filelock>=3 wanted (needed by rl-torch 2.9.1+rocm6.4)"]),
    ([ROCM_TORCH, FILELOCK, TRITON], ["RL_Torch==2.9.1+rocm6.4", "rl-absent==1.0"], False,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1", "rl-triton": "3.5.1"}, ["rl-absent==1.0 is not installed"]),
    ([("rl-torch", "2.10.0rc1", [])], ["rl-torch>=2.9"], True, {"rl-torch": "2.10.0rc1"}, []),
    ([("rl-a", "1.0", ["rl-b>=1"]), ("rl-b", "1.0", ["rl-a>=1"])], ["rl-a"], True, {"rl-a": "1.0", "rl-b": "1.0"}, []),
    # An extra pulls in its own dependencies, as pip would install them.
    ([ROCM_TORCH, FILELOCK, TRITON], ["rl-torch[opt-einsum]==2.9.1+rocm6.4"], False,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1", "rl-triton": "3.5.1"},
     ["rl-opt-einsum>=3.3; extra == \"opt-einsum\" is not installed (needed by rl-torch 2.9.1+rocm6.4)"]),
    ([ROCM_TORCH, FILELOCK, TRITON, ("rl-opt-einsum", "3.4.0", [])], ["rl-torch[opt-einsum]==2.9.1+rocm6.4"], True,
     {"rl-torch": "2.9.1+rocm6.4", "rl-filelock": "3.16.1", "rl-triton": "3.5.1", "rl-opt-einsum": "3.4.0"}, []),
    # A requirement whose marker does not hold here is ignored, as pip ignores it.
    ([], ["rl-win-only==1.0; sys_platform == 'win32'"], True, {}, []),
]
IDS = ["rocm-torch", "unlabelled-pin", "cuda-torch", "missing-dependency", "old-dependency", "normalised-names-and-absent",
       "prerelease", "cycle", "extra-missing", "extra-present", "marker-elsewhere"]


@pytest.mark.parametrize("dists, requirements, satisfied, installed, problems", CASES, ids=IDS)
def test_probe(load_script, dist, tmp_path, monkeypatch, dists, requirements, satisfied, installed, problems):
    for name, version, requires in dists:
        dist(tmp_path, name, version, requires)
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = load_script("venv_pip", "torch_probe.py")
    assert probe.probe(requirements) == {"satisfied": satisfied, "installed": installed, "problems": problems}


def test_main_prints_one_sorted_object(load_script, dist, tmp_path, monkeypatch, capsys):
    dist(tmp_path, "rl-torch", "2.9.1", [])
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = load_script("venv_pip", "torch_probe.py")
    assert probe.main(["rl-torch==2.9.1", "rl-absent"]) == 0
    out = capsys.readouterr().out
    assert out == json.dumps({"installed": {"rl-torch": "2.9.1"}, "problems": ["rl-absent is not installed"], "satisfied": False}) + "\n"


def test_no_arguments_is_a_usage_error(run_script):
    proc = run_script("venv_pip", "torch_probe.py")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("usage: torch_probe.py REQUIREMENT...")


def test_no_deps_requirements_are_there_but_not_followed(load_script, dist, tmp_path, monkeypatch, capsys):
    # liger-kernel installed with --no-deps: its triton is torch's own (another distribution), never a missing requirement
    dist(tmp_path, "rl-liger", "0.8.5", ["rl-torch>=2.1.2", "rl-triton>=2.3.1"])
    dist(tmp_path, "rl-torch", "2.9.1", [])
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = load_script("venv_pip", "torch_probe.py")
    assert probe.probe(["rl-torch==2.9.1"], ["rl-liger==0.8.5"]) == {
        "satisfied": True, "installed": {"rl-torch": "2.9.1", "rl-liger": "0.8.5"}, "problems": []}
    assert probe.probe(["rl-torch==2.9.1"], ["rl-liger==0.8.6"])["problems"] == ["rl-liger 0.8.5 is installed, rl-liger==0.8.6 wanted"]
    assert probe.probe([], ["rl-absent==1.0"])["problems"] == ["rl-absent==1.0 is not installed"]
    # the same package with its dependencies is what pip would complete
    assert probe.probe(["rl-liger==0.8.5"])["problems"] == ["rl-triton>=2.3.1 is not installed (needed by rl-liger 0.8.5)"]
    assert probe.main(["rl-torch==2.9.1", "--no-deps", "rl-liger==0.8.5"]) == 0
    assert json.loads(capsys.readouterr().out)["satisfied"] is True

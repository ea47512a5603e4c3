# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/venv_pip/files/pip_check.py: what answers in the venv for the requirements of a package installed with --no-deps.

Distributions are minimal dist-info directories on a temporary sys.path entry (torch, triton and liger-kernel are not in
the test venv); what pip check decides from it is tests/unit/plugins/module_utils/test_pip_check.py."""

from __future__ import annotations

import json
import types

import pytest

LIGER = ("liger-kernel", "0.8.5", ["torch>=2.1.2", "triton>=2.3.1", "cuda-tile>=1.5.0; extra == \"cutile\""])
TORCH = ("torch", "2.9.1+rocm6.4", [])


def install(site, dist, dists, top_level):
    for name, version, requires in dists:
        dist(site, name, version, requires)
    for name, version, text in top_level:  # top_level.txt, or (text None) a RECORD naming the package's files
        info = site / ("%s-%s.dist-info" % (name.replace("-", "_"), version))
        if text is None:
            (info / "RECORD").write_text("triton/__init__.py,,\ntriton/language/core.py,,\n%s/METADATA,,\n" % info.name)
        else:
            (info / "top_level.txt").write_text(text)


ROCM_TRITON = ("pytorch-triton-rocm", "3.3.1", [])
# installed distributions, (name, version, top_level.txt or None for a RECORD) -> unmet
CASES = [
    ([LIGER, TORCH, ROCM_TRITON], [("pytorch-triton-rocm", "3.3.1", "triton\n")],
     [{"package": "liger-kernel", "version": "0.8.5", "requirement": "triton>=2.3.1", "name": "triton", "import": "triton",
       "providers": [{"name": "pytorch-triton-rocm", "version": "3.3.1", "satisfies": True}]}]),
    ([LIGER, TORCH, ROCM_TRITON], [("pytorch-triton-rocm", "3.3.1", None)],  # no top_level.txt: its RECORD says
     [{"package": "liger-kernel", "version": "0.8.5", "requirement": "triton>=2.3.1", "name": "triton", "import": "triton",
       "providers": [{"name": "pytorch-triton-rocm", "version": "3.3.1", "satisfies": True}]}]),
    ([LIGER, TORCH, ("pytorch-triton-rocm", "2.1.0", [])], [("pytorch-triton-rocm", "2.1.0", "triton\n")],
     [{"package": "liger-kernel", "version": "0.8.5", "requirement": "triton>=2.3.1", "name": "triton", "import": "triton",
       "providers": [{"name": "pytorch-triton-rocm", "version": "2.1.0", "satisfies": False}]}]),
    ([LIGER, TORCH], [],
     [{"package": "liger-kernel", "version": "0.8.5", "requirement": "triton>=2.3.1", "name": "triton", "import": "triton",
       "providers": []}]),
    # a CUDA venv: the distribution triton itself satisfies it, nothing is unmet
    ([LIGER, TORCH, ("triton", "3.5.1", [])], [("triton", "3.5.1", "triton\n")], []),
    # not installed: pip check does not name it either
    ([TORCH], [], []),
]


@pytest.mark.parametrize("dists, top_level, want", CASES,
                         ids=["rocm", "rocm-record-only", "rocm-too-old", "no-triton", "cuda-triton", "not-installed"])
def test_unmet(load_script, dist, tmp_path, monkeypatch, dists, top_level, want):
    install(tmp_path, dist, dists, top_level)
    monkeypatch.syspath_prepend(str(tmp_path))
    script = load_script("venv_pip", "pip_check.py")
    assert script.unmet(["liger-kernel==0.8.5"]) == want


def test_main_prints_pip_checks_lines_and_the_facts(load_script, dist, tmp_path, monkeypatch, capsys):
    install(tmp_path, dist, [LIGER, TORCH, ROCM_TRITON], [("pytorch-triton-rocm", "3.3.1", "triton\n")])
    monkeypatch.syspath_prepend(str(tmp_path))
    script = load_script("venv_pip", "pip_check.py")
    calls = []

    def run(argv, **_kwargs):
        calls.append(argv)
        return types.SimpleNamespace(returncode=1, stdout="liger-kernel 0.8.5 requires triton, which is not installed.\n\n")

    monkeypatch.setattr(script.subprocess, "run", run)
    assert script.main(["liger-kernel==0.8.5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert calls[0][1:] == ["-m", "pip", "check", "--disable-pip-version-check"]
    assert (out["rc"], out["lines"]) == (1, ["liger-kernel 0.8.5 requires triton, which is not installed."])
    assert [p["name"] for p in out["unmet"][0]["providers"]] == ["pytorch-triton-rocm"]

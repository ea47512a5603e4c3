# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pip check in a radeonlab.llm venv: exactly the unmet ``triton`` of a package installed with --no-deps, where the venv's
triton import package is another distribution's inside the range, is not a problem (a plain pytest table)."""

from __future__ import annotations

import pytest

from ansible_collections.radeonlab.llm.plugins.filter.pip_check import FilterModule
from ansible_collections.radeonlab.llm.plugins.module_utils.pip_check import SHARED_IMPORT_PACKAGES, pip_check_problems

NO_DEPS = ["liger-kernel==0.8.5"]
LIGER_TRITON = "liger-kernel 0.8.5 requires triton, which is not installed."


def unmet(*providers, requirement="triton>=2.3.1", package="liger-kernel", name="triton"):
    """One unmet entry of files/pip_check.py; providers are (name, version, satisfies)."""
    return {"package": package, "version": "0.8.5", "requirement": requirement, "name": name, "import": name.replace("-", "_"),
            "providers": [{"name": n, "version": v, "satisfies": ok} for n, v, ok in providers]}


ROCM = unmet(("pytorch-triton-rocm", "3.3.1", True))
# (pip check's rc and lines, the unmet entries, no_deps) -> (problems, exempt)
CASES = [
    # a ROCm venv: torch's pytorch-triton-rocm ships triton/, liger-kernel's requirement is met by it
    ((1, [LIGER_TRITON]), [ROCM], NO_DEPS,
     [], ["liger-kernel 0.8.5 (installed without its dependencies) requires triton>=2.3.1: the venv's triton import package is "
          "pytorch-triton-rocm 3.3.1's"]),
    # the newer name of the same package (pytorch/pytorch#186350: triton-rocm, formerly pytorch-triton-rocm)
    ((1, [LIGER_TRITON]), [unmet(("triton-rocm", "3.7.1", True))], ["Liger_Kernel"],
     [], ["liger-kernel 0.8.5 (installed without its dependencies) requires triton>=2.3.1: the venv's triton import package is "
          "triton-rocm 3.7.1's"]),
    # no Triton at all: still a problem, saying what is missing
    ((1, [LIGER_TRITON]), [unmet()], NO_DEPS,
     ["liger-kernel 0.8.5 (installed without its dependencies) requires triton>=2.3.1: no distribution in the venv ships the "
      "triton import package (a ROCm torch brings its own, pytorch-triton-rocm, on Linux x86_64); give the venv torch's Triton, "
      "or do not install liger-kernel"], []),
    # a Triton outside the range
    ((1, [LIGER_TRITON]), [unmet(("pytorch-triton-rocm", "2.1.0", False))], NO_DEPS,
     ["liger-kernel 0.8.5 (installed without its dependencies) requires triton>=2.3.1: the venv's triton import package is "
      "pytorch-triton-rocm 2.1.0's, outside that range"], []),
    # another package's unmet requirement stays, beside the exempt one
    ((1, ["peft 0.17.1 requires accelerate, which is not installed.", LIGER_TRITON]), [ROCM], NO_DEPS,
     ["peft 0.17.1 requires accelerate, which is not installed."],
     ["liger-kernel 0.8.5 (installed without its dependencies) requires triton>=2.3.1: the venv's triton import package is "
      "pytorch-triton-rocm 3.3.1's"]),
    # triton required by a package installed with its dependencies: pip would have installed it, so it is a problem
    ((1, ["xgrammar 0.1.21 requires triton, which is not installed."]), [ROCM], NO_DEPS,
     ["xgrammar 0.1.21 requires triton, which is not installed."], []),
    # the same line without --no-deps for liger-kernel (llamafactory_liger_kernel false, or another caller)
    ((1, [LIGER_TRITON]), [ROCM], [], [LIGER_TRITON], []),
    # a no-deps package's requirement other than triton (its torch) is not exempt
    ((1, ["liger-kernel 0.8.5 requires torch, which is not installed."]),
     [unmet(("torch", "2.9.1", True), requirement="torch>=2.1.2", name="torch")], NO_DEPS,
     ["liger-kernel 0.8.5 requires torch, which is not installed."], []),
    # a Triton distribution of the wrong release is pip check's conflict line: a problem
    ((1, ["liger-kernel 0.8.5 has requirement triton>=2.3.1, but you have triton 2.1.0."]), [], NO_DEPS,
     ["liger-kernel 0.8.5 has requirement triton>=2.3.1, but you have triton 2.1.0."], []),
    # the script did not report the requirement (no facts): a problem
    ((1, [LIGER_TRITON]), [], NO_DEPS, [LIGER_TRITON], []),
    # a clean venv (warnings alone do not fail it)
    ((0, ["No broken requirements found."]), [], NO_DEPS, [], []),
    ((0, ["WARNING: Ignoring invalid distribution ~orch", "No broken requirements found."]), [], NO_DEPS, [], []),
    # pip check failed and only warned: the warnings are why
    ((1, ["WARNING: Error parsing dependencies of foo: Invalid version"]), [], NO_DEPS,
     ["WARNING: Error parsing dependencies of foo: Invalid version"], []),
    ((2, []), [], NO_DEPS, ["pip check failed (exit 2) without saying why"], []),
]
IDS = ["rocm-pytorch-triton-rocm", "rocm-triton-rocm", "no-triton", "triton-out-of-range", "other-package-still-reported",
       "triton-of-a-package-with-deps", "liger-with-deps", "other-requirement-of-no-deps", "conflict-line", "no-facts", "clean",
       "clean-with-warning", "only-warnings", "silent-failure"]


@pytest.mark.parametrize("check, found, no_deps, problems, exempt", CASES, ids=IDS)
def test_pip_check_problems(check, found, no_deps, problems, exempt):
    rc, lines = check
    report = {"rc": rc, "lines": lines, "unmet": found}
    assert pip_check_problems(report, no_deps) == {"problems": problems, "exempt": exempt}


def test_only_triton_is_shared():
    assert SHARED_IMPORT_PACKAGES == ("triton",)


def test_filter_wraps_it():
    fn = FilterModule().filters()["pip_check_problems"]
    assert fn({"rc": 1, "lines": [LIGER_TRITON], "unmet": [ROCM]}, NO_DEPS)["problems"] == []
    assert fn({"rc": 1, "lines": [LIGER_TRITON], "unmet": [ROCM]})["problems"] == [LIGER_TRITON]

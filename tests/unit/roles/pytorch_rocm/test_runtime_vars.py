# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pytorch_rocm's vars per ROCm user space: apt keeps the PyTorch index's wheels exactly, pip takes AMD's ROCm wheels."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "pytorch_rocm"))
APT_71 = ["torch==2.13.0+rocm7.1", "torchvision==0.28.0+rocm7.1", "torchaudio==2.11.0+rocm7.1"]


def _render(names, distribution, version, targets, driver, **overrides):
    loader = DataLoader()
    variables = {}
    for part in ("defaults/main.yml", "vars/main.yml"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part), trusted_as_template=True))
    variables.update(ansible_facts={"distribution": distribution, "distribution_version": version},
                     gpu_environment_facts={"rocm_version": "7.1.1", "visible_gpus": [{"name": t} for t in targets]},
                     rocm_driver_facts={"kernel_driver": driver}, ansible_playbook_python="/usr/bin/python3")
    variables.update(overrides)
    templar = Templar(loader=loader, variables=variables)
    return {name: templar.template(trust_as_template("{{ %s }}" % name)) for name in names}


NAMES = ("_pytorch_rocm_runtime", "_pytorch_rocm_requirements", "_pytorch_rocm_constraints", "_pytorch_rocm_index_url")


@pytest.mark.parametrize("targets", (["gfx1151"], ["gfx1100"], ["gfx1031"], []))
@pytest.mark.parametrize("wheelhouse", (True, False))
def test_a_lab_host_keeps_the_apt_wheels(targets, wheelhouse):
    got = _render(NAMES, "Debian", "12", targets, "inbox", pytorch_rocm_wheelhouse=wheelhouse)
    assert got == {"_pytorch_rocm_runtime": "apt", "_pytorch_rocm_requirements": APT_71, "_pytorch_rocm_constraints": APT_71,
                   "_pytorch_rocm_index_url": "https://download.pytorch.org/whl/rocm7.1"}


def test_strix_halo_on_ubuntu_with_the_kernel_driver_takes_pip():
    got = _render(NAMES, "Ubuntu", "24.04", ["gfx1151"], "inbox")
    assert got["_pytorch_rocm_runtime"] == "pip"
    assert got["_pytorch_rocm_index_url"] == sm.ROCM_PIP["index_url"]
    assert got["_pytorch_rocm_requirements"][0] == "torch[device-gfx1151]==2.13.0+rocm10.0.0"
    assert got["_pytorch_rocm_constraints"] == ["torch==2.13.0+rocm10.0.0", "torchvision==0.28.0+rocm10.0.0",
                                                "torchaudio==2.11.0.2+rocm10.0.0", "rocm==10.0.0"]


def test_apt_asked_for_never_consults_the_pip_table():
    got = _render(NAMES, "Ubuntu", "24.04", ["gfx1151"], "inbox", pytorch_rocm_runtime="apt")
    assert got["_pytorch_rocm_runtime"] == "apt" and got["_pytorch_rocm_requirements"] == APT_71


def test_a_refused_pip_is_in_the_plan():
    plan = _render(["_pytorch_rocm_runtime_plan"], "Debian", "12", ["gfx1151"], "inbox",
                   pytorch_rocm_runtime="pip", pytorch_rocm_wheelhouse=True)["_pytorch_rocm_runtime_plan"]
    assert plan["refused"] and "pytorch_rocm_wheelhouse: false" in plan["message"]

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""apt or pip per host (plugins/module_utils/rocm_runtime.py) over the support matrix's ROCM_PIP rows."""

import pathlib

import pytest
import yaml

from ansible_collections.radeonlab.llm.plugins.module_utils import rocm_runtime as rr
from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

ROOT = pathlib.Path(__file__).resolve().parents[4]

# (requested, targets, kernel driver, distribution, version, wheelhouse, allow_preview) -> (runtime, refused)
CASES = {
    "auto: Strix Halo, inbox, Ubuntu 24.04, no wheelhouse": (("auto", ["gfx1151"], "inbox", "Ubuntu", "24.04", False, False), ("pip", False)),
    "auto: Strix Halo on Ubuntu 26.04": (("auto", ["gfx1151"], "inbox", "Ubuntu", "26.04", False, False), ("pip", False)),
    "auto: Strix Point gfx1150, inbox": (("auto", ["gfx1150"], "inbox", "Ubuntu", "24.04.4", False, False), ("pip", False)),
    "auto: Strix Halo with the fleet wheelhouse": (("auto", ["gfx1151"], "inbox", "Ubuntu", "24.04", True, False), ("apt", False)),
    "auto: Strix Halo under amdgpu-dkms": (("auto", ["gfx1151"], "dkms", "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: Strix Halo, driver unknown": (("auto", ["gfx1151"], None, "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: Strix Halo on Debian 12 (AMD lists no Debian)": (("auto", ["gfx1151"], "inbox", "Debian", "12", False, False), ("apt", False)),
    "auto: Strix Halo on Ubuntu 22.04 (Ryzen: 24.04/26.04 only)": (("auto", ["gfx1151"], "inbox", "Ubuntu", "22.04", False, False), ("apt", False)),
    "auto: RX 9070 XT, inbox (AMD pairs Radeon with amdgpu)": (("auto", ["gfx1201"], "inbox", "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: RX 9060 XT, dkms": (("auto", ["gfx1200"], "dkms", "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: RX 7900 XTX": (("auto", ["gfx1100"], "dkms", "Ubuntu", "22.04", False, False), ("apt", False)),
    "auto: RX 6700 XT (preview)": (("auto", ["gfx1031"], "inbox", "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: no GPU known": (("auto", [], "inbox", "Ubuntu", "24.04", False, False), ("apt", False)),
    "auto: Strix Halo beside an unknown target": (("auto", ["gfx1151", "gfx9999"], "inbox", "Ubuntu", "24.04", False, False), ("apt", False)),
    "apt: always apt": (("apt", ["gfx1151"], "inbox", "Ubuntu", "24.04", False, False), ("apt", False)),
    "pip: RX 9070 XT on Ubuntu 24.04 with amdgpu (stable)": (("pip", ["gfx1201"], "dkms", "Ubuntu", "24.04", False, False), ("pip", False)),
    "pip: RX 7900 XTX on Ubuntu 22.04": (("pip", ["gfx1100"], "dkms", "Ubuntu", "22.04", False, False), ("pip", False)),
    "pip: Strix Halo, inbox, Ubuntu 24.04": (("pip", ["gfx1151"], "inbox", "Ubuntu", "24.04", False, False), ("pip", False)),
    "pip: RX 6700 XT (preview) refused": (("pip", ["gfx1031"], "dkms", "Ubuntu", "24.04", False, False), ("apt", True)),
    "pip: RX 6700 XT with the opt-in": (("pip", ["gfx1031"], "dkms", "Ubuntu", "24.04", False, True), ("pip", False)),
    "pip: unknown target refused": (("pip", ["gfx906"], "dkms", "Ubuntu", "24.04", False, False), ("apt", True)),
    "pip: Debian 12 refused": (("pip", ["gfx1151"], "inbox", "Debian", "12", False, False), ("apt", True)),
    "pip: Debian 12 with the opt-in": (("pip", ["gfx1151"], "inbox", "Debian", "12", False, True), ("pip", False)),
    "pip: wheelhouse refused, opt-in or not": (("pip", ["gfx1151"], "inbox", "Ubuntu", "24.04", True, True), ("apt", True)),
    "pip: no GPU known refused": (("pip", [], "inbox", "Ubuntu", "24.04", False, True), ("apt", True)),
}


@pytest.mark.parametrize("args, expected", list(CASES.values()), ids=list(CASES))
def test_runtime_plan(args, expected):
    plan = rr.runtime_plan(*args)
    assert (plan["runtime"], plan["refused"]) == expected, plan
    assert plan["reason"]
    if plan["refused"]:
        assert "pytorch_rocm_runtime" in plan["message"] and "Fix:" in plan["message"] and "Nothing was changed" in plan["message"]
        assert plan["requirements"] == [] and plan["index_url"] is None
    else:
        assert plan["message"] == ""
    if plan["runtime"] == "pip":
        assert plan["index_url"] == sm.ROCM_PIP["index_url"] and plan["requirements"]
    else:
        assert plan["requirements"] == [] and plan["index_url"] is None


def test_refusals_name_the_fix_that_applies():
    preview = rr.runtime_plan("pip", ["gfx1031"], "dkms", "Ubuntu", "24.04")
    assert "pytorch_rocm_runtime_allow_preview: true" in preview["message"] and "gfx1031 (preview)" in preview["message"]
    wheelhouse = rr.runtime_plan("pip", ["gfx1151"], "inbox", "Ubuntu", "24.04", wheelhouse=True, allow_preview=True)
    assert "pytorch_rocm_wheelhouse: false" in wheelhouse["message"] and "sdist" in wheelhouse["message"]
    assert "allow_preview" not in wheelhouse["message"]


def test_auto_says_why_it_stays_on_apt():
    assert "wheelhouse" in rr.runtime_plan("auto", ["gfx1151"], "inbox", "Ubuntu", "24.04", wheelhouse=True)["reason"]
    assert "amdgpu driver" in rr.runtime_plan("auto", ["gfx1201"], "inbox", "Ubuntu", "24.04")["reason"]
    assert "Debian 12" in rr.runtime_plan("auto", ["gfx1151"], "inbox", "Debian", "12")["reason"]
    assert "kernel driver is dkms" in rr.runtime_plan("auto", ["gfx1151"], "dkms", "Ubuntu", "24.04")["reason"]


def test_pip_requirements_carry_every_device_extra_and_the_rocm_release():
    assert rr.pip_requirements(["gfx1201", "gfx1151"]) == [
        "torch[device-gfx1151,device-gfx1201]==2.13.0+rocm10.0.0",
        "torchvision[device-gfx1151,device-gfx1201]==0.28.0+rocm10.0.0",
        "torchaudio==2.11.0.2+rocm10.0.0",
        "rocm[libraries,device-gfx1151,device-gfx1201]==10.0.0",
    ]
    assert rr.pip_requirements(["gfx1151"], "2.13")[0] == "torch[device-gfx1151]==2.13.0+rocm10.0.0"
    with pytest.raises(ValueError, match="torch 2.9"):
        rr.pip_requirements(["gfx1151"], "2.9")


def test_a_torch_pin_of_another_release_keeps_auto_on_apt_and_refuses_pip():
    assert rr.runtime_plan("auto", ["gfx1151"], "inbox", "Ubuntu", "24.04", torch="2.9")["runtime"] == "apt"
    refused = rr.runtime_plan("pip", ["gfx1151"], "inbox", "Ubuntu", "24.04", torch="2.9")
    assert refused["refused"] and "pytorch_rocm_torch_version" in refused["message"]


def test_a_bad_request_raises():
    with pytest.raises(ValueError, match="pytorch_rocm_runtime"):
        rr.runtime_plan("conda", ["gfx1151"])


def test_every_row_is_sourced_and_every_target_listed_once():
    seen = [t for row in sm.ROCM_PIP_TARGETS for t in row["targets"]]
    assert len(seen) == len(set(seen))
    for row in sm.ROCM_PIP_TARGETS:
        assert row["status"] in ("stable", "preview") and row["sources"]
        assert all(key in sm.SOURCES for key in row["sources"])
        assert (row["status"] == "stable") == bool(row["os"]) == (row["driver"] is not None)
    for key in ("index_source", "python_source", "wheelhouse_source", "production_source"):
        assert sm.ROCM_PIP[key] in sm.SOURCES
    assert sm.ROCM_PIP["torch"]["source"] in sm.SOURCES and sm.ROCM_PIP["torch"]["verified"] is False
    assert sm.ROCM_PIP["index_url"].startswith("https://")


# The lab (molecule/*, tests/lab): Debian 12 systemd containers (rocm_driver: kernel driver inbox, the container's host's)
# presenting gfx1100, gfx1031, gfx1030 + gfx1036 and gfx1151 (site's navi31), most of them through the fleet wheelhouse.
LAB_TARGETS = (["gfx1100"], ["gfx1031"], ["gfx1030"], ["gfx1151"], ["gfx1201", "gfx1036"], [])


@pytest.mark.parametrize("targets", LAB_TARGETS, ids=lambda t: ",".join(t) or "none")
@pytest.mark.parametrize("wheelhouse", (True, False))
def test_auto_keeps_every_lab_host_on_apt(targets, wheelhouse):
    assert rr.runtime_plan("auto", targets, "inbox", "Debian", "12", wheelhouse)["runtime"] == "apt"


def test_the_lab_hosts_are_debian_12():
    paths = list((ROOT / "molecule").glob("*/molecule.yml")) + [ROOT / ".config" / "molecule" / "config.yml"]
    images = {line.split("image:", 1)[1].strip() for path in paths
              for line in path.read_text().splitlines() if line.strip().startswith("image:")}
    assert images and all("debian12" in image for image in images), images


def test_pytorch_rocm_runtime_defaults_to_auto():
    defaults = yaml.safe_load((ROOT / "roles" / "pytorch_rocm" / "defaults" / "main.yml").read_text())
    assert defaults["pytorch_rocm_runtime"] == "auto" and defaults["pytorch_rocm_runtime_allow_preview"] is False

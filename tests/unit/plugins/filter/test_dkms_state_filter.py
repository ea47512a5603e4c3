# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The filters of issue 48's recovery, upgrade and kernel hold: thin wrappers, their input checks and package_facts' shape."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter.dkms_state import amdgpu_dkms_recovery, amdgpu_dkms_state
from ansible_collections.radeonlab.llm.plugins.filter.driver_kernel import kernel_hold_packages
from ansible_collections.radeonlab.llm.plugins.filter.rocm_upgrade import rocm_release_packages, rocm_userspace_plan

HALF = "amdgpu-dkms\t1:6.12.12.60401-2164967.24.04\tiF\n"


def test_state_and_recovery():
    found = amdgpu_dkms_state(HALF, "", [["6.14.0-24-generic", "running"]], "error: x\n")
    assert found["broken"] and amdgpu_dkms_recovery(found, "inbox")["action"] == "remove"


@pytest.mark.parametrize("call", [
    lambda: amdgpu_dkms_state(HALF, "", ["6.14.0-24-generic"]),
    lambda: amdgpu_dkms_state("amdgpu-dkms\t1\tiZ\n"),
    lambda: amdgpu_dkms_recovery({}, "dkms"),
    lambda: amdgpu_dkms_recovery(amdgpu_dkms_state(HALF), "auto"),
    lambda: rocm_userspace_plan("", ["rocm-core"]),
    lambda: rocm_release_packages(["rocm-core"]),
    lambda: kernel_hold_packages([], "6.8.0-45-generic", "linux-generic"),
])
def test_bad_inputs_name_the_filter(call):
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm."):
        call()


def test_the_plan_reads_package_facts():
    facts = {"rocm-core": [{"version": "7.0.0.70000-38~24.04", "arch": "amd64"}], "libc6": [{"version": "2.39-0ubuntu8"}]}
    madison = " rocm-core | 7.1.0.70100-20~24.04 | http://mirror/rocm/apt/7.1 noble/main amd64 Packages\n"
    plan = rocm_userspace_plan("7.0.0-38", facts, madison, ["rocm-core"])
    assert (plan["direction"], plan["install"]) == ("upgrade", ["rocm-core=7.1.0.70100-20~24.04"])


def test_the_release_packages_read_package_facts():
    facts = {"rocm-core": [{"version": "7.0.0.70000-38~24.04"}], "mawk": [{"version": "1.3.4.20240123-1build1"}],
             "amdgpu-dkms-firmware": [{"version": "1:6.12.12.60400-2147987.24.04"}]}
    assert rocm_release_packages(facts, ["amdgpu-dkms-firmware"]) == ["rocm-core"]


def test_kernel_hold_packages():
    assert kernel_hold_packages(["linux-image-6.8.0-45-generic", "linux-generic"], "6.8.0-45-generic", ["linux-generic"]) == [
        "linux-generic", "linux-image-6.8.0-45-generic"]

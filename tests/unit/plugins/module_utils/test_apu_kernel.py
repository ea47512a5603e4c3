# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Ryzen AI Max (Strix Halo) kernel check against AMD's table (plugins/module_utils/apu_kernel.py)."""

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import apu_kernel


def ubuntu(release, version="#1-Ubuntu SMP PREEMPT_DYNAMIC", distribution_version="24.04"):
    return {"release": release, "version": version, "distribution": "Ubuntu", "distribution_version": distribution_version}


def other(release, distribution="Debian", distribution_version="12"):
    return {"release": release, "version": "#1 SMP", "distribution": distribution, "distribution_version": distribution_version}


# kernel facts -> has the fixes (AMD's minimums: HWE 6.17.0-19.19~24.04.2, OEM 6.14.0-1018, others 6.18.4)
KERNELS = {
    "HWE at the minimum upload": (ubuntu("6.17.0-19-generic", "#19~24.04.2-Ubuntu SMP PREEMPT_DYNAMIC"), True),
    "HWE same ABI, the upload before": (ubuntu("6.17.0-19-generic", "#19~24.04.1-Ubuntu SMP PREEMPT_DYNAMIC"), False),
    "HWE same ABI, upload not printed": (ubuntu("6.17.0-19-generic", "#1 SMP"), None),
    "HWE a later ABI": (ubuntu("6.17.0-22-generic"), True),
    "HWE an earlier ABI": (ubuntu("6.17.0-14-generic"), False),
    "24.04 GA kernel 6.8": (ubuntu("6.8.0-45-generic"), False),
    "OEM at the minimum": (ubuntu("6.14.0-1018-oem"), True),
    "OEM before it": (ubuntu("6.14.0-1015-oem"), False),
    "OEM 6.11": (ubuntu("6.11.0-1027-oem"), False),
    "Ubuntu 26.04 generic (fixed natively)": (ubuntu("7.0.0-10-generic", distribution_version="26.04"), True),
    "Fedora 43 (fixed natively)": (other("6.17.1-300.fc43.x86_64", "Fedora", "43"), True),
    "Debian, 6.18.4": (other("6.18.4-amd64"), True),
    "Debian, 6.18.3": (other("6.18.3-amd64"), False),
    "Debian 12, 6.1": (other("6.1.0-28-amd64"), False),
    "this lab's VM kernel": (other("6.18.44-fc-v1300"), True),
    "Arch, 6.19": (other("6.19.2-arch1-1", "Archlinux", "rolling"), True),
    "no release": (other(""), None),
}


@pytest.mark.parametrize("kernel, fixed", KERNELS.values(), ids=list(KERNELS))
def test_kernel_has_fixes(kernel, fixed):
    assert apu_kernel.kernel_has_fixes(kernel["release"], kernel["version"], kernel["distribution"], kernel["distribution_version"]) is fixed


# AMD's table: ROCm release x (kernel with the fixes, older kernel)
@pytest.mark.parametrize(
    "rocm, fixed, status",
    [
        ("7.2.0", True, "supported"), ("7.2.0", False, "unsupported"),
        ("7.2.3", True, "supported"), ("7.2.3", False, "experimental"),
        ("7.2", False, "experimental"),
        ("7.1.0", True, "unsupported"), ("7.1.1", False, "experimental"),
        ("6.4.4", True, "unsupported"), ("6.4.1", False, "experimental"),
        ("7.0.2", True, "unknown"),  # not in AMD's table
        ("7.2.3", None, "unknown"),
        ("7.20.0", True, "unknown"),  # a prefix of the digits is not the line
    ],
)
def test_release_status(rocm, fixed, status):
    assert apu_kernel.release_status(rocm, fixed) == status


def test_check_a_strix_halo_on_the_default_line_and_a_fixed_kernel():
    result = apu_kernel.check(["gfx1151"], "7.1.0", other("6.18.44-fc-v1300"))
    assert (result["applies"], result["status"], result["kernel_has_fixes"]) == (True, "unsupported", True)
    assert "AMD lists ROCm 7.1.0 as unsupported on kernel 6.18.44-fc-v1300 (has the KFD fixes)" in result["message"]
    assert "Supported: ROCm 7.2 on a kernel with the KFD fixes" in result["message"]
    assert "rdna3-5.rst" in result["source"]


def test_check_supported_and_unknown_and_not_applicable():
    assert apu_kernel.check(["gfx1151"], "7.2.3", ubuntu("6.17.0-19-generic", "#19~24.04.2-Ubuntu"))["status"] == "supported"
    unknown = apu_kernel.check(["gfx1151"], "7.0.2", ubuntu("6.8.0-45-generic"))
    assert unknown["status"] == "unknown" and "says nothing of ROCm 7.0.2" in unknown["message"]
    for targets in (["gfx1201"], [], ["gfx1150"]):  # RDNA4 card, no GPU, Strix Point (no kernel row from AMD)
        result = apu_kernel.check(targets, "7.1.0", ubuntu("6.8.0-45-generic"))
        assert (result["applies"], result["status"], result["message"]) == (False, "unknown", "")

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_driver's kernel driver decision (vars/main.yml) from what preflight_kernel.yml reads, on bare metal as on a fleet:
the lab's hosts are containers, so only this table reaches the amdgpu-dkms and Ryzen AI Max paths of auto."""

from __future__ import annotations

import pytest
from rocm_driver_vars import STRIX_HALO, host_facts, render

MADISON_3020 = " amdgpu-dkms | 1:6.16.6.30200000-2238411.24.04 | https://repo.radeon.com/amdgpu/30.20/ubuntu noble/main amd64 Packages\n"
MADISON_3010 = " amdgpu-dkms | 1:6.14.14.30100200-2212345.24.04 | https://repo.radeon.com/amdgpu/30.10.2/ubuntu noble/main amd64 Packages\n"
RADEON_7900 = ("0x1002", "0x744c", "0x1022", "0x14d8")  # an RX 7900 XTX and an AMD host bridge: vendor, device lines


def _decide(kernel_module="auto", kernel="6.8.0-45-generic", boot=(), madison=MADISON_3020, pci=RADEON_7900, container=False):
    registered = dict(
        rocm_driver_kernel_module=kernel_module,
        __rocm_driver_dkms_madison={"stdout": madison},
        __rocm_driver_boot={"files": [{"path": "/boot/vmlinuz-" + release} for release in boot]},
        __rocm_driver_pci_ids={"stdout_lines": list(pci)},
    )
    facts = host_facts(kernel, container)
    return render("{{ _rocm_driver_kernel_driver }}", facts, **registered), render("{{ _rocm_driver_kernel_driver_reason }}", facts, **registered)


# rocm_driver_kernel_module, facts -> the driver, a fragment of the reason
CASES = {
    "auto, 30.20 on Ubuntu 24.04's 6.8 (AMD documents it)": ({}, "dkms", "builds on kernel 6.8.0-45-generic"),
    "auto, 30.20 on the HWE 6.14 with 6.17 installed next": (
        dict(kernel="6.14.0-37-generic", boot=["6.14.0-37-generic", "6.17.0-19-generic"]), "dkms", "6.14.0-37-generic, 6.17.0-19-generic"),
    "auto, 30.10 with 6.17 installed next (fails there)": (
        dict(kernel="6.14.0-37-generic", boot=["6.17.0-19-generic"], madison=MADISON_3010), "inbox",
        "auto keeps the kernel's own driver"),
    "auto, a kernel no report covers": (dict(kernel="6.18.44-fc-v1300"), "inbox", "no report says whether it builds"),
    "auto, a Strix Halo": (dict(pci=STRIX_HALO), "inbox", "a Ryzen AI Max APU: AMD advises the kernel's own driver"),
    "auto, a container": (dict(container=True), "inbox", "the host is a container"),
    "dkms asked for": (dict(kernel_module="dkms", kernel="6.18.44-fc-v1300"), "dkms", "rocm_driver_kernel_module: dkms asked for"),
    "inbox asked for": (dict(kernel_module="inbox"), "inbox", "rocm_driver_kernel_module: inbox asked for"),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_kernel_driver_decision(case):
    facts, driver, reason = case
    decided, why = _decide(**facts)
    assert decided == driver, why
    assert reason in why

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_driver's vars/main.yml for issue 48, rendered from what the probes register: the broken-amdgpu-dkms state and its
recovery, the ROCm user-space plan from package_facts and madison, and the kernel hold. The templates' filters and attribute
paths are checked here; the tasks around them only in the lab (molecule rocm_driver)."""

from __future__ import annotations

import base64

from rocm_driver_vars import host_facts, render

PACKAGES = {"rocm-core": [{"version": "7.0.0.70000-38~24.04"}], "rocm-hip-runtime": [{"version": "7.0.0.70000-38~24.04"}],
            "amdgpu-dkms-firmware": [{"version": "1:6.12.12.60400-2147987.24.04"}], "libc6": [{"version": "2.39-0ubuntu8"}],
            "linux-image-6.8.0-45-generic": [{"version": "6.8.0-45.45"}], "linux-generic-hwe-24.04": [{"version": "6.8.0-45.45"}]}
MADISON = (" rocm-hip-runtime | 7.1.0.70100-20~24.04 | http://m/rocm/apt/7.1 noble/main amd64 Packages\n"
           "  rocm-core | 7.1.0.70100-20~24.04 | http://m/rocm/apt/7.1 noble/main amd64 Packages\n")


def _render(expression, dpkg="", allow=False, container=True, hold=False):
    facts = host_facts(container=container, packages=PACKAGES)
    return render(
        expression, facts,
        rocm_driver_allow_downgrade=allow, rocm_driver_hold_kernel=hold,
        __rocm_driver_boot={"files": [{"path": "/boot/vmlinuz-6.8.0-45-generic"}, {"path": "/boot/vmlinuz-6.8.0-50-generic"}]},
        __rocm_driver_dkms_dpkg={"stdout": dpkg, "rc": 0 if dpkg else 1},
        __rocm_driver_dkms_tree={"stdout": ""},
        __rocm_driver_make_log={"stdout": "DKMS make.log for amdgpu-6.12.12-2164967.24.04\nfoo.c:1: error: bar\n"},
        __rocm_driver_info_version={"content": base64.b64encode(b"7.0.0-38\n").decode()},
        __rocm_driver_madison={"stdout": MADISON},
    )


def test_a_half_configured_driver_in_a_container_is_removed_and_the_next_boot_is_checked():
    state = _render("{{ _rocm_driver_dkms_state }}", dpkg="amdgpu-dkms 1:6.12.12.60401-2164967.24.04 iF\n")
    assert state["broken"] and state["make_log"] == "/var/lib/dkms/amdgpu/6.12.12-2164967.24.04/build/make.log"
    assert [k["role"] for k in state["kernels"]] == ["running", "next boot"]
    assert "foo.c:1: error: bar" in state["log"]
    recovery = _render("{{ _rocm_driver_dkms_recovery }}", dpkg="amdgpu-dkms 1:6.12.12.60401-2164967.24.04 iF\n")
    assert recovery["action"] == "remove" and "kernel's own amdgpu driver" in recovery["message"]


def test_no_amdgpu_dkms_nothing_to_recover():
    assert _render("{{ _rocm_driver_dkms_recovery.action }}") == "none"


def test_the_user_space_plan_leaves_the_driver_packages_to_their_pin():
    plan = _render("{{ _rocm_driver_userspace }}")
    assert (plan["installed"], plan["target"], plan["direction"]) == ("7.0.0", "7.1.0", "upgrade")
    assert plan["install"] == ["rocm-core=7.1.0.70100-20~24.04", "rocm-hip-runtime=7.1.0.70100-20~24.04"]
    assert _render("{{ _rocm_driver_rocm_installed }}") == ["rocm-core", "rocm-hip-runtime"]


def test_a_downgrade_is_refused_by_default():
    downgrade = MADISON.replace("7.1.0.70100", "6.4.0.60400")
    plan = _render("{{ '7.0.0-38' | radeonlab.llm.rocm_userspace_plan(ansible_facts['packages'], '" + downgrade.replace("\n", "\\n")
                   + "', ['rocm-hip-runtime'], rocm_driver_allow_downgrade) }}")
    assert plan["refused"]


def test_the_kernel_hold_list():
    held = _render("{{ _rocm_driver_kernel_hold }}", container=False)
    assert held == ["linux-generic-hwe-24.04", "linux-image-6.8.0-45-generic"]

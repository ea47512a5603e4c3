# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The amdgpu-dkms x kernel filter of radeonlab.llm.rocm_driver's preflight (documentation in amdgpu_dkms_check.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.driver_kernel import check, hold_packages, newest_kernel


def amdgpu_dkms_check(dkms_version, running, boot_files=None, distribution=""):
    """Whether amdgpu-dkms ``dkms_version`` builds on the running kernel and on the newest one in ``boot_files``."""
    if not isinstance(boot_files or [], (list, tuple)):
        raise AnsibleFilterError("radeonlab.llm.amdgpu_dkms_check: boot_files must be a list of paths, got %s"
                                 % type(boot_files).__name__)
    return check(dkms_version, running, newest_kernel(boot_files or []), distribution)


def kernel_hold_packages(installed, release, meta_patterns=None):
    """The installed packages of kernel ``release`` and the kernel meta packages matching ``meta_patterns``."""
    if not isinstance(meta_patterns or [], (list, tuple)):
        raise AnsibleFilterError("radeonlab.llm.kernel_hold_packages: meta_patterns must be a list of regular expressions")
    return hold_packages(list(installed or []), release, meta_patterns or [])


class FilterModule(object):
    """radeonlab.llm amdgpu-dkms x kernel filter."""

    def filters(self):
        return {"amdgpu_dkms_check": amdgpu_dkms_check, "kernel_hold_packages": kernel_hold_packages}

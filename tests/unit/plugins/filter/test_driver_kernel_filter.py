# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The amdgpu_dkms_check filter: the newest kernel of the boot files is the next boot's; bad input is an AnsibleFilterError."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter.driver_kernel import FilterModule

CHECK = FilterModule().filters()["amdgpu_dkms_check"]


def test_the_newest_boot_file_is_checked_as_the_next_boot():
    boot = ["/boot/vmlinuz-6.14.0-37-generic", "/boot/vmlinuz-6.17.0-19-generic", "/boot/initrd.img-6.17.0-19-generic"]
    result = CHECK("1:6.14.14.30100200-2212345.24.04", "6.14.0-37-generic", boot, "ubuntu-24.04")
    assert [(k["release"], k["role"], k["status"]) for k in result["kernels"]] == [
        ("6.14.0-37-generic", "running", "builds"), ("6.17.0-19-generic", "next boot", "fails")]
    assert result["refused"]


def test_no_boot_files_checks_the_running_kernel_only():
    assert [k["role"] for k in CHECK("1:6.16.6.30200000-2238411.24.04", "6.8.0-45-generic")["kernels"]] == ["running"]


def test_boot_files_must_be_a_list():
    with pytest.raises(AnsibleFilterError, match="boot_files must be a list"):
        CHECK("1:6.16.6.30200000-2238411.24.04", "6.8.0-45-generic", "/boot/vmlinuz-6.8.0-45-generic")

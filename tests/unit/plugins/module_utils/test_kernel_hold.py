# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_driver_hold_kernel: which installed packages keep a host on its kernel (driver_kernel.hold_packages)."""

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import driver_kernel as dk

UBUNTU = [r"linux-(image-|headers-|modules-extra-)?(generic|lowlatency|oem)(-hwe)?(-\d+\.\d+[a-z]?)?"]
INSTALLED = ["linux-image-6.8.0-45-generic", "linux-headers-6.8.0-45-generic", "linux-modules-6.8.0-45-generic",
             "linux-modules-extra-6.8.0-45-generic", "linux-headers-6.8.0-45", "linux-image-6.8.0-40-generic",
             "linux-generic-hwe-24.04", "linux-image-generic-hwe-24.04", "linux-headers-generic-hwe-24.04",
             "linux-firmware", "linux-base", "libc6", "linux-tools-common"]


def test_the_running_kernels_packages_and_the_metas_are_held():
    assert dk.hold_packages(INSTALLED, "6.8.0-45-generic", UBUNTU) == [
        "linux-generic-hwe-24.04", "linux-headers-6.8.0-45-generic", "linux-headers-generic-hwe-24.04",
        "linux-image-6.8.0-45-generic", "linux-image-generic-hwe-24.04", "linux-modules-6.8.0-45-generic",
        "linux-modules-extra-6.8.0-45-generic"]


@pytest.mark.parametrize("installed, release, patterns, expected", [
    (["linux-image-6.1.0-26-amd64", "linux-image-amd64", "linux-headers-amd64", "linux-headers-6.1.0-26-amd64",
      "linux-headers-6.1.0-26-common"], "6.1.0-26-amd64", ["linux-(image|headers)-amd64"],
     ["linux-headers-6.1.0-26-amd64", "linux-headers-amd64", "linux-image-6.1.0-26-amd64", "linux-image-amd64"]),
    (INSTALLED, "", UBUNTU, []),
    (["linux-generic"], "6.8.0-45-generic", UBUNTU, ["linux-generic"]),
    (["linux-oem-24.04b", "linux-image-oem-24.04b"], "6.11.0-1007-oem", UBUNTU, ["linux-image-oem-24.04b", "linux-oem-24.04b"]),
    (["linux-generic-extra"], "6.8.0-45-generic", UBUNTU, []),  # a pattern matches a whole name only
])
def test_hold_packages(installed, release, patterns, expected):
    assert dk.hold_packages(installed, release, patterns) == expected

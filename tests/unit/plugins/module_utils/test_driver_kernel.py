# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""amdgpu-dkms against the host's kernels (plugins/module_utils/driver_kernel.py), over support_matrix.AMDGPU_DKMS_KERNELS."""

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import driver_kernel as dk
from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm


@pytest.mark.parametrize(
    "version, line",
    [
        ("1:6.16.6.30200000-2238411.24.04", "30.20.0"),  # the lab's 30.20 stand-in
        ("1:6.14.14.30100200-2212345.24.04", "30.10.2"),
        ("1:6.19.0.31200000-2307534.24.04", "31.20.0"),  # amdgpu_epoch_31
        ("1:6.12.12.60404-2202139.24.04", "6.4.4"),  # 6.4.4's driver: the ROCm release itself
        ("1:6.12.12.60400-2147987.22.04", "6.4.0"),
        ("6.3.6.60000-1697589.22.04", "6.0.0"),
        ("", None), ("not-a-version", None),
    ],
)
def test_driver_line(version, line):
    assert dk.driver_line(version) == line


@pytest.mark.parametrize(
    "release, series",
    [("6.17.0-19-generic", "6.17"), ("6.8.0-45-generic", "6.8"), ("6.14.0-1018-oem", "6.14"), ("7.0.0-10-generic", "7.0"),
     ("6.18.44-fc-v1300", "6.18"), ("6.1.0-28-amd64", "6.1"), ("", None), ("linux", None)],
)
def test_kernel_series(release, series):
    assert dk.kernel_series(release) == series


def test_newest_kernel_is_the_next_boots():
    boot = ["/boot/vmlinuz-6.8.0-45-generic", "/boot/vmlinuz-6.17.0-19-generic", "/boot/vmlinuz-6.17.0-9-generic",
            "/boot/initrd.img-6.17.0-19-generic", "/boot/vmlinuz", "/boot/config-6.17.0-19-generic"]
    assert dk.newest_kernel(boot) == "6.17.0-19-generic"
    assert dk.newest_kernel(["/boot/vmlinuz-6.8.0-9-generic", "/boot/vmlinuz-6.8.0-10-generic"]) == "6.8.0-10-generic"
    assert dk.newest_kernel([]) is None


def test_every_row_names_a_source_and_a_date():
    assert sm.AMDGPU_DKMS_KERNELS, "the driver x kernel table is empty"
    for row in sm.AMDGPU_DKMS_KERNELS:
        assert row["status"] in ("builds", "fails") and row["source"] in sm.SOURCES, row
        assert row["date"][:2] == "20" and len(row["date"]) == 10, row
        assert dk.kernel_series(row["kernel"] + ".0") == row["kernel"], row


# driver line, kernel, distribution -> status (rows of AMDGPU_DKMS_KERNELS)
@pytest.mark.parametrize(
    "line, kernel, distribution, status",
    [
        ("6.2.0", "6.8.0-44-generic", "ubuntu-24.04", "fails"),  # dkms_3701
        ("6.2.1", "6.8.0-44-generic", "ubuntu-24.04", "builds"),  # fixed in 6.2.1
        ("6.4.1", "6.14.0-24-generic", "ubuntu-24.04", "fails"),  # dkms_4619, before the fix
        ("6.4.2", "6.14.0-24-generic", "ubuntu-24.04", "builds"),  # from the fix on
        ("6.4.2", "6.16.0-1-generic", "ubuntu-24.04", "fails"),  # AMD: 6.16 not supported
        ("30.10.2", "6.17.0-19-generic", "ubuntu-24.04", "fails"),  # any distribution: dkms_5553
        ("30.20.1", "6.17.0-19-generic", "ubuntu-24.04", "builds"),
        ("30.20.0", "6.14.0-37-generic", "ubuntu-24.04", "builds"),  # AMD's documented HWE kernel
        ("30.30.1", "6.18.14-061814-generic", "ubuntu-24.04", "fails"),
        ("30.30.4", "7.0.0-22-generic", "ubuntu-26.04", "fails"),
        ("30.30.4", "6.12.100-amd64", "debian-13", "fails"),  # a later report than the one AMD's page lists (none here)
        ("30.20.0", "6.18.44-fc-v1300", "debian-12", "unknown"),  # the lab's kernel: no report
        ("30.30.1", "7.0.0-22-generic", "ubuntu-24.04", "unknown"),  # the 26.04 row does not speak for 24.04
        (None, "6.8.0-45-generic", "ubuntu-24.04", "unknown"),
    ],
)
def test_status(line, kernel, distribution, status):
    assert dk.status(line, kernel, distribution)[0] == status


def test_the_newest_row_of_the_most_specific_distribution_wins(monkeypatch):
    rows = ({"line": "30.30", "fixed_in": None, "distribution": "any", "kernel": "6.12", "status": "builds", "source": "amd_sysreq_724",
             "date": "2026-05-28", "note": ""},
            {"line": "30.30", "fixed_in": None, "distribution": "debian-13", "kernel": "6.12", "status": "builds",
             "source": "amd_sysreq_724", "date": "2026-05-28", "note": ""},
            {"line": "30.30", "fixed_in": None, "distribution": "debian-13", "kernel": "6.12", "status": "fails", "source": "dkms_5111",
             "date": "2026-08-01", "note": "a point release broke it"})
    monkeypatch.setattr(sm, "AMDGPU_DKMS_KERNELS", rows)
    assert dk.status("30.30.4", "6.12.100-amd64", "debian-13")[0] == "fails"
    assert dk.status("30.30.4", "6.12.100-amd64", "debian-12")[0] == "builds"


def test_check_refuses_a_driver_that_fails_on_the_next_boot_kernel():
    result = dk.check("1:6.14.14.30100200-2212345.24.04", "6.14.0-37-generic", "6.17.0-19-generic", "ubuntu-24.04")
    assert result["refused"] and result["line"] == "30.10.2"
    assert [(k["role"], k["status"]) for k in result["kernels"]] == [("running", "builds"), ("next boot", "fails")]
    for fragment in ("is known not to build on kernel 6.17.0-19-generic (next boot)", "__dma_fence_is_later",
                     "rocm_driver_kernel_module: inbox", "rocm_repo_amdgpu_version", "Nothing was changed."):
        assert fragment in result["message"]


def test_check_names_unknown_kernels_and_does_not_refuse():
    result = dk.check("1:6.16.6.30200000-2238411.24.04", "6.18.44-fc-v1300", None, "debian-12")
    assert not result["refused"] and [k["status"] for k in result["kernels"]] == ["unknown"]
    assert "no report says whether it builds" in result["message"] and "make.log" in result["message"]
    same = dk.check("1:6.16.6.30200000-2238411.24.04", "6.8.0-45-generic", "6.8.0-45-generic", "ubuntu-24.04")
    assert [k["role"] for k in same["kernels"]] == ["running"] and same["kernels"][0]["status"] == "builds"

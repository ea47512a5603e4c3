# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A failed amdgpu-dkms build (plugins/module_utils/dkms_state.py): dpkg's state, dkms status, the make.log, the recovery."""

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import dkms_state as ds

HALF = "amdgpu-dkms 1:6.12.12.60401-2164967.24.04 iF\n"
OK = "amdgpu-dkms\t1:6.16.6.30200000-2255209.24.04\tii\n"
# dkms 3.x (ROCm/legacy-rocm-build#5624) and 2.x (#557) layouts
DKMS_NEW = ("amdgpu/6.16.6-2255209.24.04, 6.17.0-5-generic, x86_64: installed (Original modules exist)\n"
            "amdgpu/6.16.6-2255209.24.04, 6.17.0-8-generic, x86_64: built\n")
DKMS_OLD = "amdgpu, 1.9-211.el7, 3.10.0-862.11.6.el7.x86_64, x86_64: installed (original_module exists)\n"
MAKE_LOG = """DKMS make.log for amdgpu-6.12.12-2164967.24.04 for kernel 6.14.0-24-generic (x86_64)
make: Entering directory '/usr/src/linux-headers-6.14.0-24-generic'
  CC [M]  /var/lib/dkms/amdgpu/6.12.12-2164967.24.04/build/amd/amdgpu/amdgpu_drv.o
/var/lib/dkms/amdgpu/6.12.12-2164967.24.04/build/amd/amdgpu/amdgpu_drv.c:42:10: error: implicit declaration of function 'drm_foo'
make[1]: *** [scripts/Makefile.build:243: amdgpu_drv.o] Error 1
make: Leaving directory '/usr/src/linux-headers-6.14.0-24-generic'
"""


@pytest.mark.parametrize("version, expected", [
    ("1:6.12.12.60401-2164967.24.04", "6.12.12-2164967.24.04"),  # ROCm/amdgpu#192
    ("1:6.16.13.30300000-2278356.24.04", "6.16.13-2278356.24.04"),  # ROCm/amdgpu#209
    ("6.3.6.60000-1697589.22.04", "6.3.6-1697589.22.04"),
    ("", None), (None, None), ("garbage", None),
])
def test_module_version_is_the_dkms_tree_directory(version, expected):
    assert ds.module_version(version) == expected


@pytest.mark.parametrize("line, status, installed, version", [
    (HALF, "half-configured", True, "1:6.12.12.60401-2164967.24.04"),
    (OK, "installed", True, "1:6.16.6.30200000-2255209.24.04"),
    ("amdgpu-dkms\t1:6.16.6.30200000-1\tiU\n", "unpacked", True, "1:6.16.6.30200000-1"),
    ("amdgpu-dkms\t1:6.16.6.30200000-1\trc\n", "config-files", False, "1:6.16.6.30200000-1"),
    ("amdgpu-dkms\t\tun\n", "not-installed", False, None),
    ("amdgpu-dkms  un\n", "not-installed", False, None),  # blanks, no version
    ("amdgpu-dkms 1:6.12.12.60401-2164967.24.04 iF\n", "half-configured", True, "1:6.12.12.60401-2164967.24.04"),
    ("", "not-installed", False, None),
])
def test_parse_dpkg(line, status, installed, version):
    found = ds.parse_dpkg(line)
    assert (found["status"], found["installed"], found["version"]) == (status, installed, version)


def test_parse_dpkg_rejects_what_dpkg_query_does_not_print():
    with pytest.raises(ds.DkmsStateError):
        ds.parse_dpkg("amdgpu-dkms\t1.0\tiZ\n")


def test_reinst_required_is_broken():
    found = ds.state("amdgpu-dkms\t1:6.12.12.60401-2164967.24.04\tiiR\n")
    assert found["package"]["reinst_required"] and found["broken"]


@pytest.mark.parametrize("text, expected", [
    (DKMS_NEW, [("6.16.6-2255209.24.04", "6.17.0-5-generic", "installed"), ("6.16.6-2255209.24.04", "6.17.0-8-generic", "built")]),
    (DKMS_OLD, [("1.9-211.el7", "3.10.0-862.11.6.el7.x86_64", "installed")]),
    ("amdgpu/6.16.6-2255209.24.04: added\n", [("6.16.6-2255209.24.04", None, "added")]),
    ("Error! Could not locate dkms.conf file.\n", []),  # ROCm/legacy-rocm-build#3701: a stale tree
    ("", []),
])
def test_parse_dkms_status(text, expected):
    assert [(row["version"], row["kernel"], row["state"]) for row in ds.parse_dkms_status(text)] == expected


def test_a_half_configured_package_is_broken_and_shows_the_make_log_errors():
    found = ds.state(HALF, "amdgpu/6.12.12-2164967.24.04: added\n", [("6.14.0-24-generic", "running")], MAKE_LOG)
    assert found["broken"] and found["module_version"] == "6.12.12-2164967.24.04"
    assert found["make_log"] == "/var/lib/dkms/amdgpu/6.12.12-2164967.24.04/build/make.log"
    assert found["log"][0].startswith("DKMS make.log for amdgpu-6.12.12")
    assert any("implicit declaration of function 'drm_foo'" in line for line in found["log"])
    assert not any("CC [M]" in line for line in found["log"]), "compile progress lines are not the relevant ones"
    assert "half-configured (dpkg iF)" in found["message"] and "drm_foo" in found["message"]


def test_without_a_make_log_the_message_says_so():
    found = ds.state(HALF, "", [("6.14.0-24-generic", "running")], "")
    assert found["log"] == [] and "make.log is not there to say why" in found["message"]


def test_an_installed_package_without_a_module_for_the_next_boot_is_reported_not_broken():
    found = ds.state(OK, DKMS_NEW, [("6.17.0-5-generic", "running"), ("6.17.0-9-generic", "next boot")])
    assert not found["broken"]
    assert [(k["release"], k["dkms"]) for k in found["unbuilt"]] == [("6.17.0-9-generic", "missing")]
    assert "6.17.0-9-generic (next boot: missing)" in found["message"]


def test_a_module_only_built_is_not_installed_for_that_kernel():
    found = ds.state(OK, DKMS_NEW, [("6.17.0-8-generic", "running")])
    assert [(k["release"], k["dkms"]) for k in found["unbuilt"]] == [("6.17.0-8-generic", "built")]


def test_a_healthy_package_and_an_absent_one():
    assert ds.state(OK, DKMS_NEW, [("6.17.0-5-generic", "running")])["message"].endswith("built it for kernel 6.17.0-5-generic")
    absent = ds.state("", "", [("6.8.0-45-generic", "running")])
    assert (absent["broken"], absent["unbuilt"], absent["message"]) == (False, [], "amdgpu-dkms is not installed")


def test_the_same_kernel_is_checked_once():
    found = ds.state(OK, DKMS_NEW, [("6.17.0-5-generic", "running"), ("6.17.0-5-generic", "next boot")])
    assert [k["role"] for k in found["kernels"]] == ["running"]


@pytest.mark.parametrize("text, limit, expected", [
    (MAKE_LOG, 2, 2),
    ("just\nsome\noutput\n", 20, 3),  # nothing matches: the end of the log
    ("", 20, 0),
])
def test_log_excerpt_is_bounded(text, limit, expected):
    assert len([line for line in ds.log_excerpt(text, limit) if line]) == expected


def test_log_lines_are_cut():
    assert len(ds.log_excerpt("error: " + "x" * 1000)[0]) == ds.LOG_LINE_CHARS


@pytest.mark.parametrize("line, driver, action, words", [
    (HALF, "dkms", "remove", "installs the configured amdgpu-dkms afresh"),
    (HALF, "inbox", "remove", "the kernel's own amdgpu driver is used"),
    (OK, "dkms", "none", ""),
    ("", "inbox", "none", ""),
])
def test_recovery_removes_a_broken_package_only(line, driver, action, words):
    decided = ds.recovery(ds.state(line, "", [("6.14.0-24-generic", "running")], MAKE_LOG), driver)
    assert decided["action"] == action and words in decided["message"]
    if action == "remove":
        assert decided["message"].startswith("RECOVERING amdgpu-dkms") and "dpkg --remove amdgpu-dkms" in decided["message"]


def test_recovery_needs_a_known_kernel_driver():
    with pytest.raises(ds.DkmsStateError):
        ds.recovery(ds.state(HALF), "auto")

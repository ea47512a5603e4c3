# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ROCm user space follows the configured line (plugins/module_utils/rocm_upgrade.py): upgrade, stay, refuse a downgrade."""

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import rocm_upgrade as ru

INSTALLED_70 = {"rocm-core": "7.0.0.70000-38~24.04", "rocm-hip-runtime": "7.0.0.70000-38~24.04",
                "hip-runtime-amd": "7.0.51831.70000-38~24.04", "rocm-smi-lib": "7.8.0.70000-38~24.04",
                "rocm-core7.0.0": "7.0.0.70000-38~24.04", "libc6": "2.39-0ubuntu8", "python3-wheel": "0.42.0-2"}
MADISON_71 = """ rocm-hip-runtime | 7.1.0.70100-20~24.04 | http://127.0.0.1:8765/rocm/apt/7.1 noble/main amd64 Packages
  rocm-core | 7.1.0.70100-20~24.04 | http://127.0.0.1:8765/rocm/apt/7.1 noble/main amd64 Packages
hip-runtime-amd | 7.1.25424.70100-20~24.04 | http://127.0.0.1:8765/rocm/apt/7.1 noble/main amd64 Packages
 rocm-smi-lib | 7.9.0.70100-20~24.04 | http://127.0.0.1:8765/rocm/apt/7.1 noble/main amd64 Packages
  rocminfo | 5.7.1-3build1 | http://archive.ubuntu.com/ubuntu noble/universe amd64 Packages
"""
MADISON_711 = MADISON_71.replace("7.1.0.70100", "7.1.1.70101").replace("25424.70100", "25424.70101").replace(
    "7.9.0.70100", "7.9.1.70101").replace("apt/7.1 ", "apt/7.1.1 ")


@pytest.mark.parametrize("version, number, release", [
    ("7.1.1.70101-38~24.04", 70101, "7.1.1"),
    ("7.1.0.70100-20~24.04", 70100, "7.1.0"),  # ROCm/legacy-rocm-build#5657
    ("6.1.40093.60102-119~22.04", 60102, "6.1.2"),  # #3306
    ("6.4.0.60400-47~22.04", 60400, "6.4.0"),
])
def test_release_number(version, number, release):
    assert ru.release_number(version) == number and ru.release_of_number(number) == release


# mawk on Debian 12 and Ubuntu 24.04: a date, not a ROCm release (the lab's hosts planned "ROCm 2020.1.20" from it)
@pytest.mark.parametrize("version", ["2.39-0ubuntu8", "5.7.1-3build1", "", None, "1.0", "1.3.4.20200120-3.1", "1.3.4.20240123-1build1"])
def test_a_distribution_version_has_no_rocm_release(version):
    assert ru.release_number(version) is None


def test_release_packages_names_the_rocm_ones_less_the_excluded():
    installed = {"rocm-core": "7.1.0.70100-20~24.04", "hip-runtime-amd": "7.1.0.70100-20~24.04", "mawk": "1.3.4.20240123-1build1",
                 "amdgpu-dkms": "1:6.12.12.60400-2147987.24.04", "libc6": "2.39-0ubuntu8"}
    assert ru.release_packages(installed, ["amdgpu-dkms"]) == ["hip-runtime-amd", "rocm-core"]
    assert ru.release_packages({}) == [] and ru.release_packages(None) == []


@pytest.mark.parametrize("text, expected", [("6.4.0-47\n", (6, 4, 0)), ("7.1.1-38", (7, 1, 1)), ("7.1", (7, 1, 0)), ("", None), ("x", None)])
def test_release_of_info(text, expected):
    assert ru.release_of_info(text) == expected


def test_parse_madison_keeps_apts_order_and_each_version_once():
    offered = ru.parse_madison(MADISON_71 + MADISON_71)
    assert offered["rocm-core"] == ["7.1.0.70100-20~24.04"] and offered["rocminfo"] == ["5.7.1-3build1"]


def test_a_line_change_moves_every_installed_package_of_the_old_release():
    plan = ru.plan("7.0.0-38\n", INSTALLED_70, MADISON_71, ["rocm-hip-runtime"])
    assert (plan["installed"], plan["target"], plan["direction"], plan["refused"]) == ("7.0.0", "7.1.0", "upgrade", False)
    assert plan["install"] == ["hip-runtime-amd=7.1.25424.70100-20~24.04", "rocm-core=7.1.0.70100-20~24.04",
                               "rocm-hip-runtime=7.1.0.70100-20~24.04", "rocm-smi-lib=7.9.0.70100-20~24.04"]
    assert plan["not_offered"] == ["rocm-core7.0.0"], "a version-suffixed package of the old release is left to apt"
    assert "7.0.0 -> 7.1.0" in plan["message"] and "no rocm-core7.0.0" in plan["message"]


def test_a_point_release_is_another_target():
    installed = {name: version.replace("7.0.0.70000", "7.1.0.70100") for name, version in INSTALLED_70.items()}
    plan = ru.plan("7.1.0-20", installed, MADISON_711, ["rocm-hip-runtime"])
    assert (plan["direction"], plan["target"]) == ("upgrade", "7.1.1")
    assert "rocm-hip-runtime=7.1.1.70101-20~24.04" in plan["install"]


def test_the_same_release_stays_and_names_the_same_versions():
    installed = {"rocm-hip-runtime": "7.1.0.70100-20~24.04", "rocm-core": "7.1.0.70100-20~24.04"}
    plan = ru.plan("7.1.0-20", installed, MADISON_71, ["rocm-hip-runtime"])
    assert plan["direction"] == "same" and not plan["refused"]
    assert plan["install"] == ["rocm-core=7.1.0.70100-20~24.04", "rocm-hip-runtime=7.1.0.70100-20~24.04"]


def test_a_fresh_host_installs_the_wanted_packages():
    plan = ru.plan("", {"libc6": "2.39-0ubuntu8"}, MADISON_71, ["rocm-hip-runtime", "rocm-smi-lib"])
    assert (plan["installed"], plan["direction"]) == (None, "fresh")
    assert plan["install"] == ["rocm-hip-runtime=7.1.0.70100-20~24.04", "rocm-smi-lib=7.9.0.70100-20~24.04"]


def test_a_date_stamped_distribution_package_in_madison_is_not_a_rocm_line():
    madison = MADISON_71 + "      mawk | 1.3.4.20240123-1build1 | http://archive.ubuntu.com/ubuntu noble/main amd64 Packages\n"
    plan = ru.plan("", {"mawk": "1.3.4.20240123-1build1"}, madison, ["rocm-hip-runtime"])
    assert (plan["target"], plan["direction"], plan["install"]) == ("7.1.0", "fresh", ["rocm-hip-runtime=7.1.0.70100-20~24.04"])


@pytest.mark.parametrize("allow, refused", [(False, True), (True, False)])
def test_a_downgrade_is_refused_unless_asked_for(allow, refused):
    installed = {name: version.replace("7.0.0.70000", "7.1.1.70101") for name, version in INSTALLED_70.items()}
    plan = ru.plan("7.1.1-38", installed, MADISON_71, ["rocm-hip-runtime"], allow_downgrade=allow)
    assert (plan["direction"], plan["refused"]) == ("downgrade", refused)
    if refused:
        assert "rocm_driver_allow_downgrade: true" in plan["message"] and "Nothing was changed." in plan["message"]
    else:
        assert "rocm-hip-runtime=7.1.0.70100-20~24.04" in plan["install"]


def test_nothing_offered_is_unknown_not_refused():
    plan = ru.plan("7.0.0-38", INSTALLED_70, "", ["rocm-hip-runtime"])
    assert (plan["direction"], plan["refused"], plan["install"]) == ("unknown", False, [])

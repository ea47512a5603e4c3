# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_driver's TTM limit (vars/main.yml) from what preflight_ttm.yml reads: on a Ryzen AI Max APU it is reported and,
when asked for, planned or refused; in a container, under WSL and next to a discrete GPU it is only reported. The lab's
hosts are containers without the APU, so only this table reaches the APU paths on bare metal."""

from __future__ import annotations

import pytest
from rocm_driver_vars import STRIX_HALO, host_facts, render, slurp

RADEON_7900 = ("0x1002", "0x744c")
GIB_MB = 1024


def _inputs(request=0, pci=STRIX_HALO, ram_gib=128, live="16777216\n", conf=None, gttsize="-1\n", container=False,
            kernel_module="auto", after=None, check_mode=False):
    facts = host_facts("6.17.0-19-generic", container, memtotal_mb=ram_gib * GIB_MB)
    return facts, dict(
        rocm_driver_kernel_module=kernel_module,
        rocm_driver_apu_gtt_gib=request,
        ansible_check_mode=check_mode,
        __rocm_driver_pci_ids={"stdout_lines": list(pci)},
        __rocm_driver_ttm_live=slurp(live),
        __rocm_driver_ttm_conf=slurp(conf),
        __rocm_driver_gttsize=slurp(gttsize),
        __rocm_driver_ttm_after=slurp(after),
    )


def _render(expression, **kwargs):
    facts, registered = _inputs(**kwargs)
    return render(expression, facts, **registered)


def _fact(**kwargs):
    return _render("{{ _rocm_driver_ttm_fact }}", **kwargs)


# facts -> (applies, verdict, pages, file, words of the summary)
CASES = {
    "Strix Halo, nothing asked: reported": (
        {}, (True, "leave", None, "/etc/modprobe.d/ttm.conf", ["a Ryzen AI Max APU: TTM limit 64.0 GiB (16777216 pages", "of 128.0 GiB RAM"])),
    "Strix Halo, 96 GiB asked": (
        dict(request=96), (True, "apply", 25165824, "/etc/modprobe.d/ttm.conf", ["'options ttm pages_limit=25165824'"])),
    "Strix Halo, 96 GiB asked and in effect": (
        dict(request=96, live="25165824\n"), (True, "leave", 25165824, "/etc/modprobe.d/ttm.conf", ["is in effect"])),
    "Strix Halo under amdgpu-dkms: amdttm's limit": (
        dict(request=96, kernel_module="dkms", live=None),
        (True, "apply", 25165824, "/etc/modprobe.d/amdttm.conf", ["options amdttm pages_limit=25165824", "amdttm module is not loaded"])),
    "a container, asked for: not applied, no TTM here": (
        dict(request=96, container=True, live=None), (False, "leave", None, "/etc/modprobe.d/ttm.conf",
                                                      ["a container: the TTM limit is its host kernel's, rocm_driver_apu_gtt_gib is "
                                                       "not applied here: no TTM here (/sys/module/ttm/parameters/pages_limit does "
                                                       "not exist: the ttm module is not loaded)"])),
    "a container on a host with ttm: its host's limit": (
        dict(request=96, container=True), (False, "leave", None, "/etc/modprobe.d/ttm.conf", ["not applied here: TTM limit 64.0 GiB"])),
    "a discrete GPU, asked for: left to the kernel": (
        dict(request=96, pci=RADEON_7900), (False, "leave", None, "/etc/modprobe.d/ttm.conf", ["no Ryzen AI Max APU"])),
    "Strix Halo, a deprecated gttsize and amd-ttm's file": (
        dict(conf="options ttm pages_limit=26214400\n", gttsize="131072\n"),
        (True, "leave", None, "/etc/modprobe.d/ttm.conf", ["amdgpu.gttsize=131072 is set: deprecated",
                                                           "/etc/modprobe.d/ttm.conf gives 100.0 GiB (26214400 pages)"])),
}


@pytest.mark.parametrize("facts, expected", CASES.values(), ids=list(CASES))
def test_ttm_decision(facts, expected):
    applies, verdict, pages, path, words = expected
    fact = _fact(**facts)
    assert (fact["applies"], fact["verdict"], fact["pages"], fact["file"]) == (applies, verdict, pages, path), fact["summary"]
    for word in words:
        assert word in fact["summary"], fact["summary"]


def test_the_next_boots_limit_is_the_one_the_role_writes():
    assert _fact(request=96)["configured_pages"] == 25165824
    assert _fact(conf="options ttm pages_limit=26214400\n")["configured_gib"] == 100.0
    assert _fact()["configured_pages"] is None


def test_a_request_the_host_cannot_give_is_refused():
    fact = _fact(request=125)
    assert fact["verdict"] == "refuse" and "leaves the OS 3.00 GiB" in fact["message"] and fact["message"].endswith("Nothing was changed.")


@pytest.mark.parametrize("kernel_module, module", [("auto", "ttm"), ("dkms", "amdttm")])
def test_the_role_reads_and_writes_where_the_plan_says(kernel_module, module):
    paths = _render("{{ [_rocm_driver_ttm_sysfs, _rocm_driver_ttm_file, _rocm_driver_ttm_fact.sysfs, _rocm_driver_ttm_fact.file] }}",
                    kernel_module=kernel_module)
    assert paths[0] == paths[2] == "/sys/module/%s/parameters/pages_limit" % module
    assert paths[1] == paths[3] == "/etc/modprobe.d/%s.conf" % module


@pytest.mark.parametrize("after, check_mode, pending", [
    ("16777216\n", False, True),  # still the old limit: reboot first
    (None, False, True),  # no module loaded yet (amdgpu-dkms just installed)
    ("25165824\n", False, False),  # booted into it
    ("16777216\n", True, False),  # check mode predicts, never ends the host
])
def test_pending_until_the_host_runs_the_new_limit(after, check_mode, pending):
    facts, registered = _inputs(request=96, after=after, check_mode=check_mode)
    registered["rocm_driver_facts"] = {"ttm": render("{{ _rocm_driver_ttm_fact }}", facts, **registered)}
    assert render("{{ _rocm_driver_ttm_pending }}", facts, **registered) is pending

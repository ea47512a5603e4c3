# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The TTM limit of an APU's GPU: AMD's page arithmetic, and leave / apply / refuse for each request."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils import ttm_limit

GIB = 1 << 30
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
# amd-ttm's example host (amd_rdna35): 125.65 GB MemTotal, 16469033 pages = 62.82 GB by default
AMD_RAM = int(125.65 * GIB)
AMD_DEFAULT = "16469033\n"


def test_amds_examples():
    assert ttm_limit.pages_for(100) == 26214400  # 'amd-ttm --set 100' (amd_rdna35)
    assert ttm_limit.pages_for(48) == 12582912  # ttm_before_load
    assert ttm_limit.gib_of(16469033) == 62.82  # 'Current TTM pages limit: 16469033 pages (62.82 GB)'
    assert ttm_limit.gib_of(25165824) * GIB == 103079215104  # ttm_pages: mem_info_gtt_total after ttm.pages_limit=25165824


def test_the_reserve_is_the_cpu_side_of_a_lora_job():
    path = os.path.join(ROOT, "roles", "lora_job", "files", "radeonlab_lora", "unified.py")
    spec = importlib.util.spec_from_file_location("radeonlab_lora_unified_for_ttm", path)
    unified = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = unified  # its dataclass looks its module up
    try:
        spec.loader.exec_module(unified)
    finally:
        del sys.modules[spec.name]
    assert ttm_limit.OS_RESERVE_GIB == pytest.approx(unified.HOST_TRAINER_GIB + unified.DEFAULT_HOST_RESERVE_GIB)


@pytest.mark.parametrize("text, pages", [
    ("16469033\n", 16469033), ("0", 0), ("", None), (None, None), ("-1", None), ("12.5", None), ("n/a", None)])
def test_parse_pages(text, pages):
    assert ttm_limit.parse_pages(text) == pages


@pytest.mark.parametrize("text, module, pages", [
    ("options ttm pages_limit=26214400\n", "ttm", 26214400),  # what amd-ttm writes
    ("# radeonlab\noptions ttm page_pool_size=1 pages_limit=100\noptions ttm pages_limit=200\n", "ttm", 200),
    ("options amdttm pages_limit=300\n", "ttm", None),
    ("options amdttm pages_limit=300\n", "amdttm", 300),
    ("#options ttm pages_limit=5\n", "ttm", None),
    ("", "ttm", None),
    (None, "ttm", None),
])
def test_configured_pages(text, module, pages):
    assert ttm_limit.configured_pages(text, module) == pages


# (ram bytes, live pages_limit, GiB asked for, driver) -> (verdict, pages to configure, words of the message)
CASES = {
    "nothing asked: report only": (
        (AMD_RAM, AMD_DEFAULT, None), ("leave", None, ["62.82 GiB (16469033 pages", "of 125.65 GiB RAM", "at most 118.45 GiB"])),
    "0 asks for nothing": ((AMD_RAM, AMD_DEFAULT, 0), ("leave", None, ["left as it is"])),
    "AMD's 100 GB": ((AMD_RAM, AMD_DEFAULT, 100), ("apply", 26214400, ["'options ttm pages_limit=26214400' in /etc/modprobe.d/ttm.conf",
                                                                       "the next boot"])),
    "already in effect": ((AMD_RAM, "26214400", 100), ("leave", 26214400, ["is in effect"])),
    "up to the reserve": ((128 * GIB, 16777216, 120.8), ("apply", ttm_limit.pages_for(120.8), ["120.8 GiB"])),
    "into the reserve": ((128 * GIB, 16777216, 121), ("refuse", None, ["leaves the OS 7.00 GiB", "less than the 7.2 GiB", "at most 120.8"])),
    "more than the RAM": ((64 * GIB, 8388608, 65), ("refuse", None, ["more than the 64.0 GiB RAM"])),
    "RAM not known": ((None, 8388608, 16), ("refuse", None, ["RAM of the host is not known"])),
    "negative": ((64 * GIB, 8388608, -4), ("refuse", None, ["is not a size"])),
    "not a number": ((64 * GIB, 8388608, "lots"), ("refuse", None, ["is not a size"])),
    "no ttm module here (a container)": ((64 * GIB, None, None), ("leave", None, ["not known (no /sys/module/ttm/parameters/pages_limit"])),
    "no ttm module, a request": ((64 * GIB, None, 48), ("apply", 12582912, ["not known"])),
    "a small host: the reserve leaves nothing": ((6 * GIB, 786432, 1), ("refuse", None, ["at most 0.0 GiB"])),
}


@pytest.mark.parametrize("args, expected", CASES.values(), ids=list(CASES))
def test_plan(args, expected):
    verdict, pages, words = expected
    result = ttm_limit.plan(*args)
    assert result["verdict"] == verdict, result["message"]
    assert result["pages"] == pages
    for word in words:
        assert word in result["message"], result["message"]
    assert (verdict == "refuse") == result["message"].endswith("Nothing was changed.")
    assert result["line"] == (None if pages is None else "options ttm pages_limit=%d" % pages)


def test_current_limit_in_gib():
    result = ttm_limit.plan(AMD_RAM, AMD_DEFAULT)
    assert (result["current_pages"], result["current_gib"], result["ram_gib"]) == (16469033, 62.82, 125.65)
    assert result["default_gib"] == pytest.approx(62.82, abs=0.01)  # about half the RAM by default (amd_rdna35)


def test_under_amdgpu_dkms_the_limit_is_amdttms():
    result = ttm_limit.plan(AMD_RAM, "26214400", 96, driver="dkms")
    assert (result["module"], result["sysfs"], result["file"]) == (
        "amdttm", "/sys/module/amdttm/parameters/pages_limit", "/etc/modprobe.d/amdttm.conf")
    assert result["verdict"] == "apply" and result["line"] == "options amdttm pages_limit=25165824"


def test_notes_name_a_deprecated_gttsize_a_pending_file_and_amds_90_percent():
    result = ttm_limit.plan(128 * GIB, 16777216, 118, configured=26214400, gttsize=131072)
    assert result["verdict"] == "apply"
    assert any("amdgpu.gttsize=131072 is set: deprecated" in note for note in result["notes"])
    assert any("/etc/modprobe.d/ttm.conf gives 100.0 GiB (26214400 pages) from the next boot" in note for note in result["notes"])
    assert any("above 90 % of the RAM" in note for note in result["notes"])
    assert ttm_limit.plan(128 * GIB, 16777216, 64, gttsize=-1)["notes"] == []


def test_every_source_is_listed():
    assert all(key in sm.SOURCES for key in sm.APU_TTM["sources"])
    assert set(ttm_limit.VERDICTS) == {"leave", "apply", "refuse"}

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ttm_limit_plan filter: the modprobe file's text is read for the driver's module; a bad driver is an AnsibleFilterError."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter.ttm_limit import FilterModule

PLAN = FilterModule().filters()["ttm_limit_plan"]
RAM = 128 << 30


def test_the_file_is_read_for_the_drivers_module():
    text = "options ttm pages_limit=26214400\noptions amdttm pages_limit=12582912\n"
    assert PLAN(RAM, "16777216", 0, configured=text)["configured_pages"] == 26214400
    assert PLAN(RAM, "16777216", 0, driver="dkms", configured=text)["configured_pages"] == 12582912


def test_a_request_is_planned_in_amds_pages():
    result = PLAN(RAM, "16777216\n", 100)
    assert (result["verdict"], result["pages"], result["line"]) == ("apply", 26214400, "options ttm pages_limit=26214400")


def test_driver_must_be_inbox_or_dkms():
    with pytest.raises(AnsibleFilterError, match="driver must be inbox or dkms"):
        PLAN(RAM, "16777216", 0, driver="auto")

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The TTM limit filter of radeonlab.llm.rocm_driver's preflight (documentation in ttm_limit_plan.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.ttm_limit import OS_RESERVE_GIB, configured_pages, plan, where


def ttm_limit_plan(ram_bytes, current=None, request_gib=None, reserve_gib=OS_RESERVE_GIB, driver="inbox", configured=None,
                   gttsize=None):
    """Leave, apply or refuse a TTM page limit; ``configured`` is the modprobe file's text (or None)."""
    if driver not in ("inbox", "dkms"):
        raise AnsibleFilterError("radeonlab.llm.ttm_limit_plan: driver must be inbox or dkms, got %r" % (driver,))
    return plan(ram_bytes, current, request_gib, reserve_gib, driver, configured_pages(configured, where(driver)["module"]), gttsize)


class FilterModule(object):
    """radeonlab.llm TTM limit filter."""

    def filters(self):
        return {"ttm_limit_plan": ttm_limit_plan}

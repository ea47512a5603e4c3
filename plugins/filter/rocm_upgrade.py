# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ROCm user-space upgrade filter of radeonlab.llm.rocm_driver (documentation in rocm_userspace_plan.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.rocm_upgrade import plan


def rocm_userspace_plan(info_text, installed=None, madison="", wanted=None, allow_downgrade=False):
    """Upgrade, stay or refuse a downgrade of the ROCm user space; ``installed`` is {package: version} or package_facts'."""
    if not isinstance(installed or {}, dict):
        raise AnsibleFilterError("radeonlab.llm.rocm_userspace_plan: installed must be a mapping of package to version")
    versions = {}
    for name, value in (installed or {}).items():
        if isinstance(value, list):  # ansible.builtin.package_facts: [{'version': ...}, ...]
            value = value[0] if value else {}
        versions[name] = value.get("version") if isinstance(value, dict) else value
    return plan(info_text, versions, madison, list(wanted or []), bool(allow_downgrade))


class FilterModule(object):
    """radeonlab.llm ROCm user-space upgrade filter."""

    def filters(self):
        return {"rocm_userspace_plan": rocm_userspace_plan}

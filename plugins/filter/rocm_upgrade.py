# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ROCm user-space upgrade filter of radeonlab.llm.rocm_driver (documentation in rocm_userspace_plan.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.rocm_upgrade import plan, release_packages


def _versions(installed, name):
    """{package: version} from that mapping or from ansible.builtin.package_facts' {package: [{'version': ...}, ...]}."""
    if not isinstance(installed or {}, dict):
        raise AnsibleFilterError("radeonlab.llm.%s: installed must be a mapping of package to version" % name)
    versions = {}
    for package, value in (installed or {}).items():
        if isinstance(value, list):
            value = value[0] if value else {}
        versions[package] = value.get("version") if isinstance(value, dict) else value
    return versions


def rocm_userspace_plan(info_text, installed=None, madison="", wanted=None, allow_downgrade=False):
    """Upgrade, stay or refuse a downgrade of the ROCm user space."""
    return plan(info_text, _versions(installed, "rocm_userspace_plan"), madison, list(wanted or []), bool(allow_downgrade))


def rocm_release_packages(installed, exclude=None):
    """The installed packages whose version carries a ROCm release number (C(7.1.1.70101-38~24.04))."""
    return release_packages(_versions(installed, "rocm_release_packages"), list(exclude or []))


class FilterModule(object):
    """radeonlab.llm ROCm user-space upgrade filter."""

    def filters(self):
        return {"rocm_userspace_plan": rocm_userspace_plan, "rocm_release_packages": rocm_release_packages}

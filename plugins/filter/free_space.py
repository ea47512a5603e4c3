# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The free-space filter of the preflights and playbooks/validate.yml (documentation in space_problems.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.free_space import space_problems


def space_problems_filter(needs, mounts):
    """One sentence per file system that has less free than the play would write on it."""
    if not isinstance(needs, (list, tuple)):
        raise AnsibleFilterError("radeonlab.llm.space_problems: expects a list of needs, got %s" % type(needs).__name__)
    try:
        return space_problems(needs, mounts)
    except (KeyError, ValueError, TypeError) as exc:
        raise AnsibleFilterError("radeonlab.llm.space_problems: %s" % exc)


class FilterModule(object):
    """radeonlab.llm free-space filter."""

    def filters(self):
        return {"space_problems": space_problems_filter}

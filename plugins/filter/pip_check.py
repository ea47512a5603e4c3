# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pip check's problems in a radeonlab.llm venv as a filter (documentation in pip_check_problems.yml next to this file)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.pip_check import pip_check_problems


def pip_check_problems_filter(report, no_deps=None):
    """The problems of pip check, less the one unmet requirement a package installed without dependencies may have."""
    if not isinstance(report, dict):
        raise AnsibleFilterError("radeonlab.llm.pip_check_problems: expects the JSON object of pip_check.py, got %r" % (report,))
    return pip_check_problems(report, no_deps or ())


class FilterModule(object):
    """radeonlab.llm pip check filter."""

    def filters(self):
        return {"pip_check_problems": pip_check_problems_filter}

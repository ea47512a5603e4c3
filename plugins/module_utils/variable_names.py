# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Misspelt variables: names with a role's prefix (or ``radeonlab_``) that no argument spec knows.

No Ansible import; Python 3.8+. Ansible ignores a variable no role reads, so ``-e rocm_driver_rebot=true`` would
run with the default silently; playbooks/validate.yml refuses such a name, with the nearest known one.
"""

from __future__ import annotations

import difflib
import fnmatch

OPT_OUT = "radeonlab_own_variables"


def _prefix(name, prefixes):
    """The longest of ``prefixes`` that ``name`` starts with, else ''."""
    return max((prefix for prefix in prefixes if name.startswith(prefix)), key=len, default="")


def nearest(name, known, prefixes):
    """The known name closest to ``name``, or None when none is close.

    What follows the prefix is compared (the shared prefix would make every name of a role look close): first among
    the names of the same prefix (rocm_driver_rebot: rocm_driver_reboot), then among all (radeonlab_hsa_override:
    gpu_environment_hsa_override).
    """
    prefix = _prefix(name, prefixes)
    for same in (True, False):
        tails = {}
        for candidate in sorted(known):
            own = _prefix(candidate, prefixes)
            if own and (own == prefix) == same:
                tails.setdefault(candidate[len(own):], candidate)
        match = difflib.get_close_matches(name[len(prefix):], sorted(tails), n=1)
        if match:
            return tails[match[0]]
    return None


def unknown_variables(names, known, prefixes, own=()):
    """``[(name, nearest known name or None)]`` for each of ``names`` that starts with one of ``prefixes`` and is not
    ``known``. Private names (a leading ``_``) and those matching ``own`` (names or shell patterns such as
    ``rocm_driver_my_*``, the user's own variables) are not checked."""
    known = set(known)
    own = [own] if isinstance(own, str) else [str(pattern) for pattern in own or ()]
    unknown = []
    for name in sorted(set(names)):
        if name.startswith("_") or name in known or not _prefix(name, prefixes):
            continue
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in own):
            unknown.append((name, nearest(name, known, prefixes)))
    return unknown


def name_problems(names, known, prefixes, own=()):
    """One sentence naming every unknown variable (``unknown_variables``) and the fixes, or none."""
    unknown = unknown_variables(names, known, prefixes, own)
    if not unknown:
        return []
    listed = "; ".join("%s (did you mean %s?)" % (name, match) if match else "%s (no known name is close)" % name
                       for name, match in unknown)
    return ["Unknown variables, in no role's argument_specs nor the playbooks' (Ansible would ignore them): %s. Correct "
            "the name (ansible-doc -t role radeonlab.llm.<role> lists a role's variables), or list a variable of your "
            "own that carries a role's prefix or radeonlab_ in %s (names or patterns such as rocm_driver_my_*)."
            % (listed, OPT_OUT)]

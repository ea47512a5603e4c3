# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of playbooks/validate.yml (documentation in the sidecar YAML files next to this one)."""

from __future__ import annotations

import os

import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.site_inputs import (
    https_trusted_hosts,
    redact_url,
    site_problems,
    spec_options,
    systemd_env_quote,
)


def site_problems_filter(checks):
    """Every problem of the site's inputs and hosts, one sentence each."""
    if not isinstance(checks, dict):
        raise AnsibleFilterError("radeonlab.llm.site_problems: expects a dict of checks, got %s" % type(checks).__name__)
    return site_problems(checks)


def role_options(roles, entry="main"):
    """The options of the roles' argument_specs entry point, merged, without defaults."""
    options = {}
    for role in roles if isinstance(roles, (list, tuple)) else [roles]:
        with open(role_file(role, "meta/argument_specs.yml"), encoding="utf-8") as handle:
            options.update(spec_options(yaml.safe_load(handle), entry))
    return options


ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles"))


def role_file(role, relative):
    """Absolute path of a file of one of this collection's roles (roles/<role>/<relative>)."""
    path = os.path.join(ROLES_DIR, str(role), str(relative))
    if not os.path.isfile(path):
        raise AnsibleFilterError("radeonlab.llm.role_file: %s does not exist" % path)
    return path


class FilterModule(object):
    """radeonlab.llm site validation filters."""

    def filters(self):
        return {
            "site_problems": site_problems_filter,
            "role_options": role_options,
            "role_file": role_file,
            "systemd_env_quote": systemd_env_quote,
            "https_trusted_hosts": https_trusted_hosts,
            "redact_url": redact_url,
        }

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bitsandbytes expectation as a filter (documentation in bitsandbytes_support.yml next to this file)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.bitsandbytes import (
    BitsandbytesPolicyError,
    bitsandbytes_support,
)


def bitsandbytes_support_filter(gpus, hip=None, cuda=None, version=None, env=None):
    """The bitsandbytes release for this host and whether its build has kernels for the visible GPUs."""
    try:
        return bitsandbytes_support(gpus, hip=hip, cuda=cuda, version=version or None, env=env)
    except BitsandbytesPolicyError as exc:
        raise AnsibleFilterError("radeonlab.llm.bitsandbytes_support: %s" % exc)


class FilterModule(object):
    """radeonlab.llm bitsandbytes filter."""

    def filters(self):
        return {"bitsandbytes_support": bitsandbytes_support_filter}

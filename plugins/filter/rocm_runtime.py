# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The apt-or-pip ROCm user-space filter of radeonlab.llm.pytorch_rocm (documentation in rocm_runtime_plan.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.rocm_runtime import runtime_plan


def rocm_runtime_plan(requested, targets=None, kernel_driver=None, distribution="", distribution_version="",
                      wheelhouse=False, allow_preview=False, torch=None):
    """apt or pip for one host (module_utils/rocm_runtime.py runtime_plan)."""
    try:
        return runtime_plan(requested, list(targets or []), kernel_driver or None, distribution, distribution_version,
                            bool(wheelhouse), bool(allow_preview), torch or None)
    except ValueError as exc:
        raise AnsibleFilterError("radeonlab.llm.rocm_runtime_plan: %s" % exc)


class FilterModule(object):
    """radeonlab.llm ROCm user-space (apt or pip) filter."""

    def filters(self):
        return {"rocm_runtime_plan": rocm_runtime_plan}

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The broken-amdgpu-dkms filters of radeonlab.llm.rocm_driver (documentation in amdgpu_dkms_state.yml and
amdgpu_dkms_recovery.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.dkms_state import DkmsStateError, recovery, state


def amdgpu_dkms_state(dpkg_line, dkms_status="", kernels=None, make_log="", make_log_path=None):
    """What dpkg, ``dkms status`` and the make.log say about amdgpu-dkms."""
    pairs = []
    for kernel in kernels or []:
        if not isinstance(kernel, (list, tuple)) or len(kernel) != 2:
            raise AnsibleFilterError("radeonlab.llm.amdgpu_dkms_state: kernels must be [release, role] pairs, got %r" % (kernel,))
        pairs.append((kernel[0], kernel[1]))
    try:
        return state(dpkg_line, dkms_status, pairs, make_log, make_log_path or None)
    except DkmsStateError as exc:
        raise AnsibleFilterError("radeonlab.llm.amdgpu_dkms_state: %s" % exc) from exc


def amdgpu_dkms_recovery(found, kernel_driver):
    """none or remove, with the message the role prints."""
    try:
        return recovery(found, kernel_driver)
    except (DkmsStateError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("radeonlab.llm.amdgpu_dkms_recovery: %s" % exc) from exc


class FilterModule(object):
    """radeonlab.llm broken-amdgpu-dkms filters."""

    def filters(self):
        return {"amdgpu_dkms_state": amdgpu_dkms_state, "amdgpu_dkms_recovery": amdgpu_dkms_recovery}

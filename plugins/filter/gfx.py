# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters over the GPU support matrix (documentation in the sidecar YAML files next to this one)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.gfx import (
    UnsupportedGpuError,
    gpu_environment,
    gpu_support,
    hsa_override_for,
    torch_for,
)
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import rocm_apt_lines


def _fail(name, exc):
    return AnsibleFilterError("radeonlab.llm.%s: %s" % (name, exc))


def hsa_override(gfx, rocm_version):
    """HSA_OVERRIDE_GFX_VERSION for one gfx target on a ROCm version ('' when it runs natively)."""
    try:
        value = hsa_override_for(gfx, rocm_version)
    except UnsupportedGpuError as exc:
        raise _fail("hsa_override", "unsupported GPU: %s" % exc)
    except ValueError as exc:
        raise _fail("hsa_override", exc)
    return value or ""


def gpu_support_filter(gfx, rocm_version):
    """The support decision for one gfx target on a ROCm version (never fails for unsupported GPUs)."""
    try:
        return gpu_support(gfx, rocm_version)
    except ValueError as exc:
        raise _fail("gpu_support", exc)


def torch_for_rocm(rocm_version, torch=None):
    """PyTorch wheel index and companions for a ROCm version."""
    try:
        return torch_for(rocm_version, torch)
    except ValueError as exc:
        raise _fail("torch_for_rocm", exc)


def gpu_env(gpus, rocm_version, override="auto", include_integrated=False, select="all"):
    """Same decision as the radeonlab.llm.gpu_env module, for templates."""
    try:
        return gpu_environment(gpus, rocm_version, policy=override, include_integrated=include_integrated, select=select)
    except ValueError as exc:
        raise _fail("gpu_env", exc)


class FilterModule(object):
    """radeonlab.llm GPU support filters."""

    def filters(self):
        return {
            "hsa_override": hsa_override,
            "gpu_support": gpu_support_filter,
            "torch_for_rocm": torch_for_rocm,
            "rocm_apt_lines": rocm_apt_lines,
            "gpu_env": gpu_env,
        }

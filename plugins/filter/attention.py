# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The attention policy as a filter (documentation in attention_backend.yml next to this file)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.module_utils.attention import (
    AttentionPolicyError,
    attention_backend,
)


def attention_backend_filter(gpus, flash_attn=None, requested="auto", torch_version=None, env=None, aotriton_experimental=True):
    """LLaMA-Factory flash_attn value, its reason, the SDPA kernel and the environment it needs."""
    try:
        return attention_backend(gpus, flash_attn=flash_attn, requested=requested, torch_version=torch_version, env=env,
                                 aotriton_experimental=aotriton_experimental)
    except AttentionPolicyError as exc:
        raise AnsibleFilterError("radeonlab.llm.attention_backend: %s" % exc)


class FilterModule(object):
    """radeonlab.llm attention policy filter."""

    def filters(self):
        return {"attention_backend": attention_backend_filter}

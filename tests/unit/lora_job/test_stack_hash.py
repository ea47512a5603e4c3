# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The config hash changes with the stack (issue 48): a ROCm upgrade that moves torch to another index, or another HIP
build, is another job; the same stack keeps the hash, and the stack is all that torch's view adds to it."""

from __future__ import annotations

import pytest
from lora_cases import RX7900XTX_24G, matching_view

from radeonlab_lora import render, runner, spec as jobspec

GPU = {"vram_kb": RX7900XTX_24G}


def _hash(job, version="2.9.1+rocm6.4", hip="6.4.43482", **more):
    return runner.prepare(jobspec.normalize(job), GPU, {**matching_view(GPU), "torch": version, "hip": hip, **more}).config_hash


@pytest.mark.parametrize("view", [
    {"version": "2.9.1+rocm7.1", "hip": "6.4.43482"},  # torch from the rocm7.1 index
    {"version": "2.9.1+rocm6.4", "hip": "7.1.25424"},  # another HIP build
    {"version": "2.8.0+rocm6.4", "hip": "6.4.43482"},  # another torch release on the same index
])
def test_the_hash_changes_with_the_torch_build_or_its_hip(tiny_job, view):
    assert _hash(tiny_job, **view) != _hash(tiny_job)


def test_the_same_stack_keeps_the_hash_whatever_else_torch_sees(tiny_job):
    assert _hash(tiny_job) == _hash(tiny_job, env={"ROCR_VISIBLE_DEVICES": "0"}, error=None)


@pytest.mark.parametrize("view, expected", [
    ({"torch": "2.9.1+rocm7.1", "hip": "7.1.25424", "count": 2, "devices": [{}]}, {"torch": "2.9.1+rocm7.1", "hip": "7.1.25424"}),
    ({"torch": None, "hip": None, "error": "ImportError: torch"}, {"torch": None, "hip": None}),
    (None, {"torch": None, "hip": None}),
])
def test_stack_identity_keeps_the_torch_build_and_hip_only(view, expected):
    assert render.stack_identity(view) == expected


def test_a_hash_without_a_stack_is_the_one_before_the_stack_was_in_it():
    cfg, entry = {"stage": "sft", "output_dir": "/x"}, {"d": {"hf_hub_url": "a/b"}}
    assert render.config_hash(cfg, entry, None) == render.config_hash(cfg, entry, None, None, None)
    assert render.config_hash(cfg, entry, None, None, {"torch": "2.9.1+rocm7.1", "hip": None}) != render.config_hash(cfg, entry, None)

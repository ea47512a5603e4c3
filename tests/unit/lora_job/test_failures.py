# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Failure classification and the retry policy (pure)."""

from __future__ import annotations

import copy

import pytest

from radeonlab_lora.failures import classify, next_attempt

BASE = {"flash_attn": "auto", "packing": True, "neat_packing": True, "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 2, "gradient_checkpointing": False}


@pytest.mark.parametrize(
    "log, kind",
    [
        ("RuntimeError: HIP error: invalid device function\nCompile with `TORCH_USE_HIP_DSA`", "hip_kernel"),
        ("rocBLAS error: Kernel not supported for this GPU", "hip_kernel"),
        ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "hip_kernel"),
        ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "hip_kernel"),
        ("Memory access fault by GPU node-1 (Agent handle: 0x55) on address 0x7f. Reason: Page not present", "hip_kernel"),
        ("hsa api call failure at: rocminfo.cc:1306\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES", "hip_kernel"),
        ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB", "oom"),
        ("RuntimeError: HIP error: out of memory", "oom"),  # OOM wins over "HIP error"
        ("torch.cuda.OutOfMemoryError: CUDA out of memory.", "oom"),
        ("hipErrorOutOfMemory", "oom"),
        ("ValueError: Cannot find dataset tiny_alpaca in dataset_info.json", "other"),
        ("", "other"),
    ],
)
def test_classify(log, kind):
    assert classify(log).kind == kind


def test_classify_keeps_the_evidence_line():
    found = classify("loading...\n  RuntimeError: HIP error: invalid device function  \nmore")
    assert found.evidence == "RuntimeError: HIP error: invalid device function"


def test_classify_signal_death():
    assert classify("step 3", returncode=-9).evidence == "killed by signal 9 (the host OOM killer?)"
    assert classify("Traceback\nKeyError: 'x'", returncode=1).evidence == "KeyError: 'x'"


def _attempt(settings, failure=None):
    return {"settings": copy.deepcopy(settings), "failure": failure}


def test_hip_ladder_auto_sdpa_disabled_then_stop():
    history = [_attempt(BASE)]
    first = next_attempt(history, "HIP error: invalid device function")
    assert first.retry and first.settings["flash_attn"] == "sdpa"
    assert (first.settings["packing"], first.settings["neat_packing"]) == (False, False)
    assert "flash_attn=auto" in first.reason and "invalid device function" in first.reason
    history[-1]["failure"] = "hip_kernel"
    history.append(_attempt(first.settings))
    second = next_attempt(history, "Kernel not supported")
    assert second.retry and second.settings["flash_attn"] == "disabled"
    history[-1]["failure"] = "hip_kernel"
    history.append(_attempt(second.settings))
    third = next_attempt(history, "HIP error: invalid device function")
    assert not third.retry and "no attention fallback left" in third.reason


@pytest.mark.parametrize("start, expected", [("fa2", "sdpa"), ("sdpa", "disabled"), ("disabled", None)])
def test_hip_ladder_starts_where_the_job_is(start, expected):
    decision = next_attempt([_attempt({**BASE, "flash_attn": start})], "HIP error")
    assert (decision.settings.get("flash_attn") if decision.retry else None) == expected


def test_hip_retry_keeps_batch_and_does_not_mutate_history():
    history = [_attempt(BASE)]
    snapshot = copy.deepcopy(history)
    decision = next_attempt(history, "HIP error")
    assert decision.settings["per_device_train_batch_size"] == 4
    assert history == snapshot


def test_oom_halves_batch_keeps_effective_batch_then_checkpoints_then_stops():
    settings = dict(BASE)
    history = []
    seen = []
    while True:
        history.append(_attempt(settings))
        decision = next_attempt(history, "torch.OutOfMemoryError: HIP out of memory")
        history[-1]["failure"] = "oom"
        if not decision.retry:
            break
        assert "not retried with the same settings" in decision.reason
        settings = decision.settings
        assert settings["per_device_train_batch_size"] * settings["gradient_accumulation_steps"] == 8
        seen.append((settings["per_device_train_batch_size"], settings["gradient_checkpointing"]))
    assert seen == [(2, False), (1, False), (1, True)]
    assert "QLoRA" in decision.reason and decision.classification.kind == "oom"


def test_other_failures_are_not_retried():
    decision = next_attempt([_attempt(BASE)], "ValueError: bad dataset")
    assert not decision.retry and decision.reason == "training failed, not retried (ValueError: bad dataset)"


def test_max_attempts():
    history = [_attempt(BASE)] * 5
    assert not next_attempt(history, "HIP error").retry


def test_empty_history_is_a_bug():
    with pytest.raises(ValueError):
        next_attempt([], "HIP error")

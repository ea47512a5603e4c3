# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""APUs train on their GPU: the pool shared with the CPU side (radeonlab_lora.unified), through the facts and the plan."""

from __future__ import annotations

import pytest
from lora_cases import QWEN25_05B, QWEN25_7B, R9700_32G, RX6800XT_16G, STRIX_HALO_96G, gpu_fact

from radeonlab_lora import devices
from radeonlab_lora.modelshape import ModelShape
from radeonlab_lora.sizing import device_from_facts, plan_job
from radeonlab_lora.unified import HOST_TRAINER_GIB, UnifiedMemory

GIB = 1 << 20  # KiB
Q7 = ModelShape.from_config(QWEN25_7B)
Q05 = ModelShape.from_config(QWEN25_05B)
Q14 = ModelShape.from_params(14.8)
NEED = HOST_TRAINER_GIB + 4.0  # the trainer and the default host reserve


def halo(pool_kib, ram_kib, gfx="gfx1151", name="Radeon 8060S Graphics", **extra) -> dict:
    return {"gpus": [gpu_fact(0, pool_kib, gfx, name, integrated=True)], "ram_kb": ram_kib, **extra}


# facts, model shape -> decision, precision (None: any), fragments of the plan's message
PLANS = {
    # the issue's box: 96 GiB carve-out, 32 GiB left to the OS: the pool is not the OS's RAM
    "Strix Halo, 96 GiB carve-out, 32 GiB RAM, 7B": (
        halo(STRIX_HALO_96G, 32 * GIB), Q7, "train", "bf16", ["GPU, unified memory: 96.0 of 96.0 GiB (carve-out)"]),
    # AMD's advice: a small carve-out and a large GTT limit (ttm pages_limit 120 GiB): the pool is the OS's RAM
    "Strix Halo, GTT 120 GiB of 125 GiB RAM, 7B": (
        halo(120 * GIB, 125 * GIB), Q7, "train", "bf16", ["GPU, unified memory:", "of 120.0 GiB (GTT, shared with the OS)"]),
    # the kernel's default GTT limit (about half the RAM)
    "Strix Halo, default GTT 62.5 GiB of 125 GiB RAM, 7B": (
        halo(int(62.5 * GIB), 125 * GIB), Q7, "train", "bf16", ["62.5 of 62.5 GiB (GTT, shared with the OS)"]),
    # a 14B model on the same box: its 28 GiB of mapped weights are page cache, not counted against the 32 GiB
    "Strix Halo, 96 GiB carve-out, 32 GiB RAM, 14B": (halo(STRIX_HALO_96G, 32 * GIB), Q14, "train", "bf16", ["96.0 of 96.0 GiB"]),
    # a carve-out that leaves the OS 6 GiB: the trainer and the OS's reserve do not fit
    "APU with 6 GiB left to the OS": (
        halo(58 * GIB, 6 * GIB), Q05, "refuse", None, ["the CPU side of the job needs 7.2 GiB", "but the OS sees 6.0 GiB", "ttm pages_limit"]),
    # a laptop APU (Radeon 780M, left visible by gpu_environment) with a 15 GiB GTT pool of 30 GiB RAM
    "Phoenix 780M, GTT 15 of 30 GiB, 7B": (
        halo(15 * GIB, 30 * GIB, "gfx1103", "AMD Radeon 780M"), Q7, "refuse", None,
        ["but the GPU gets", "GPU, unified memory:", "(GTT, shared with the OS)", "would fit"]),
    "Phoenix 780M, GTT 15 of 30 GiB, 0.5B": (
        halo(15 * GIB, 30 * GIB, "gfx1103", "AMD Radeon 780M"), Q05, "train", "bf16", ["GPU, unified memory:"]),
    # a discrete card is sized as before, with no unified memory
    "Radeon AI PRO R9700 32 GB, 7B": (
        {"gpus": [gpu_fact(0, R9700_32G, "gfx1201", "AMD Radeon AI PRO R9700")], "ram_kb": 64 * GIB}, Q7, "train", "bf16", ["31.84 GiB GPU"]),
}


@pytest.mark.parametrize("case", PLANS.values(), ids=list(PLANS))
def test_plan_on_an_apu(case):
    facts, shape, decision, precision, fragments = case
    plan = plan_job(shape, cutoff_len=2048, attention="sdpa", device=device_from_facts(facts))
    assert (plan.device, plan.decision) == ("gpu", decision), plan.message
    if precision:
        assert plan.precision == precision
    for fragment in fragments:
        assert fragment in plan.message
    assert (plan.unified_memory is not None) == facts["gpus"][0]["integrated"]


def test_issue_box_plan_numbers():
    """96 GiB carve-out, 32 GiB RAM: the GPU gets the whole pool, the CPU side is counted against the 32 GiB."""
    plan = plan_job(Q7, cutoff_len=2048, attention="sdpa", device=device_from_facts(halo(STRIX_HALO_96G, 32 * GIB)))
    assert plan.unified_memory == {"pool_gib": 96.0, "ram_gib": 32.0, "shared": False, "host_need_gib": round(NEED, 2), "gpu_gib": 96.0}
    assert plan.vram_gib == 96.0


@pytest.mark.parametrize(
    "pool, ram, shared, gpu",
    [
        (96 * GIB, 32 * GIB, False, 96.0),  # a carve-out larger than what the OS sees
        (120 * GIB, 130 * GIB, True, 120.0),  # GTT with room beside it: the pool
        (120 * GIB, 122 * GIB, True, 122.0 - NEED),  # GTT: the OS's RAM, less the CPU side
        (62 * GIB, 125 * GIB, True, 62.0),  # GTT with room to spare: the pool
        (40 * GIB, None, True, 40.0 - NEED),  # RAM unknown: the CPU side is taken off the pool
        (4 * GIB, 7 * GIB, True, 0.0),  # nothing left for the GPU
    ],
)
def test_gpu_share_of_the_pool(pool, ram, shared, gpu):
    memory = UnifiedMemory(pool, ram)
    assert memory.shared is shared
    assert memory.gpu_gib == pytest.approx(gpu)


def test_host_reserve_from_the_facts():
    device = device_from_facts(halo(STRIX_HALO_96G, 32 * GIB, host_reserve_gib=30))
    plan = plan_job(Q7, cutoff_len=2048, attention="sdpa", device=device)
    assert plan.decision == "refuse" and "30.0 GiB kept for the OS" in plan.message


@pytest.mark.parametrize(
    "gpus, trained",
    [
        ([gpu_fact(0, STRIX_HALO_96G, "gfx1151", integrated=True)], [0]),  # an APU alone: its GPU
        ([gpu_fact(0, RX6800XT_16G, "gfx1030"), gpu_fact(1, 64 * GIB, "gfx1036", integrated=True)], [0]),  # a card beside it wins
        ([gpu_fact(0, 524288, "gfx90c", integrated=True)], []),  # a bare 512 MiB carve-out: nothing to train on
        ([gpu_fact(0, 0, "gfx1100")], []),
    ],
)
def test_trainable(gpus, trained):
    assert [gpu["index"] for gpu in devices.trainable(devices.gpus_from_facts({"gpus": gpus}))] == trained

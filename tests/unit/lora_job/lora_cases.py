# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared test data for tests/unit/lora_job (a uniquely named module: ``conftest`` is ambiguous in a full run)."""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "roles", "lora_job", "files"))
FAKE_LLAMAFACTORY = os.path.join(HERE, "fake_llamafactory")  # llamafactory.chat.ChatModel for the samples child process
FAKE_TORCH = os.path.join(HERE, "fake_torch")  # a stand-in torch package for child processes (never imported by pytest itself)

# config.json excerpts of real models (public configs on the Hugging Face hub)
QWEN25_7B = {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "intermediate_size": 18944, "vocab_size": 152064,
             "num_attention_heads": 28, "num_key_value_heads": 4, "tie_word_embeddings": False}
QWEN25_15B = {"model_type": "qwen2", "hidden_size": 1536, "num_hidden_layers": 28, "intermediate_size": 8960, "vocab_size": 151936,
              "num_attention_heads": 12, "num_key_value_heads": 2, "tie_word_embeddings": True}
QWEN25_05B = {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "intermediate_size": 4864, "vocab_size": 151936,
              "num_attention_heads": 14, "num_key_value_heads": 2, "tie_word_embeddings": True}
LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256,
             "num_attention_heads": 32, "num_key_value_heads": 8, "tie_word_embeddings": False}
TINY = {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 1024,
        "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": True}

# rocminfo pool sizes (KiB)
RX6600_8G = 8372224
RX6800XT_16G = 16760832
RX7900XTX_24G = 25149440
MI300X_192G = 201326592
# Radeon AI PRO R9700 (gfx1201, 32 GB): twice the RX 9070 XT capture's pool (tests/fixtures/rocminfo/33_..., 16 695 296 KiB),
# the same Navi 48 chip with twice the memory; no public rocminfo capture of an R9700 was found
R9700_32G = 2 * 16695296
STRIX_HALO_96G = 96 << 20  # a Ryzen AI MAX+ 395 with 96 GiB given to the GPU in firmware (the box)

# torch's total_memory of the same cards, in KiB (a little less than rocminfo's pool)
TORCH_RX7900XTX_KIB = 25116672
TORCH_RX6800XT_KIB = 16727040


def gpu_fact(index=0, vram_kb=RX7900XTX_24G, gfx="gfx1100", name="Radeon RX 7900 XTX", integrated=False) -> dict:
    """One visible GPU as the role's gpu.json lists it."""
    return {"node": index + 1, "index": index, "name": gfx, "marketing_name": name, "vram_kb": vram_kb, "integrated": integrated, "override": None}


def torch_device(name="Radeon RX 7900 XTX", total_kib=TORCH_RX7900XTX_KIB, arch="gfx1100") -> dict:
    """One device as FAKE_TORCH_DEVICES lists it."""
    return {"name": name, "total_kib": total_kib, "arch": arch}


def torch_view(devices=(), hip="6.4.43482", version="2.9.1+rocm6.4", cuda=None) -> dict:
    """What devices.torch_view returns for a torch that sees ``devices`` (torch_device dicts)."""
    listed = [{"index": index, **device} for index, device in enumerate(devices)]
    return {"torch": version, "hip": hip, "cuda": cuda, "count": len(listed), "devices": listed, "error": None, "env": {}}


def matching_view(facts: dict | None) -> dict:
    """A ROCm torch that sees exactly the GPUs of ``facts`` (flat vram_kb or a gpus list)."""
    facts = facts or {}
    gpus = facts.get("gpus") or ([{"vram_kb": facts["vram_kb"]}] if facts.get("vram_kb") else [])
    return torch_view([torch_device(gpu.get("marketing_name", "GPU"), gpu["vram_kb"], gpu.get("name")) for gpu in gpus])


def read_calls(state_dir) -> list[dict]:
    path = os.path.join(state_dir, "calls.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared test data for tests/unit/lora_job (a uniquely named module: ``conftest`` is ambiguous in a full run)."""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "roles", "lora_job", "files"))

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


def read_calls(state_dir) -> list[dict]:
    path = os.path.join(state_dir, "calls.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]

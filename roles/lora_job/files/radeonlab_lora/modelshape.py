# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shape of a dense decoder-only transformer, as far as memory sizing needs it.

Two sources, best first:

1. ``config.json`` (a local model directory, or the dict handed in by the role for a hub model):
   exact parameter count and the layer dimensions the activation terms of ``sizing`` use.
2. A bare size in billions (``model_params_b``): the layer dimensions are then *extrapolated* from
   the 7.6 B reference (Qwen2.5-7B) the memory model was measured on, conservatively (see
   ``ModelShape.from_params``); the vocabulary is assumed to be Qwen2-sized (152 064), which
   under-estimates models with larger vocabularies (Gemma: 256 000) - hand in their config.

Mixture-of-experts configs (``num_experts`` / ``num_local_experts``) count every expert's weights
(all are resident) but size activations like a dense layer of ``moe_intermediate_size``; that part
is not calibrated.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass

# Qwen2.5-7B, the shape the H200 memory table was measured on.
REFERENCE_PARAMS = 7.64e9
REFERENCE = {
    "hidden": 3584,
    "layers": 28,
    "intermediate": 18944,
    "vocab": 152064,
    "heads": 28,
    "kv_heads": 4,
}
ASSUMED_VOCAB = 152064


class ModelShapeError(ValueError):
    """The model's size cannot be determined (no config.json and no ``model_params_b``)."""


@dataclass(frozen=True)
class ModelShape:
    params: int  # total parameter count (tied embeddings counted once)
    hidden: int
    layers: int
    intermediate: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    tied_embeddings: bool
    experts: int = 1
    source: str = "config"  # "config" | "params" (extrapolated)
    model_type: str = ""  # config.json's model_type (which fused kernels patch it); "" when extrapolated

    @property
    def params_b(self) -> float:
        return self.params / 1e9

    @property
    def embedding_params(self) -> int:
        """Parameters that stay in bf16 under 4-bit quantisation (embed_tokens and an untied lm_head)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    def lora_params(self, rank: int) -> int:
        """Trainable parameters of LoRA on all seven linear projections of every layer."""
        q_out = self.heads * self.head_dim
        kv_out = self.kv_heads * self.head_dim
        dims = [
            (self.hidden, q_out),  # q_proj
            (self.hidden, kv_out),  # k_proj
            (self.hidden, kv_out),  # v_proj
            (q_out, self.hidden),  # o_proj
            (self.hidden, self.intermediate),  # gate_proj
            (self.hidden, self.intermediate),  # up_proj
            (self.intermediate, self.hidden),  # down_proj
        ]
        per_layer = sum(rank * (fan_in + fan_out) for fan_in, fan_out in dims)
        return per_layer * self.layers * self.experts  # MoE: over-counts the attention part, on the safe side

    def layer_params(self) -> int:
        """Parameters of one decoder layer (one expert's MLP for MoE)."""
        q_out = self.heads * self.head_dim
        kv_out = self.kv_heads * self.head_dim
        attn = self.hidden * q_out * 2 + self.hidden * kv_out * 2
        return attn + 3 * self.hidden * self.intermediate + 2 * self.hidden

    def as_dict(self) -> dict:
        data = asdict(self)
        data["params_b"] = round(self.params_b, 3)
        return data

    # -------------------------------------------------------------------------------------
    @classmethod
    def from_config(cls, config: dict) -> "ModelShape":
        """Build from a Hugging Face ``config.json`` dict (text_config of multimodal ones if present)."""
        cfg = config.get("text_config") or config
        try:
            hidden = int(cfg["hidden_size"])
            layers = int(cfg["num_hidden_layers"])
            vocab = int(cfg["vocab_size"])
            heads = int(cfg["num_attention_heads"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelShapeError(f"config.json lacks {exc} (need hidden_size, num_hidden_layers, vocab_size, num_attention_heads)") from exc
        kv_heads = int(cfg.get("num_key_value_heads") or heads)
        head_dim = int(cfg.get("head_dim") or hidden // heads)
        experts = int(cfg.get("num_experts") or cfg.get("num_local_experts") or 1)
        if experts > 1:
            intermediate = int(cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 4 * hidden)
        else:
            intermediate = int(cfg.get("intermediate_size") or 4 * hidden)
        tied = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)))

        q_out, kv_out = heads * head_dim, kv_heads * head_dim
        attn = hidden * q_out * 2 + hidden * kv_out * 2
        if cfg.get("attention_bias") or cfg.get("model_type") == "qwen2":
            attn += q_out + 2 * kv_out
        mlp = 3 * hidden * intermediate * experts
        if experts > 1:
            mlp += hidden * experts  # router
            shared = int(cfg.get("shared_expert_intermediate_size") or 0)
            mlp += 3 * hidden * shared
        per_layer = attn + mlp + 2 * hidden
        params = layers * per_layer + hidden + vocab * hidden * (1 if tied else 2)
        model_type = str(config.get("model_type") or cfg.get("model_type") or "")  # the top level: what LLaMA-Factory reads
        return cls(params, hidden, layers, intermediate, vocab, heads, kv_heads, head_dim, tied, experts, "config", model_type)

    @classmethod
    def from_params(cls, params_b: float, vocab: int | None = None) -> "ModelShape":
        """Extrapolate a shape from a size in billions, erring on the large side for activations.

        Activation memory per token grows with ``layers * hidden`` (roughly the square root of the
        parameter count at fixed depth, linearly when depth grows too). Scaling the reference
        dimensions by ``max(r, sqrt(r))`` with ``r = params / 7.64e9`` over-estimates both small
        models (true growth is between sqrt and linear) and large ones (e.g. Llama-70B: 5x the 7B
        per-token activations, this gives 9x). The hidden size is scaled by ``sqrt(r)`` and the
        layer count absorbs the rest, so ``layers * hidden`` carries the ``max(r, sqrt(r))`` factor.
        """
        if not params_b or params_b <= 0:
            raise ModelShapeError(f"model_params_b must be a positive number of billions, got {params_b!r}")
        params = int(params_b * 1e9)
        ratio = params / REFERENCE_PARAMS
        width = math.sqrt(ratio)
        depth = max(ratio, width) / width
        hidden = max(64, int(math.ceil(REFERENCE["hidden"] * width)))
        layers = max(1, int(math.ceil(REFERENCE["layers"] * depth)))
        intermediate = max(64, int(math.ceil(REFERENCE["intermediate"] * width)))
        heads = max(1, int(math.ceil(REFERENCE["heads"] * width)))
        kv_heads = max(1, int(math.ceil(REFERENCE["kv_heads"] * width)))
        head_dim = max(1, hidden // heads)
        return cls(params, hidden, layers, intermediate, vocab or ASSUMED_VOCAB, heads, kv_heads, head_dim, False, 1, "params")


def read_config(model: str) -> dict | None:
    """``config.json`` of a local model directory, None for a hub name or a directory without one."""
    path = os.path.join(os.path.expanduser(model), "config.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def shape_for_job(model: str, params_b: float | None = None, config: dict | None = None) -> ModelShape:
    """The best available shape: the given config dict, the local config.json, then ``params_b``."""
    config = config or read_config(model)
    if config:
        return ModelShape.from_config(config)
    if params_b:
        return ModelShape.from_params(params_b)
    raise ModelShapeError(
        f"cannot size model {model!r}: it is not a local directory with config.json; set model_params_b "
        "(billions) or model_config (the model's config.json) in the job"
    )

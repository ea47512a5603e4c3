# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build a random-weight Llama-3-shaped model from config (vocabulary 128,256, untied embeddings).

Uses the tokenizer that tests/bench/make_assets.py trained (OUT/tokenizer, about 8,000 tokens): the
model's vocabulary stays 128,256 (what sizes the embedding, the LM head and the logits), token ids in the data
stay below 8,000. Nothing is fetched from any hub.

    python tests/bench/liger/make_llama.py --shape 3b --out /tmp/liger --device cuda   # -> /tmp/liger/llama-3b
"""

import argparse
import os
import time

SHAPES = {
    # Llama-3.2-3B dimensions, embeddings untied (Llama-3.2-3B itself ties them; Llama-3.1-8B does not)
    "3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8),
    # Llama-3.1-8B dimensions
    "8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/liger")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="3b")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()

    import torch  # pylint: disable=import-outside-toplevel
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM  # pylint: disable=import-outside-toplevel

    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(os.path.join(a.out, "tokenizer"))
    cfg = LlamaConfig(**SHAPES[a.shape], vocab_size=128256, tie_word_embeddings=False, max_position_embeddings=131072,
                      rms_norm_eps=1e-5, rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
                      bos_token_id=None, eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
                      pad_token_id=tok.convert_tokens_to_ids("<|endoftext|>"))
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # init directly in bf16
    with torch.device(a.device):
        model = LlamaForCausalLM(cfg)
    torch.set_default_dtype(torch.float32)
    mdir = os.path.join(a.out, f"llama-{a.shape}")
    model.save_pretrained(mdir, max_shard_size="5GB")
    tok.save_pretrained(mdir)
    n = sum(p.numel() for p in model.parameters())
    print(f"model llama-{a.shape}: {n / 1e9:.3f} B params, vocab 128256, untied -> {mdir} ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()

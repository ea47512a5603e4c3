# Copied from ../shared/reference/gpu_lab/make_assets.py (the GPU lab's tested helper, 2026-12-01); loop variables renamed for pylint.
"""Build a random-weight Qwen2 model, a locally trained BPE tokenizer and a tiny alpaca dataset.

Nothing is fetched from any hub. Usage:
    python make_assets.py --shape 0.5b --out /tmp/spike            # model in /tmp/spike/qwen2-0.5b
    python make_assets.py --shape 7b --out /tmp/spike --device cuda
    python make_assets.py --data-only --out /tmp/spike             # tokenizer + dataset only
The tokenizer and dataset are shared by all shapes (/tmp/spike/tokenizer, /tmp/spike/data).
Every dataset row is longer than 2048 tokens, so with cutoff_len 1024 or 2048 every sample
is truncated to the cutoff: tokens/step = batch * cutoff_len.
"""

import argparse
import json
import os
import random
import time

SHAPES = {
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, vocab_size=151936, tie_word_embeddings=True),
    # Qwen2.5-0.5B shape
    "0.5b": dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                 intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True),
    # Qwen2.5-7B shape
    "7b": dict(hidden_size=3584, num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
               intermediate_size=18944, vocab_size=152064, tie_word_embeddings=False),
}
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def pseudo_words(rng, n):
    syl = ["ka", "to", "ri", "mu", "se", "lo", "na", "pe", "di", "vu", "ra", "xo", "ze", "bi", "qu", "fa",
           "ny", "sh", "th", "an", "el", "or", "is", "ul"]
    return ["".join(rng.choice(syl) for _j in range(rng.randint(1, 4))) for _i in range(n)]


def build_tokenizer(out_dir, corpus):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=8000, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   model_max_length=32768)
    fast.save_pretrained(out_dir)
    return fast


def build_data(out, rows, min_tokens):
    rng = random.Random(0)
    vocab = pseudo_words(rng, 5000)
    corpus = [" ".join(rng.choice(vocab) for _j in range(200)) for _i in range(2000)]
    tok_dir = os.path.join(out, "tokenizer")
    tok = build_tokenizer(tok_dir, corpus)
    data = []
    for _i in range(rows):
        instr = " ".join(rng.choice(vocab) for _i in range(rng.randint(200, 400)))
        outp = " ".join(rng.choice(vocab) for _i in range(rng.randint(1500, 2500)))
        while len(tok(instr + outp)["input_ids"]) < min_tokens:
            outp += " " + " ".join(rng.choice(vocab) for _i in range(200))
        data.append({"instruction": instr, "input": "", "output": outp})
    ddir = os.path.join(out, "data")
    os.makedirs(ddir, exist_ok=True)
    with open(os.path.join(ddir, "spike_alpaca.json"), "w") as f:
        json.dump(data, f)
    with open(os.path.join(ddir, "dataset_info.json"), "w") as f:
        json.dump({"spike_alpaca": {"file_name": "spike_alpaca.json"}}, f)
    lens = [len(tok(d["instruction"] + d["output"])["input_ids"]) for d in data]
    print(f"data: {rows} rows, tokens/row min {min(lens)} max {max(lens)}; tokenizer len {len(tok)}")


def build_model(out, shape, device):
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(os.path.join(out, "tokenizer"))
    cfg = Qwen2Config(**SHAPES[shape], max_position_embeddings=32768, rms_norm_eps=1e-6,
                      rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                      bos_token_id=None,
                      eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
                      pad_token_id=tok.convert_tokens_to_ids("<|endoftext|>"))
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # init directly in bf16 (no fp32 copy of a 7B model)
    with torch.device(device):
        model = Qwen2ForCausalLM(cfg)
    torch.set_default_dtype(torch.float32)
    mdir = os.path.join(out, f"qwen2-{shape}")
    model.save_pretrained(mdir, max_shard_size="5GB")
    tok.save_pretrained(mdir)
    n = sum(p.numel() for p in model.parameters())
    print(f"model {shape}: {n/1e9:.3f} B params -> {mdir} ({time.time()-t0:.1f}s)")
    del model


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/spike")
    ap.add_argument("--shape", choices=sorted(SHAPES), default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--min-tokens", type=int, default=2300)
    ap.add_argument("--data-only", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.out, "data", "dataset_info.json")):
        build_data(a.out, a.rows, a.min_tokens)
    if a.shape and not a.data_only:
        build_model(a.out, a.shape, a.device)

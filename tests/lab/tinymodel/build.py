# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build a tiny Qwen2-shaped model, its tokenizer and a tiny alpaca data set - no hub access, no torch.

    python build.py OUT [--seed 0] [--records 128] [--write-job]

writes::

    OUT/model/config.json              model_type qwen2, hidden 64, 2 layers, 4 heads / 2 kv heads,
    OUT/model/generation_config.json   intermediate 128, vocab 1024, tied embeddings, float32
    OUT/model/model.safetensors        random weights (numpy, seeded), Qwen2 tensor names
    OUT/model/tokenizer.json           byte-level BPE trained with `tokenizers` on the data set
    OUT/model/tokenizer_config.json    Qwen2 special tokens and a ChatML chat_template (LLaMA-Factory template `qwen`)
    OUT/data/tiny_alpaca.json          alpaca records with a learnable pattern
    OUT/data/dataset_info.json         its LLaMA-Factory entry ("tiny_alpaca")
    OUT/build.json                     builder version, seed and the sha256 of every file
    OUT/job.json                       (--write-job) a radeonlab_lora job training on the above, CPU

Deterministic (seeded numpy Generator, a sorted training corpus) and content-keyed: every file is built
in memory and written only when its bytes differ, so a second build changes nothing (exit 0, "changed":
[]). Needs numpy, safetensors and tokenizers (all without torch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

BUILDER_VERSION = 1
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ENDOFTEXT, IM_START, IM_END = 0, 1, 2
SHAPE = {"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "intermediate": 128, "vocab": 1024}
BPE_VOCAB = 1000  # trained tokens incl. the 256 byte symbols and the 3 specials; config vocab 1024 pads it
DATASET_NAME = "tiny_alpaca"

# ChatML, as Qwen2 ships it (LLaMA-Factory's `qwen` template formats the same way).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

COLOURS = ["red", "green", "blue", "yellow", "black", "white", "purple", "orange"]
ANIMALS = ["cat", "dog", "fox", "owl", "bee", "cow", "eel", "yak"]
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def make_records(count: int) -> list[dict]:
    """Instruction/output pairs whose answers follow from the instruction by a fixed rule (learnable)."""
    records = []
    for index in range(count):
        kind = index % 4
        colour, animal = COLOURS[index % len(COLOURS)], ANIMALS[(index // len(COLOURS)) % len(ANIMALS)]
        number = index % 10
        if kind == 0:
            record = {"instruction": f"Spell the digit {number} as a word.", "input": "", "output": f"The digit {number} is {NUMBER_WORDS[number]}."}
        elif kind == 1:
            record = {"instruction": "Repeat the animal three times.", "input": animal, "output": f"{animal} {animal} {animal}"}
        elif kind == 2:
            record = {"instruction": f"What colour is the {animal}?", "input": f"The {animal} is {colour}.", "output": f"The {animal} is {colour}."}
        else:
            record = {"instruction": "Reverse the word.", "input": animal, "output": animal[::-1]}
        records.append(record)
    return records


def model_config() -> dict:
    s = SHAPE
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": ENDOFTEXT,
        "eos_token_id": IM_END,
        "hidden_act": "silu",
        "hidden_size": s["hidden"],
        "initializer_range": 0.02,
        "intermediate_size": s["intermediate"],
        "max_position_embeddings": 2048,
        "max_window_layers": s["layers"],
        "model_type": "qwen2",
        "num_attention_heads": s["heads"],
        "num_hidden_layers": s["layers"],
        "num_key_value_heads": s["kv_heads"],
        "pad_token_id": ENDOFTEXT,
        "rms_norm_eps": 1e-06,
        "rope_theta": 10000.0,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": s["vocab"],
    }


def generation_config() -> dict:
    return {"bos_token_id": ENDOFTEXT, "eos_token_id": [IM_END, ENDOFTEXT], "pad_token_id": ENDOFTEXT, "do_sample": False}


def model_weights(seed: int) -> bytes:
    import numpy as np
    from safetensors.numpy import save

    s = SHAPE
    rng = np.random.default_rng(seed)
    head_dim = s["hidden"] // s["heads"]

    def normal(*shape, std=None):
        # fan-in scaled: at this width the usual 0.02 leaves the layers inert
        return (rng.standard_normal(shape) * (std or shape[-1] ** -0.5)).astype(np.float32)

    # Tied embeddings double as the output layer: with std 0.02 the largest reachable logit is ~1.3 and the
    # loss cannot move far from ln(vocab); std 0.15 (logit spread ~1.2 at init, ~10 reachable) gives the LoRA layers room to learn the pattern.
    tensors = {"model.embed_tokens.weight": normal(s["vocab"], s["hidden"], std=0.15), "model.norm.weight": np.ones(s["hidden"], np.float32)}
    for layer in range(s["layers"]):
        prefix = f"model.layers.{layer}."
        tensors.update({
            prefix + "input_layernorm.weight": np.ones(s["hidden"], np.float32),
            prefix + "post_attention_layernorm.weight": np.ones(s["hidden"], np.float32),
            prefix + "self_attn.q_proj.weight": normal(s["heads"] * head_dim, s["hidden"]),
            prefix + "self_attn.q_proj.bias": np.zeros(s["heads"] * head_dim, np.float32),
            prefix + "self_attn.k_proj.weight": normal(s["kv_heads"] * head_dim, s["hidden"]),
            prefix + "self_attn.k_proj.bias": np.zeros(s["kv_heads"] * head_dim, np.float32),
            prefix + "self_attn.v_proj.weight": normal(s["kv_heads"] * head_dim, s["hidden"]),
            prefix + "self_attn.v_proj.bias": np.zeros(s["kv_heads"] * head_dim, np.float32),
            prefix + "self_attn.o_proj.weight": normal(s["hidden"], s["heads"] * head_dim),
            prefix + "mlp.gate_proj.weight": normal(s["intermediate"], s["hidden"]),
            prefix + "mlp.up_proj.weight": normal(s["intermediate"], s["hidden"]),
            prefix + "mlp.down_proj.weight": normal(s["hidden"], s["intermediate"]),
        })
    return save(dict(sorted(tensors.items())), metadata={"format": "pt"})


def tokenizer_json(records: list[dict]) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = sorted({text for r in records for text in (r["instruction"], r["input"], r["output"]) if text})
    corpus += ["system", "user", "assistant", "You are a helpful assistant."]
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    return tokenizer.to_str(pretty=True)


def tokenizer_config() -> dict:
    return {
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(i): {"content": tok, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}
            for i, tok in enumerate(SPECIAL_TOKENS)
        },
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 2048,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def _json_bytes(data) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def build_files(out: str, seed: int, count: int) -> dict[str, bytes]:
    records = make_records(count)
    data_file = os.path.join(out, "data", f"{DATASET_NAME}.json")
    columns = {"prompt": "instruction", "query": "input", "response": "output"}
    return {
        "model/config.json": _json_bytes(model_config()),
        "model/generation_config.json": _json_bytes(generation_config()),
        "model/model.safetensors": model_weights(seed),
        "model/tokenizer.json": tokenizer_json(records).encode("utf-8"),
        "model/tokenizer_config.json": _json_bytes(tokenizer_config()),
        f"data/{DATASET_NAME}.json": _json_bytes(records),
        "data/dataset_info.json": _json_bytes({DATASET_NAME: {"file_name": os.path.basename(data_file), "formatting": "alpaca", "columns": columns}}),
    }


def job_spec(out: str) -> dict:
    return {
        "name": "tiny-alpaca",
        "model": os.path.join(out, "model"),
        "template": "qwen",
        "dataset": {"name": DATASET_NAME, "file": os.path.join(out, "data", f"{DATASET_NAME}.json")},
        "lora": {"rank": 8, "alpha": 16, "target": "all", "dropout": 0.0},
        "cutoff_len": 128,
        "num_train_epochs": 6,
        "learning_rate": 5.0e-3,
        "output_dir": os.path.join(out, "train"),
        "logging_steps": 2,
        "save_steps": 16,
        "seed": 42,
        "effective_batch_size": 8,
        "attention": "sdpa",
        "preprocessing_num_workers": 1,
        "dataloader_num_workers": 0,
        "env": {"HF_HUB_OFFLINE": "1", "DISABLE_VERSION_CHECK": "1"},
        "gpu": {"vram_kb": 0},
    }


def write_if_changed(path: str, content: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            if handle.read() == content:
                return False
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(content)
    os.replace(tmp, path)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="output directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--records", type=int, default=128, help="data set size (64..200 keeps a CPU run to seconds)")
    parser.add_argument("--write-job", action="store_true", help="also write OUT/job.json for radeonlab_lora")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    started = time.monotonic()

    files = build_files(out, args.seed, args.records)
    if args.write_job:
        files["job.json"] = _json_bytes(job_spec(out))
    manifest = {"builder_version": BUILDER_VERSION, "seed": args.seed, "records": args.records,
                "files": {name: hashlib.sha256(content).hexdigest() for name, content in sorted(files.items())}}
    files["build.json"] = _json_bytes(manifest)
    changed = [name for name, content in sorted(files.items()) if write_if_changed(os.path.join(out, name), content)]
    print(json.dumps({"out": out, "model_dir": os.path.join(out, "model"), "dataset_dir": os.path.join(out, "data"),
                      "dataset": DATASET_NAME, "changed": changed, "seconds": round(time.monotonic() - started, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of run.sh (issue 15's measurements): a LoRA adapter to merge, the merged model checked, one chat request.

    python3 after_training.py adapter --model /tmp/bench/qwen2-7b --out /tmp/bench/adapter --rank 8
    python3 after_training.py compare --base /tmp/bench/qwen2-7b --merged /tmp/bench/merged
    python3 after_training.py chat --url http://127.0.0.1:8000 --timeout 600
    python3 after_training.py timed --log export.log -- llamafactory-cli export export.yaml
Each prints one JSON line (``timed``: the command's exit code, wall seconds and peak RSS; its output goes to --log).
"""

import argparse
import json
import os
import sys
import time
import urllib.request

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
PROBE = "model.layers.0.self_attn.q_proj.weight"


def adapter(a):
    import torch  # pylint: disable=import-outside-toplevel
    from peft import LoraConfig, get_peft_model  # pylint: disable=import-outside-toplevel
    from transformers import AutoModelForCausalLM  # pylint: disable=import-outside-toplevel

    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.bfloat16, device_map="cuda" if torch.cuda.is_available() else None)
    # init_lora_weights=False: B is not zero, so merging changes every targeted weight (a trained adapter's effect)
    config = LoraConfig(r=a.rank, lora_alpha=2 * a.rank, target_modules=TARGETS, init_lora_weights=False, task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    model.save_pretrained(a.out)
    return {"adapter": a.out, "files": sorted(os.listdir(a.out)), "bytes": _size(a.out)}


def _tensor(model_dir, name):
    from safetensors import safe_open  # pylint: disable=import-outside-toplevel

    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as handle:
            shard = json.load(handle)["weight_map"][name]
    else:
        shard = "model.safetensors"
    with safe_open(os.path.join(model_dir, shard), framework="pt") as handle:
        return handle.get_tensor(name)


def _size(path):
    return sum(os.path.getsize(os.path.join(root, f)) for root, _dirs, files in os.walk(path) for f in files)


def compare(a):
    base, merged = _tensor(a.base, PROBE), _tensor(a.merged, PROBE)
    return {"probe": PROBE, "dtype": str(merged.dtype), "shape": list(merged.shape),
            "max_abs_diff": float((merged.float() - base.float()).abs().max()),
            "base_bytes": _size(a.base), "merged_bytes": _size(a.merged), "merged_files": sorted(os.listdir(a.merged))}


def chat(a):
    deadline = time.monotonic() + a.timeout
    while True:
        try:
            with urllib.request.urlopen(a.url + "/v1/models", timeout=5) as reply:
                models = json.load(reply)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(2)
    ready = time.monotonic()
    body = json.dumps({"model": models["data"][0]["id"], "messages": [{"role": "user", "content": "Say hello."}],
                       "max_tokens": 16, "temperature": 0}).encode()
    request = urllib.request.Request(a.url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        answer = json.load(reply)
    choice = answer["choices"][0]
    return {"models": [m["id"] for m in models["data"]], "object": answer.get("object"), "finish_reason": choice.get("finish_reason"),
            "role": choice["message"]["role"], "content_chars": len(choice["message"]["content"] or ""), "usage": answer.get("usage"),
            "request_s": round(time.monotonic() - ready, 2)}


def timed(a):
    import resource  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel

    start = time.monotonic()
    with open(a.log, "w", encoding="utf-8") as log:
        rc = subprocess.run(a.argv, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    return {"argv": a.argv, "rc": rc, "wall_s": round(time.monotonic() - start, 1),
            "max_rss_gib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20, 2)}


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("adapter")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rank", type=int, default=8)
    p = sub.add_parser("compare")
    p.add_argument("--base", required=True)
    p.add_argument("--merged", required=True)
    p = sub.add_parser("chat")
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--timeout", type=float, default=600)
    p = sub.add_parser("timed")
    p.add_argument("--log", required=True)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if a.command == "timed" and a.argv[:1] == ["--"]:
        a.argv = a.argv[1:]
    commands = {"adapter": adapter, "compare": compare, "chat": chat, "timed": timed}
    result = commands[a.command](a)
    print(json.dumps({"command": a.command, **result}, sort_keys=True))
    return 1 if result.get("rc") else 0


if __name__ == "__main__":
    sys.exit(main())

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base model's and the adapter's answers to the job's sample prompts, side by side.

Generated with LLaMA-Factory's own inference engine (``llamafactory.chat.ChatModel``: what ``llamafactory-cli chat``
and ``api`` run), greedy with a fixed number of new tokens, so one adapter gives the same text on every run. The runner
(stdlib only) starts ``python -m radeonlab_lora.samples REQUEST OUT`` in the venv after training, on rank 0 only.
``OUT`` (``samples.json`` in the run directory) is ``{"key": ..., "samples": [{"prompt", "base", "adapter"}]}``; the
key covers everything that changes the text, so new prompts are answered again without training again.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys

from .inference import model_args, trained_form
from .launch import peak_record
from .measurements import peak_of
from .render import canonical_json
from .state import output_dir_for, read_json, write_json_atomic

SAMPLES_FILE = "samples.json"
REQUEST_FILE = "samples-request.json"


def request(spec: dict, run_dir: str) -> dict:
    """What the generation needs, from the job spec and the run whose adapter it loads (and whose plan says in which
    form the base was trained: a 4-bit job answers with the 4-bit base)."""
    return {
        "model": spec["model"], "model_revision": spec.get("model_revision"), "template": spec["template"],
        "trust_remote_code": bool(spec["trust_remote_code"]), "adapter": output_dir_for(run_dir),
        "prompts": list(spec["sample_prompts"]), "max_new_tokens": spec["sample_max_new_tokens"],
        **_four_bit(trained_form(run_dir)),
    }


def _four_bit(form: dict) -> dict:
    """The trained form when it is 4-bit (a bf16 or CPU job's request, and so its key, carries none)."""
    return form if form["precision"] == "qlora4" else {}


def key(req: dict) -> str:
    return hashlib.sha256(canonical_json(req).encode("utf-8")).hexdigest()


def pending(spec: dict, run_dir: str, node_rank: int = 0) -> bool:
    """True when this node owes answers: rank 0 of a job with prompts whose ``samples.json`` is missing or stale."""
    if node_rank != 0 or not spec["sample_prompts"]:
        return False
    return (read_json(os.path.join(run_dir, SAMPLES_FILE)) or {}).get("key") != key(request(spec, run_dir))


def chat_args(req: dict, with_adapter: bool) -> dict:
    return {**model_args(req, req["adapter"] if with_adapter else None), "infer_backend": "huggingface", "do_sample": False,
            "max_new_tokens": req["max_new_tokens"]}


def generate(req: dict, chat_model=None) -> list[dict]:
    """One answer per prompt from the base model, then from the base model with the adapter loaded."""
    if chat_model is None:
        from llamafactory.chat import ChatModel as chat_model  # pylint: disable=import-outside-toplevel
    answers = {}
    for which in ("base", "adapter"):
        model = chat_model(chat_args(req, which == "adapter"))
        answers[which] = [model.chat([{"role": "user", "content": prompt}])[0].response_text for prompt in req["prompts"]]
        del model
        gc.collect()  # one model in memory at a time
    return [{"prompt": prompt, "base": base, "adapter": adapted} for prompt, base, adapted in zip(req["prompts"], answers["base"], answers["adapter"])]


def main(argv: list | None = None) -> int:
    request_path, out_path = sys.argv[1:] if argv is None else argv
    with open(request_path, encoding="utf-8") as handle:
        req = json.load(handle)
    answers = generate(req)
    # what answering took (GPU allocated, else RSS), beside the plan's estimate for this stage
    write_json_atomic(out_path, {"key": key(req), "samples": answers, "peak_memory": peak_of(peak_record())})
    return 0


if __name__ == "__main__":
    sys.exit(main())

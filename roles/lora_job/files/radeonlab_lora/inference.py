# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How LLaMA-Factory loads the job's base model (and its adapter) after training: one place for the sample answers, the
merged export and the API service, so the three load the same model the same way.

``model_args`` takes a job spec, or anything with its ``model``, ``model_revision``, ``template`` and
``trust_remote_code`` keys (the samples' request). A job trained in 4-bit (``precision: qlora4``) answers and serves
with the base in the same NF4 form (``quantization_args``: the keys the training config has too), since the adapter was
trained against those weights; the export merges into the bf16 base and takes no quantisation. ``api_config`` is the
file ``llamafactory-cli api`` serves the adapter from (``python -m radeonlab_lora api-config`` prints it for the play).
"""

from __future__ import annotations

import os

from .state import output_dir_for, read_json

PLAN_FILE = "plan.json"


def quantization_args(precision: str | None, double_quantization: bool = True) -> dict:
    """LLaMA-Factory's bitsandbytes NF4 arguments for a ``qlora4`` plan; none for bf16 and fp32."""
    if precision != "qlora4":
        return {}
    return {"quantization_bit": 4, "quantization_method": "bnb", "quantization_type": "nf4", "double_quantization": bool(double_quantization)}


def model_args(source: dict, adapter: str | None = None) -> dict:
    args = {"model_name_or_path": source["model"], "template": source["template"], "finetuning_type": "lora",
            "trust_remote_code": bool(source["trust_remote_code"])}
    if source.get("model_revision"):
        args["model_revision"] = source["model_revision"]
    if adapter:
        args["adapter_name_or_path"] = adapter
    args.update(quantization_args(source.get("precision"), source.get("double_quantization", True)))
    return args


def trained_form(run_dir: str) -> dict:
    """The precision the run's plan trained in (its ``plan.json``), as ``model_args`` reads it."""
    plan = read_json(os.path.join(run_dir, PLAN_FILE)) or {}
    form = {"precision": plan.get("precision")}
    if plan.get("precision") == "qlora4":
        form["double_quantization"] = plan.get("double_quantization") is not False
    return form


def api_config(spec: dict, run_dir: str) -> dict:
    """The base model with this run's adapter, on LLaMA-Factory's own (transformers) engine: what the API serves."""
    return {**model_args({**spec, **trained_form(run_dir)}, output_dir_for(run_dir)), "infer_backend": "huggingface"}

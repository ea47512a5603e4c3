# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How LLaMA-Factory loads the job's base model (and its adapter) after training: one place for the sample answers, the
merged export and the API service, so the three load the same model the same way.

``model_args`` takes a job spec, or anything with its ``model``, ``model_revision``, ``template`` and
``trust_remote_code`` keys (the samples' request). ``api_config`` is the file ``llamafactory-cli api`` serves the
adapter from (``python -m radeonlab_lora api-config`` prints it for the play).
"""

from __future__ import annotations

from .state import output_dir_for


def model_args(source: dict, adapter: str | None = None) -> dict:
    args = {"model_name_or_path": source["model"], "template": source["template"], "finetuning_type": "lora",
            "trust_remote_code": bool(source["trust_remote_code"])}
    if source.get("model_revision"):
        args["model_revision"] = source["model_revision"]
    if adapter:
        args["adapter_name_or_path"] = adapter
    return args


def api_config(spec: dict, run_dir: str) -> dict:
    """The base model with this run's adapter, on LLaMA-Factory's own (transformers) engine: what the API serves."""
    return {**model_args(spec, output_dir_for(run_dir)), "infer_backend": "huggingface"}

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The job spec: a JSON object written by the role, validated and completed with defaults here.

Example (every key but model, template, dataset and output_dir is optional)::

    {
      "name": "tiny-alpaca",
      "model": "/srv/models/tiny-qwen2",           # local directory or hub name ("Qwen/Qwen2.5-0.5B-Instruct")
      "model_params_b": null,                      # billions; needed for a hub model unless model_config is given
      "model_config": null,                        # the model's config.json as a dict (hub models)
      "model_revision": null,                      # a hub model's revision: 40-hex commit or tag (LLaMA-Factory model_revision)
      "template": "qwen",
      "dataset": {"name": "tiny_alpaca", "file": "/srv/data/tiny_alpaca.json"},
                                                   # or {"name": ..., "hf_hub_url": "org/set"} / {"name": ..., "ms_hub_url": ...}
      "datasets": [{"name": "a", "file": "/srv/a.json"}, {"name": "b", "hf_hub_url": "org/b"}],
                                                   # instead of "dataset": several in one job (LLaMA-Factory's dataset "a,b");
                                                   # normalize fills in "datasets" for either key, "dataset" is the first
      "lora": {"rank": 8, "alpha": 16, "target": "all", "dropout": 0.0},
      "cutoff_len": 1024, "num_train_epochs": 3, "learning_rate": 1e-4, "max_samples": 1000,
      "val_size": 0.05,                            # held out for eval loss: a fraction in [0, 1) or a count (LLaMA-Factory val_size)
      "sample_prompts": ["Say hi"],                # answered after training by the base model and by the adapter (greedy)
      "sample_max_new_tokens": 64,
      "export": "adapter",                         # or merged: the base model with the adapter folded in (<run dir>/merged)
      "serve": false,                              # the play serves the adapter after training (sized by check with the samples)
      "output_dir": "/var/lib/radeonlab/lora/tiny-alpaca",
      "logging_steps": 10, "save_steps": 100, "seed": 42,
      "effective_batch_size": 8,                   # per_device batch x accumulation target
      "attention": "sdpa",                         # the llamafactory role's choice: auto | disabled | sdpa | fa2
      "sdpa_kernel": "flash",                      # which kernel serves sdpa (llamafactory_facts.attention.sdpa_kernel):
                                                   # flash (AOTriton, the default) | math (sized with the score matrix)
      "allow_qlora": true,                         # the job may fall back to 4-bit QLoRA (only where the GPU facts' bitsandbytes probe passed)
      "fused_kernels": "auto",                     # Liger-Kernel (LLaMA-Factory's enable_liger_kernel): auto = where the GPU facts'
                                                   # liger_kernel probe passed and LLaMA-Factory patches the model's family;
                                                   # liger = the same, refused where it cannot be; off
      "device": "auto",                            # auto: the GPUs of the facts when there are any | gpu: refuse without one | cpu
      "torch_without_hip": false,                  # the lab's switch: torch has no HIP here, so GPU facts + a torch that sees
                                                   # no GPU train on the CPU (with device auto) instead of refusing
      "env": {"HF_ENDPOINT": "https://hf-mirror.example"},  # for llamafactory-cli (and the torch probe) only; never written to status or log
      "report_to": "tensorboard",                  # LLaMA-Factory's report_to: none | tensorboard (event files in <adapter dir>/runs)
                                                   # | mlflow (to the MLFLOW_TRACKING_URI of the runner's environment; not hashed)
      "distributed": {"nnodes": 2, "node_rank": 0,  # one job over several hosts (torchrun, as LLaMA-Factory launches it);
                      "master_addr": "192.0.2.10",  # null: this host alone (all its visible GPUs, data-parallel)
                      "master_port": 29500, "timeout_s": 600}
    }

``env`` values are secrets-safe: only their names are ever recorded.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys

from .vocabulary import ATTENTION_REQUESTS as ATTENTION_CHOICES
from .vocabulary import DATASET_FORMATS, FUSED_KERNELS
from .vocabulary import SDPA_KERNELS as SDPA_KERNEL_CHOICES

DEVICE_CHOICES = ("auto", "gpu", "cpu")
EXPORT_CHOICES = ("adapter", "merged")  # merged: llamafactory-cli export folds the adapter into the base model
REPORT_TO_CHOICES = ("none", "tensorboard", "mlflow")  # where the trainer's curves go (render.tracker_env)
DATASET_SOURCES = ("file", "hf_hub_url", "ms_hub_url")
MODEL_REVISION = re.compile(r"^([0-9a-f]{40}|[A-Za-z0-9][A-Za-z0-9._-]{0,127})$")  # a commit or a tag

DEFAULTS: dict = {
    "name": "lora",
    "model_params_b": None,
    "model_config": None,
    "model_revision": None,
    "lora": {"rank": 8, "alpha": 16, "target": "all", "dropout": 0.0},
    "cutoff_len": 1024,
    "num_train_epochs": 3.0,
    "learning_rate": 1.0e-4,
    "max_samples": None,
    "val_size": 0.0,
    "sample_prompts": [],
    "sample_max_new_tokens": 64,
    "export": "adapter",
    "serve": False,
    "logging_steps": 10,
    "save_steps": 100,
    "save_total_limit": 2,
    "seed": 42,
    "effective_batch_size": 8,
    "attention": "auto",
    "sdpa_kernel": "flash",
    "allow_qlora": True,
    "fused_kernels": "auto",
    "device": "auto",
    "torch_without_hip": False,
    "packing": False,
    "trust_remote_code": False,
    "lr_scheduler_type": "cosine",
    "warmup_ratio": 0.1,
    "preprocessing_num_workers": 4,
    "dataloader_num_workers": 2,
    "extra_args": {},
    "env": {},
    "report_to": "none",
    "gpu": None,
    "llamafactory_cli": "llamafactory-cli",
    "progress_interval_s": 10,
    "distributed": None,
}
DISTRIBUTED_DEFAULTS: dict = {"nnodes": 1, "node_rank": 0, "master_addr": "127.0.0.1", "master_port": 29500, "timeout_s": 1800}
REQUIRED = ("model", "template", "output_dir")  # and dataset or datasets
ALIASES = {"epochs": "num_train_epochs", "lr": "learning_rate"}


class SpecError(ValueError):
    """The job spec is invalid; the message lists every problem."""


def _positive_int(spec: dict, key: str, problems: list[str], allow_none: bool = False) -> None:
    value = spec.get(key)
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        problems.append(f"{key} must be a positive integer, got {value!r}")


def _positive_number(spec: dict, key: str, problems: list[str]) -> None:
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        problems.append(f"{key} must be a positive number, got {value!r}")


def _datasets(spec: dict, problems: list[str]) -> None:
    """``spec["datasets"]`` from either key (``dataset``: one object, the old form), each entry checked."""
    if "dataset" in spec and "datasets" in spec:
        problems.append("give dataset (one) or datasets (a list), not both")
        return
    if "datasets" in spec:
        entries, where = spec["datasets"], "datasets[{}]"
        if not isinstance(entries, list) or not entries:
            problems.append("datasets must be a non-empty list of objects")
            return
    elif spec.get("dataset") is not None:
        entries, where = [spec["dataset"]], "dataset"
    else:
        problems.append("dataset is required")
        return
    names = [entry.get("name") for entry in entries if isinstance(entry, dict)]
    for index, dataset in enumerate(entries):
        label = where.format(index)
        if not isinstance(dataset, dict) or not dataset.get("name"):
            problems.append(f"{label} must be an object with a name")
            continue
        if "," in str(dataset["name"]):  # LLaMA-Factory splits its dataset argument on commas
            problems.append(f"{label}.name must not contain ',', got {dataset['name']!r}")
        if names.count(dataset["name"]) > 1 and names.index(dataset["name"]) == index:
            problems.append(f"datasets name {dataset['name']!r} more than once")
        sources = [key for key in DATASET_SOURCES if dataset.get(key)]
        if len(sources) != 1:
            problems.append(f"{label} needs exactly one of {list(DATASET_SOURCES)}, got {sources or 'none'}")
        elif "file" in sources and not os.path.isabs(dataset["file"]):
            problems.append(f"{label}.file must be an absolute path, got {dataset['file']!r}")
        if dataset.get("formatting", "alpaca") not in DATASET_FORMATS:
            problems.append(f"{label}.formatting must be one of {list(DATASET_FORMATS)}, got {dataset['formatting']!r}")
        for key in ("columns", "tags"):
            value = dataset.get(key)
            if value is not None and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
                problems.append(f"{label}.{key} must map names to strings, got {value!r}")
    spec["datasets"], spec["dataset"] = list(entries), entries[0]


def normalize(raw: dict) -> dict:
    """Defaults filled in, aliases resolved, every problem reported at once (SpecError)."""
    if not isinstance(raw, dict):
        raise SpecError("the job spec must be a JSON object")
    spec = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        key = ALIASES.get(key, key)
        if key == "lora" and isinstance(value, dict):
            spec["lora"] = {**DEFAULTS["lora"], **value}
        else:
            spec[key] = copy.deepcopy(value)

    problems = [f"{key} is required" for key in REQUIRED if not spec.get(key)]
    unknown = sorted(set(spec) - set(DEFAULTS) - set(REQUIRED) - {"dataset", "datasets"})
    if unknown:
        problems.append(f"unknown keys {unknown} (LLaMA-Factory arguments go into extra_args)")
    if spec["attention"] not in ATTENTION_CHOICES:
        problems.append(f"attention must be one of {list(ATTENTION_CHOICES)}, got {spec['attention']!r}")
    if spec["sdpa_kernel"] not in SDPA_KERNEL_CHOICES:
        problems.append(f"sdpa_kernel must be one of {list(SDPA_KERNEL_CHOICES)}, got {spec['sdpa_kernel']!r}")
    if spec["fused_kernels"] not in FUSED_KERNELS:
        problems.append(f"fused_kernels must be one of {list(FUSED_KERNELS)}, got {spec['fused_kernels']!r}")
    if spec["device"] not in DEVICE_CHOICES:
        problems.append(f"device must be one of {list(DEVICE_CHOICES)}, got {spec['device']!r}")
    if spec["export"] not in EXPORT_CHOICES:
        problems.append(f"export must be one of {list(EXPORT_CHOICES)}, got {spec['export']!r}")
    if spec["report_to"] not in REPORT_TO_CHOICES:
        problems.append(f"report_to must be one of {list(REPORT_TO_CHOICES)}, got {spec['report_to']!r}")
    for flag in ("torch_without_hip", "serve"):
        if not isinstance(spec[flag], bool):
            problems.append(f"{flag} must be true or false, got {spec[flag]!r}")

    _datasets(spec, problems)
    if spec.get("output_dir") and not os.path.isabs(str(spec["output_dir"])):
        problems.append(f"output_dir must be an absolute path, got {spec['output_dir']!r}")

    lora = spec["lora"]
    for key in ("rank", "alpha"):
        if isinstance(lora.get(key), bool) or not isinstance(lora.get(key), int) or lora[key] <= 0:
            problems.append(f"lora.{key} must be a positive integer, got {lora.get(key)!r}")
    if not isinstance(lora.get("dropout"), (int, float)) or not 0 <= lora["dropout"] < 1:
        problems.append(f"lora.dropout must be in [0, 1), got {lora.get('dropout')!r}")
    if isinstance(lora.get("target"), list):
        lora["target"] = ",".join(lora["target"])
    if not isinstance(lora.get("target"), str) or not lora["target"]:
        problems.append("lora.target must be 'all' or module names")

    prompts = spec["sample_prompts"]
    if not isinstance(prompts, list) or not all(isinstance(prompt, str) and prompt.strip() for prompt in prompts):
        problems.append(f"sample_prompts must be a list of non-empty strings, got {prompts!r}")
    for key in ("cutoff_len", "logging_steps", "save_steps", "effective_batch_size", "save_total_limit", "sample_max_new_tokens"):
        _positive_int(spec, key, problems)
    _positive_int(spec, "max_samples", problems, allow_none=True)
    for key in ("num_train_epochs", "learning_rate"):
        _positive_number(spec, key, problems)
    val_size = spec["val_size"]
    if isinstance(val_size, bool) or not isinstance(val_size, (int, float)) or val_size < 0 or (val_size >= 1 and val_size != int(val_size)):
        problems.append(f"val_size must be a fraction in [0, 1) or a whole number of samples, got {val_size!r}")
    if spec["model_params_b"] is not None:
        _positive_number(spec, "model_params_b", problems)
    revision = spec["model_revision"]
    if revision is not None and not (isinstance(revision, str) and MODEL_REVISION.match(revision)):
        problems.append(f"model_revision must be a 40-hex commit or a tag, got {revision!r}")
    elif revision is not None and str(spec.get("model") or "").startswith("/"):
        problems.append(f"model_revision pins a hub model; {spec['model']!r} is a local directory")
    if not isinstance(spec["extra_args"], dict):
        problems.append("extra_args must be an object")
    if not isinstance(spec["env"], dict) or not all(isinstance(v, str) for v in spec["env"].values()):
        problems.append("env must be an object of strings")
    if spec["distributed"] is not None:
        spec["distributed"] = _distributed(spec["distributed"], problems)
    if problems:
        raise SpecError("invalid job spec: " + "; ".join(problems))
    spec["output_dir"] = os.path.normpath(spec["output_dir"])
    return spec


def _distributed(value, problems: list[str]) -> dict | None:
    """The ``distributed`` object with its defaults, or None (problems appended)."""
    if not isinstance(value, dict):
        problems.append(f"distributed must be an object or null, got {value!r}")
        return None
    unknown = sorted(set(value) - set(DISTRIBUTED_DEFAULTS))
    if unknown:
        problems.append(f"distributed has unknown keys {unknown}")
    merged = {**DISTRIBUTED_DEFAULTS, **value}
    for key in ("nnodes", "timeout_s"):
        _positive_int(merged, key, problems)
    rank, nnodes, port = merged["node_rank"], merged["nnodes"], merged["master_port"]
    if isinstance(rank, bool) or not isinstance(rank, int) or not (isinstance(nnodes, int) and 0 <= rank < nnodes):
        problems.append(f"distributed.node_rank must be in [0, nnodes), got {rank!r} of {nnodes!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        problems.append(f"distributed.master_port must be a TCP port, got {port!r}")
    if not isinstance(merged["master_addr"], str) or not merged["master_addr"] or any(c.isspace() for c in merged["master_addr"]):
        problems.append(f"distributed.master_addr must be a host name or address, got {merged['master_addr']!r}")
    return merged


def load(path: str) -> dict:
    """The job spec in ``path``, or on standard input for ``-`` (the play checks a job before it writes its file)."""
    try:
        if path == "-":
            raw = json.load(sys.stdin)
        else:
            with open(path, encoding="utf-8") as handle:
                raw = json.load(handle)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}: not JSON: {exc}") from exc
    return normalize(raw)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""LLaMA-Factory training config (JSON text), ``dataset_info.json`` entry and the config hash.

The config hash decides "already trained this exact job". It is the sha256 of the canonical JSON
(sorted keys, no whitespace) of:

- the rendered training config *without* the keys that do not change what is learned or that are
  derived from the hash itself: ``output_dir``, ``dataset_dir``, ``resume_from_checkpoint`` and the
  attention/packing settings the failure policy may change between attempts (``flash_attn``,
  ``packing``, ``neat_packing``). The sizing plan (batch, accumulation, precision, checkpointing) *is*
  part of it: a different card that needs a different plan trains again. ``report_to`` is hashed as ``none``
  whatever it is: where the curves go is not what is learned, and a job trained before the trackers existed
  (its config said ``none``) keeps its hash;
- the dataset_info entries (one per data set of the job), with a local dataset file's path replaced by its
  sha256, so editing the data retrains and moving it does not;
- a local model directory's fingerprint: name and size of every top-level file, plus the sha256 of those up
  to 64 MiB (config, tokenizer, small weights such as the lab's tiny model; multi-GB shards by size only,
  hashing them on every run would cost minutes);
- the stack that trains: the torch build (its version carries the ROCm index, ``2.9.1+rocm7.1``) and the HIP version it
  was built with, as torch reports them (``devices.torch_view``). A ROCm upgrade that moves torch to another index trains
  again; a hash computed without a stack (``stack=None``) is the one of jobs finished before the stack was in it;
- a format number, bumped whenever this module changes what it renders.

Hub models and hub datasets are identified by name only (their content is not hashed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from .inference import quantization_args
from .sizing import Plan
from .spec import DISTRIBUTED_DEFAULTS

HASH_FORMAT = 1
VOLATILE_KEYS = ("output_dir", "dataset_dir", "resume_from_checkpoint", "flash_attn", "packing", "neat_packing")
UNHASHED = {"report_to": "none"}  # hashed as this value whatever the job says (module docstring)
TENSORBOARD_DIR = "runs"  # the event files' folder in LLaMA-Factory's output_dir (transformers' default parent)
DEFAULT_COLUMNS = {"prompt": "instruction", "query": "input", "response": "output"}
SHAREGPT_COLUMNS = {"messages": "conversations"}  # LLaMA-Factory's default; its tags default to from/value/human/gpt


class RenderError(ValueError):
    """A job cannot be rendered (a refused plan, an extra argument that overrides a managed key)."""


def dataset_info_entry(spec: dict) -> dict:
    """``{name: {...}}`` for ``dataset_info.json``, one entry per data set of the job (``spec["datasets"]``).

    A job of one data set renders exactly as before several existed (its config hash is unchanged).
    """
    entries: dict = {}
    for dataset in spec["datasets"]:
        entries.update(_dataset_entry(dataset))
    return entries


def _dataset_entry(dataset: dict) -> dict:
    """One data set's entry; alpaca or sharegpt formatting, a local file by absolute path.

    An alpaca entry is written exactly as before sharegpt existed (its config hash is unchanged); a sharegpt entry
    carries its messages column and, when given, the tags of its messages.
    """
    entry: dict = {}
    if dataset.get("file"):
        entry["file_name"] = dataset["file"]  # LLaMA-Factory joins it onto dataset_dir: an absolute path wins
    elif dataset.get("hf_hub_url"):
        entry["hf_hub_url"] = dataset["hf_hub_url"]
    else:
        entry["ms_hub_url"] = dataset["ms_hub_url"]
    for key in ("subset", "split", "num_samples"):
        if dataset.get(key) is not None:
            entry[key] = dataset[key]
    formatting = dataset.get("formatting") or "alpaca"
    entry["formatting"] = formatting
    if formatting == "sharegpt":
        entry["columns"] = dict(SHAREGPT_COLUMNS, **(dataset.get("columns") or {}))
        if dataset.get("tags"):
            entry["tags"] = dict(dataset["tags"])
    else:
        entry["columns"] = dict(dataset.get("columns") or DEFAULT_COLUMNS)
    return {dataset["name"]: entry}


def training_config(spec: dict, plan: Plan, *, output_dir: str, dataset_dir: str) -> dict:
    """The LLaMA-Factory ``train`` arguments, in a fixed order (LLaMA-Factory's example layout)."""
    if plan.refused:
        raise RenderError(plan.message)
    lora = spec["lora"]
    cfg: dict = {
        # model
        "model_name_or_path": spec["model"],
        "trust_remote_code": bool(spec["trust_remote_code"]),
        # method
        "stage": "sft",
        "do_train": True,
        "finetuning_type": "lora",
        "lora_rank": lora["rank"],
        "lora_alpha": lora["alpha"],
        "lora_dropout": float(lora["dropout"]),
        "lora_target": lora["target"],
    }
    if spec.get("model_revision"):  # a hub model pinned to a commit or tag (in the hash: a new revision trains again)
        cfg["model_revision"] = spec["model_revision"]
    cfg.update(quantization_args(plan.precision, bool(plan.double_quantization)))  # bitsandbytes NF4 for a qlora4 plan only
    cfg.update({
        # dataset
        "dataset": ",".join(dataset["name"] for dataset in spec["datasets"]),  # max_samples applies to each of them
        "dataset_dir": dataset_dir,
        "template": spec["template"],
        "cutoff_len": spec["cutoff_len"],
    })
    if spec["max_samples"]:
        cfg["max_samples"] = spec["max_samples"]
    cfg.update({
        "overwrite_cache": True,
        "preprocessing_num_workers": spec["preprocessing_num_workers"],
        "dataloader_num_workers": spec["dataloader_num_workers"],
        "packing": bool(spec["packing"]),
        "neat_packing": False,
        "flash_attn": spec["attention"],
        # output
        "output_dir": output_dir,
        "logging_steps": spec["logging_steps"],
        "save_steps": spec["save_steps"],
        "save_total_limit": spec["save_total_limit"],
        "save_only_model": False,  # optimizer + scheduler state are what make a resume exact
        "plot_loss": True,
        "overwrite_output_dir": False,  # True would wipe checkpoints and make resume impossible
        "report_to": spec["report_to"],
        # train
        "per_device_train_batch_size": plan.per_device_train_batch_size,
        "gradient_accumulation_steps": plan.gradient_accumulation_steps,
        "learning_rate": float(spec["learning_rate"]),
        "num_train_epochs": float(spec["num_train_epochs"]),
        "lr_scheduler_type": spec["lr_scheduler_type"],
        "warmup_ratio": float(spec["warmup_ratio"]),
        "bf16": plan.precision in ("bf16", "qlora4"),
        "disable_gradient_checkpointing": not plan.gradient_checkpointing,  # LLaMA-Factory checkpoints by default
    })
    if spec["val_size"]:  # held-out samples: eval loss at every checkpoint and after the last step (eval_results.json)
        cfg.update({"val_size": spec["val_size"], "do_eval": True, "eval_strategy": "steps", "eval_steps": spec["save_steps"],
                    "per_device_eval_batch_size": plan.per_device_train_batch_size})
    if plan.paged_optimizer:
        cfg["optim"] = "paged_adamw_32bit"
    if plan.fused_kernels == "liger":  # only then: a job without the kernels keeps its config hash
        cfg["enable_liger_kernel"] = True
    if plan.device == "cpu":
        cfg["use_cpu"] = True
    cfg.update({"ddp_timeout": 180000000, "seed": spec["seed"], "resume_from_checkpoint": None})
    if plan.world_size > 1:  # a dead or hung peer fails the job within the timeout instead of hanging it for ever
        cfg["ddp_timeout"] = int((spec.get("distributed") or DISTRIBUTED_DEFAULTS)["timeout_s"])
    if (spec.get("distributed") or {}).get("nnodes", 1) > 1:  # no shared disk: every node keeps the checkpoints it resumes from
        cfg["save_on_each_node"] = True

    if "enable_liger_kernel" in spec["extra_args"]:  # the plan sizes the kernels: it alone turns them on
        raise RenderError("extra_args may not set enable_liger_kernel: the job's fused_kernels (lora_job_fused_kernels) decides it")
    clashes = sorted(set(spec["extra_args"]) & set(cfg))
    if clashes:
        raise RenderError(f"extra_args may not override keys the runner manages: {clashes}")
    for key in sorted(spec["extra_args"]):
        cfg[key] = spec["extra_args"][key]
    return cfg


def tracker_env(spec: dict, output_dir: str, env: dict) -> dict:
    """What the trainer's environment ``env`` needs for ``spec["report_to"]``, added by the runner.

    tensorboard: ``TENSORBOARD_LOGGING_DIR`` = ``<output_dir>/runs``, one folder for every attempt (the play fetches its
    event files). transformers 5.x reads only this variable: its ``logging_dir`` argument is deprecated and unread, and
    without either each attempt writes to a new ``runs/<date>_<host>``, where transformers 4.x also writes.
    mlflow: ``MLFLOW_EXPERIMENT_NAME`` = the job's name unless ``env`` names one, and MLflow's usage telemetry off (mlflow
    3.x sends it unless ``MLFLOW_DISABLE_TELEMETRY``; the role turns every tool's off). Without ``MLFLOW_TRACKING_URI`` in ``env``
    MLflow would log into ``./mlruns`` on the host: refused (RenderError). The URI is never part of what this returns.
    """
    if spec["report_to"] == "tensorboard":
        return {"TENSORBOARD_LOGGING_DIR": os.path.join(output_dir, TENSORBOARD_DIR)}
    if spec["report_to"] == "mlflow":
        if not env.get("MLFLOW_TRACKING_URI"):
            raise RenderError("report_to mlflow needs MLFLOW_TRACKING_URI in the runner's environment (lora_job_mlflow_tracking_uri "
                              "writes it into the unit's environment file); not started, so nothing is logged to ./mlruns on the host")
        return {"MLFLOW_EXPERIMENT_NAME": env.get("MLFLOW_EXPERIMENT_NAME") or spec["name"], "MLFLOW_DISABLE_TELEMETRY": "true"}
    return {}


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def canonical_json(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


FINGERPRINT_HASH_LIMIT = 64 << 20


def model_fingerprint(model: str) -> list | None:
    """``[[name, size, sha256 or None], ...]`` for a local model directory, None for a hub name."""
    if not os.path.isdir(model):
        return None
    entries = []
    for name in sorted(os.listdir(model)):
        path = os.path.join(model, name)
        if os.path.isfile(path):
            size = os.path.getsize(path)
            entries.append([name, size, file_sha256(path) if size <= FINGERPRINT_HASH_LIMIT else None])
    return entries


def stack_identity(view: dict | None) -> dict:
    """The part of what torch sees that decides the numbers a job learns: the torch build and its HIP version."""
    view = view or {}
    return {"torch": view.get("torch"), "hip": view.get("hip")}


def config_hash(train_cfg: dict, dataset_entry: dict, dataset_sha256: dict | str | None, model_files: list | None = None,
                stack: dict | None = None) -> str:
    """sha256 hex of what decides "the same job" (see the module docstring).

    ``dataset_sha256``: the local files' sha256 by data set name (a str: that of the one local file). ``stack``: a
    :func:`stack_identity` (None: left out of the payload, as before it was part of the hash).
    """
    stable = {key: UNHASHED.get(key, value) for key, value in train_cfg.items() if key not in VOLATILE_KEYS}
    entries = {}
    for name, entry in dataset_entry.items():
        entry = dict(entry)
        if "file_name" in entry:
            entry["file_name"] = None
            entry["file_sha256"] = dataset_sha256.get(name) if isinstance(dataset_sha256, dict) else dataset_sha256
        entries[name] = entry
    payload = {"format": HASH_FORMAT, "train": stable, "dataset_info": entries, "model_files": model_files}
    if stack is not None:
        payload["stack"] = stack
    return hashlib.sha256(canonical_json(payload).encode("ascii")).hexdigest()


# ---------------------------------------------------------------------------------------------
# What LLaMA-Factory's config reader (PyYAML under OmegaConf, for the suffix the runner uses) reads back unchanged:
# YAML's printable characters without NEL (U+0085, which YAML reads as a line break).
_UNREADABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def config_text(cfg: dict) -> str:
    """A LLaMA-Factory config as JSON text, keys in the config's order; the file's name ends in CONFIG_SUFFIX."""
    try:
        text = json.dumps(cfg, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RenderError(f"cannot write the LLaMA-Factory config: {exc}") from exc
    unreadable = _UNREADABLE.search(text)
    if unreadable:
        raise RenderError(f"LLaMA-Factory cannot read a config holding the character {unreadable.group()!r} "
                          f"(at {text[max(0, unreadable.start() - 40):unreadable.start()]!r})")
    return text + "\n"

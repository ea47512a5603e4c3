# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The merged model: the base model with the adapter folded in, written by ``llamafactory-cli export``.

``export: merged`` in the job spec writes it into ``<run dir>/merged`` (safetensors shards, the tokenizer, config.json)
after training, on rank 0 only, when the disk holds it: the size is the base model's weights (a local model's weight
files, else parameters x bytes of the config's dtype) plus a margin. ``check`` refuses a job whose export cannot fit
before anything trains. A marker (``MARKER`` in the export dir, written last) holds the key of what was exported, so a
re-run exports again only when the adapter or the base model changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

from .inference import model_args
from .state import output_dir_for, read_json, write_json_atomic
from .vocabulary import CONFIG_SUFFIX

EXPORT_SUBDIR = "merged"
MARKER = ".radeonlab-export.json"
CONFIG_FILE = f"export{CONFIG_SUFFIX}"  # JSON text, as every config the runner writes
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
MARGIN = 1.10  # shard headers, config and tokenizer files, and what a rounding of the estimate misses
SLACK_BYTES = 64 << 20
SHARD_GB = 5  # LLaMA-Factory's export_size: shards of at most this many GB


def export_dir(run_dir: str) -> str:
    return os.path.join(run_dir, EXPORT_SUBDIR)


def config(spec: dict, run_dir: str) -> dict:
    """The ``llamafactory-cli export`` arguments (LLaMA-Factory's merge example), on the CPU: no GPU memory needed."""
    return {**model_args(spec, output_dir_for(run_dir)), "export_dir": export_dir(run_dir), "export_size": SHARD_GB, "export_device": "cpu",
            "export_legacy_format": False}


def key(cfg: dict, config_hash: str) -> str:
    return hashlib.sha256(json.dumps({"config": cfg, "trained": config_hash}, sort_keys=True).encode("utf-8")).hexdigest()


def wanted(spec: dict, node_rank: int) -> bool:
    return spec["export"] == "merged" and node_rank == 0


def pending(spec: dict, run_dir: str, config_hash: str, node_rank: int = 0) -> bool:
    if not wanted(spec, node_rank):
        return False
    marker = read_json(os.path.join(export_dir(run_dir), MARKER)) or {}
    return marker.get("key") != key(config(spec, run_dir), config_hash)


def _dtype_bytes(model_config: dict | None) -> int:
    dtype = str((model_config or {}).get("torch_dtype") or (model_config or {}).get("dtype") or "bfloat16")
    return 4 if dtype in ("float32", "fp32") else 2


def needed_bytes(spec: dict, params: int) -> int:
    """What the merged model takes on disk, with the margin."""
    model = spec["model"]
    weights = 0
    if os.path.isdir(model):
        for dirpath, _dirs, files in os.walk(model):
            weights += sum(os.path.getsize(os.path.join(dirpath, name)) for name in files if name.endswith(WEIGHT_SUFFIXES))
        model_config = read_json(os.path.join(model, "config.json"))
    else:
        model_config = spec.get("model_config")
    if not weights:
        weights = params * _dtype_bytes(model_config)
    return int(weights * MARGIN) + SLACK_BYTES


def room(spec: dict, run_dir: str, params: int) -> tuple[int, int]:
    """(needed, free) bytes where the export goes (the nearest existing folder above it)."""
    where = export_dir(run_dir)
    while not os.path.isdir(where):
        where = os.path.dirname(where)
    free = shutil.disk_usage(where).free
    if os.path.isdir(export_dir(run_dir)):  # an earlier export is replaced: its space comes back
        for dirpath, _dirs, files in os.walk(export_dir(run_dir)):
            free += sum(os.path.getsize(os.path.join(dirpath, name)) for name in files)
    return needed_bytes(spec, params), free


def refusal(spec: dict, run_dir: str, params: int) -> str | None:
    """Why the merged model would not fit, or None."""
    needed, free = room(spec, run_dir, params)
    if free >= needed:
        return None
    return (f"export: merged needs {needed / 2**30:.1f} GiB for the merged model in {export_dir(run_dir)} but only "
            f"{free / 2**30:.1f} GiB are free there: free space, or set export to adapter (the adapter alone)")


def mark_done(spec: dict, run_dir: str, config_hash: str, peak_memory: dict | None = None) -> dict:
    """The marker, written last: the key, the files, their size and the export's measured peak memory."""
    files = sorted(name for name in os.listdir(export_dir(run_dir)) if not name.startswith("."))
    size = sum(os.path.getsize(os.path.join(export_dir(run_dir), name)) for name in files)
    record = {"key": key(config(spec, run_dir), config_hash), "files": files, "bytes": size, "peak_memory": peak_memory}
    write_json_atomic(os.path.join(export_dir(run_dir), MARKER), record)
    return record

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which files of a Hugging Face model the controller downloads once for lora_job_model_cache.

No Ansible import; Python 3.8+. The input is the hub's answer to ``GET <endpoint>/api/models/<id>/revision/<rev>?blobs=true``
(what ``huggingface_hub.HfApi.model_info(files_metadata=True)`` asks; hf-mirror.com answers it too): the commit the
revision resolves to and one ``siblings`` entry per file, LFS files with their ``lfs.sha256``. The files are then
fetched from ``<endpoint>/<id>/resolve/<commit>/<path>``, so a branch that moves mid-download cannot mix two commits.
A file name is a path under the cache directory: anything that could leave it (``..``, an absolute path, a
backslash) refuses the whole snapshot rather than being skipped.
"""

from __future__ import annotations

import json
import re

COMMIT = re.compile(r"^[0-9a-f]{40}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9._+-]*$")
# Formats no training host reads (other runtimes' exports); the folders of such exports.
OTHER_RUNTIMES = (".gguf", ".onnx", ".onnx_data", ".h5", ".msgpack", ".ot", ".tflite", ".mlmodel", ".mlpackage")
OTHER_RUNTIME_DIRS = ("onnx", "openvino", "coreml", "original", "gguf")
# PyTorch pickles, left out when the model also ships safetensors (transformers prefers those).
PICKLED_WEIGHTS = (".bin", ".pt", ".pth")
PICKLED_INDEX = "pytorch_model.bin.index.json"


def _safe(name):
    return isinstance(name, str) and all(SAFE_SEGMENT.match(part) and part not in (".", "..") for part in name.split("/"))


def _wanted(path, has_safetensors):
    parts = path.split("/")
    if any(part.startswith(".") for part in parts):
        return False
    if len(parts) > 1 and parts[0] in OTHER_RUNTIME_DIRS:
        return False
    if path.endswith(OTHER_RUNTIMES):
        return False
    return not (has_safetensors and (path.endswith(PICKLED_WEIGHTS) or parts[-1] == PICKLED_INDEX))


def snapshot(info):
    """The hub's model info (JSON text or parsed) as ``{"problem", "commit", "files", "bytes"}``: ``files`` the
    ``{"path", "size", "sha256"}`` to download (``sha256`` None for a small file kept in git, not LFS), ``problem``
    one sentence when the answer cannot be used ("" otherwise)."""
    empty = {"problem": "", "commit": "", "files": [], "bytes": 0}
    try:
        if isinstance(info, (str, bytes)):
            info = json.loads(info)
    except ValueError:
        return dict(empty, problem="the hub's answer is not JSON (is lora_job_hf_endpoint a Hugging Face hub or mirror?)")
    if not isinstance(info, dict) or not isinstance(info.get("siblings"), list):
        return dict(empty, problem="the hub's answer lists no files (siblings)")
    commit = info.get("sha")
    if not isinstance(commit, str) or not COMMIT.match(commit):
        return dict(empty, problem="the hub's answer names no 40-hex commit (sha: %r)" % (commit,))
    names = [entry.get("rfilename") if isinstance(entry, dict) else None for entry in info["siblings"]]
    unsafe = [name for name in names if not _safe(name)]
    if unsafe:
        return dict(empty, problem="the hub lists file names that are not plain relative paths: %s"
                    % ", ".join(repr(name) for name in unsafe[:5]))
    has_safetensors = any(name.endswith(".safetensors") for name in names)
    files = []
    for entry in info["siblings"]:
        path = entry["rfilename"]
        if not _wanted(path, has_safetensors):
            continue
        lfs = entry.get("lfs") or {}
        sha256 = lfs.get("sha256") if isinstance(lfs, dict) else None
        if lfs and (not isinstance(sha256, str) or not SHA256.match(sha256)):
            return dict(empty, problem="the hub lists %s as an LFS file without a sha256 to check it against" % path)
        size = lfs.get("size", entry.get("size")) if lfs else entry.get("size")
        files.append({"path": path, "size": int(size) if isinstance(size, int) else 0, "sha256": sha256 or None})
    if "config.json" not in [entry["path"] for entry in files]:
        return dict(empty, problem="the model has no config.json at its top (not a transformers model?)")
    files.sort(key=lambda entry: entry["path"])
    return {"problem": "", "commit": commit, "files": files, "bytes": sum(entry["size"] for entry in files)}


def directories(files):
    """The sub-directories the files need under the cache directory, parents first."""
    found = set()
    for entry in files:
        parts = entry["path"].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            found.add("/".join(parts[:depth]))
    return sorted(found, key=lambda path: (path.count("/"), path))

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lay the lab's tiny model out as a Hugging Face hub would serve it (test infrastructure only).

    python hub.py MODEL_DIR HUB_DIR [--model radeonlab-lab/tiny-qwen2]

writes, for the lab mirror (tests/lab/mirror/serve.sh serves HUB_DIR as /hub/)::

    HUB_DIR/api/models/<model>/revision/main        the hub's model info with blobs: sha (the commit), siblings
    HUB_DIR/<model>/resolve/<commit>/<file>         each file of MODEL_DIR

so `lora_job_hf_endpoint: http://127.0.0.1:8765/hub` with lora_job_model_cache walks the path a real fleet takes
through huggingface.co or hf-mirror.com: the file list, then each file from the one commit, the safetensors as an LFS
file checked against its sha256. The commit stands in for git's: the sha1 of the files' names and sha256s, so a
rebuilt model is a new commit. A `.gitattributes` is listed as every hub repository has one, and never served: the
download must leave dot-files out. Content-keyed: a second run rewrites nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

from build import write_if_changed  # the tiny model's own builder, beside this file

LFS_SUFFIXES = (".safetensors",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir")
    parser.add_argument("hub_dir")
    parser.add_argument("--model", default="radeonlab-lab/tiny-qwen2")
    args = parser.parse_args(argv)
    files = {}
    for name in sorted(os.listdir(args.model_dir)):
        with open(os.path.join(args.model_dir, name), "rb") as handle:
            files[name] = handle.read()
    digests = {name: hashlib.sha256(content).hexdigest() for name, content in files.items()}
    commit = hashlib.sha1(json.dumps(digests, sort_keys=True).encode()).hexdigest()
    siblings = [{"rfilename": ".gitattributes", "size": 1519, "blobId": "0" * 40}]
    for name, content in files.items():
        entry = {"rfilename": name, "size": len(content)}
        if name.endswith(LFS_SUFFIXES):
            entry["lfs"] = {"sha256": digests[name], "size": len(content), "pointerSize": 134}
        else:
            entry["blobId"] = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
        siblings.append(entry)
    info = {"id": args.model, "modelId": args.model, "sha": commit, "private": False, "siblings": siblings}
    changed = []
    api = os.path.join(args.hub_dir, "api", "models", *args.model.split("/"), "revision", "main")
    if write_if_changed(api, (json.dumps(info, indent=2, sort_keys=True) + "\n").encode()):
        changed.append(api)
    for name, content in files.items():
        path = os.path.join(args.hub_dir, *args.model.split("/"), "resolve", commit, name)
        if write_if_changed(path, content):
            changed.append(path)
    print(json.dumps({"model": args.model, "commit": commit, "changed": changed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

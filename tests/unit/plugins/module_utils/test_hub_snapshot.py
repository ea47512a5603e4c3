# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tables for the files lora_job_model_cache downloads (plugins/module_utils/hub_snapshot.py)."""

import json

import pytest

from ansible_collections.radeonlab.llm.plugins.filter.hub_snapshot import hub_snapshot_filter
from ansible_collections.radeonlab.llm.plugins.module_utils import hub_snapshot as hs

COMMIT = "a" * 40
SHA = "0123456789abcdef" * 4


def lfs(name, size=100, sha=SHA):
    return {"rfilename": name, "size": size, "lfs": {"sha256": sha, "size": size, "pointerSize": 134}}


def git(name, size=10):
    return {"rfilename": name, "size": size, "blobId": "b" * 40}


def info(*siblings, sha=COMMIT):
    return {"id": "org/model", "sha": sha, "siblings": list(siblings)}


# The shape of Qwen2.5-0.5B-Instruct's listing: dot-file, git files and one LFS weight.
QWEN = info(git(".gitattributes"), git("LICENSE"), git("README.md"), git("config.json"), git("generation_config.json"),
            git("merges.txt"), lfs("model.safetensors", 988097824), lfs("tokenizer.json", 7031645),
            git("tokenizer_config.json"), git("vocab.json"))


@pytest.mark.parametrize("answer, paths", [
    (QWEN, ["LICENSE", "README.md", "config.json", "generation_config.json", "merges.txt", "model.safetensors",
            "tokenizer.json", "tokenizer_config.json", "vocab.json"]),
    # pickles beside safetensors are left out, kept when they are the only weights
    (info(git("config.json"), lfs("model.safetensors"), lfs("pytorch_model.bin"), git("pytorch_model.bin.index.json")),
     ["config.json", "model.safetensors"]),
    (info(git("config.json"), lfs("pytorch_model-00001-of-00002.bin"), lfs("pytorch_model-00002-of-00002.bin"),
          git("pytorch_model.bin.index.json")),
     ["config.json", "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin", "pytorch_model.bin.index.json"]),
    # other runtimes' exports and their folders
    (info(git("config.json"), lfs("model.safetensors"), lfs("model-q4_k_m.gguf"), lfs("onnx/model.onnx"),
          lfs("original/consolidated.00.pth"), lfs("flax_model.msgpack"), lfs("tf_model.h5")),
     ["config.json", "model.safetensors"]),
    # sub-folders a model needs (sentence-transformers style) stay, sorted
    (info(lfs("model.safetensors"), git("1_Pooling/config.json"), git("config.json")),
     ["1_Pooling/config.json", "config.json", "model.safetensors"]),
])
def test_files_to_download(answer, paths):
    result = hs.snapshot(answer)
    assert result["problem"] == ""
    assert result["commit"] == COMMIT
    assert [entry["path"] for entry in result["files"]] == paths


def test_lfs_files_carry_their_sha256_and_git_files_none():
    files = {entry["path"]: entry for entry in hs.snapshot(json.dumps(QWEN))["files"]}
    assert files["model.safetensors"] == {"path": "model.safetensors", "size": 988097824, "sha256": SHA}
    assert files["config.json"]["sha256"] is None
    assert hs.snapshot(QWEN)["bytes"] == 988097824 + 7031645 + 10 * 7


@pytest.mark.parametrize("answer, problem", [
    ("<html>not found</html>", "not JSON"),
    ({"error": "Repository not found"}, "lists no files"),
    (info(git("config.json"), sha="main"), "no 40-hex commit"),
    (info(git("config.json"), git("../../.bashrc")), "'../../.bashrc'"),
    (info(git("config.json"), git("/etc/cron.d/x")), "'/etc/cron.d/x'"),
    (info(git("config.json"), git("a\\..\\b")), "not plain relative paths"),
    (info(git("config.json"), git("dir//x")), "not plain relative paths"),
    (info(git("config.json"), {"rfilename": 7}), "not plain relative paths"),
    (info(git("config.json"), lfs("model.safetensors", sha="not-a-sha")), "model.safetensors as an LFS file without a sha256"),
    (info(lfs("model.safetensors")), "no config.json"),
    (info(git("config.json"), {"rfilename": "model.safetensors", "size": 9, "lfs": "yes"}), "model.safetensors as an LFS file without"),
])
def test_answers_refused_whole(answer, problem):
    result = hs.snapshot(answer)
    assert problem in result["problem"]
    assert result["files"] == [] and result["commit"] == ""


def test_filter_adds_the_directories_parents_first():
    result = hub_snapshot_filter(info(git("config.json"), git("a/b/c.json"), git("a/d.json"), git("e/f.json")))
    assert result["directories"] == ["a", "e", "a/b"]

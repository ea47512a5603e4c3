# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tests/lab/tinymodel/build.py: the pure parts always, a full build where numpy/safetensors/tokenizers exist."""

from __future__ import annotations

import importlib.util
import json
import os


from radeonlab_lora.modelshape import ModelShape
from radeonlab_lora.spec import normalize

BUILD = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "lab", "tinymodel", "build.py"))
_spec = importlib.util.spec_from_file_location("tinymodel_build", BUILD)
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def test_records_are_deterministic_and_alpaca():
    records = build.make_records(128)
    assert records == build.make_records(128)
    assert all(set(r) == {"instruction", "input", "output"} and r["output"] for r in records)
    assert {"instruction": "Reverse the word.", "input": "cat", "output": "tac"} in records


def test_config_is_qwen2_shaped():
    config = build.model_config()
    assert (config["model_type"], config["architectures"], config["tie_word_embeddings"], config["torch_dtype"]) == (
        "qwen2", ["Qwen2ForCausalLM"], True, "float32")
    assert ModelShape.from_config(config).params == 139840  # what transformers counts for the built model


def test_job_spec_is_valid(tmp_path):
    spec = normalize(build.job_spec(str(tmp_path)))
    assert spec["template"] == "qwen" and spec["dataset"]["file"].endswith("data/tiny_alpaca.json")


def test_full_build_is_idempotent(tmp_path):
    assert build.main([str(tmp_path), "--write-job"]) == 0
    first = {name: (tmp_path / name).read_bytes() for name in ("model/model.safetensors", "model/tokenizer.json", "build.json")}
    mtime = os.stat(tmp_path / "model" / "model.safetensors").st_mtime_ns
    assert build.main([str(tmp_path), "--write-job"]) == 0
    assert os.stat(tmp_path / "model" / "model.safetensors").st_mtime_ns == mtime
    assert first == {name: (tmp_path / name).read_bytes() for name in first}
    info = json.loads((tmp_path / "data" / "dataset_info.json").read_text())
    assert info["tiny_alpaca"]["file_name"] == "tiny_alpaca.json"

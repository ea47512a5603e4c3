# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parameter counts and shapes from config.json or a bare size."""

from __future__ import annotations

import json

import pytest
from lora_cases import LLAMA3_8B, QWEN25_05B, QWEN25_7B, QWEN25_15B, TINY

from radeonlab_lora.modelshape import ModelShape, ModelShapeError, shape_for_job
from radeonlab_lora.sizing import Setting, estimate


@pytest.mark.parametrize(
    "config, published_b, tolerance",
    [
        (QWEN25_7B, 7.62, 0.01),  # model card: 7.61 B
        (QWEN25_15B, 1.54, 0.01),
        (QWEN25_05B, 0.49, 0.01),
        (LLAMA3_8B, 8.03, 0.01),
    ],
)
def test_parameter_count_matches_published(config, published_b, tolerance):
    assert ModelShape.from_config(config).params_b == pytest.approx(published_b, abs=tolerance)


def test_lora_params_of_reference_model():
    # r=8 on q,k,v,o,gate,up,down of Qwen2.5-7B: 20.2 M trainable, 0.30 GiB with fp32 weight+grad+Adam
    assert ModelShape.from_config(QWEN25_7B).lora_params(8) == 20185088


def test_tied_embeddings_counted_once():
    untied = ModelShape.from_config({**QWEN25_05B, "tie_word_embeddings": False})
    tied = ModelShape.from_config(QWEN25_05B)
    assert untied.params - tied.params == 151936 * 896
    assert tied.embedding_params == 151936 * 896


def test_multimodal_text_config_is_used():
    assert ModelShape.from_config({"model_type": "qwen2_vl", "text_config": QWEN25_7B}).params == ModelShape.from_config(QWEN25_7B).params


def test_missing_keys_are_named():
    with pytest.raises(ModelShapeError, match="hidden_size"):
        ModelShape.from_config({"num_hidden_layers": 2})


def test_from_params_reproduces_reference_shape():
    shape = ModelShape.from_params(7.64)
    assert (shape.hidden, shape.layers, shape.intermediate, shape.vocab) == (3584, 28, 18944, 152064)
    assert shape.source == "params"


@pytest.mark.parametrize("config", [QWEN25_05B, QWEN25_15B, LLAMA3_8B, QWEN25_7B])
@pytest.mark.parametrize("ckpt", [True, False])
def test_from_params_estimates_no_less_than_real_shape(config, ckpt):
    """A bare size in billions must not plan a run the real shape would OOM (the 10 % margin absorbs -2 %)."""
    real = ModelShape.from_config(config)
    guessed = ModelShape.from_params(real.params_b)
    setting = Setting("bf16", ckpt, 1)
    assert estimate(guessed, 2048, setting, "sdpa").total_gib >= 0.98 * estimate(real, 2048, setting, "sdpa").total_gib


@pytest.mark.parametrize("bad", [None, 0, -1])
def test_from_params_rejects_nonsense(bad):
    with pytest.raises(ModelShapeError):
        ModelShape.from_params(bad)


def test_shape_for_job_prefers_local_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    shape = shape_for_job(str(tmp_path), params_b=7.0)
    assert shape.source == "config" and shape.hidden == 64


def test_shape_for_job_hub_name_needs_size():
    with pytest.raises(ModelShapeError, match="model_params_b"):
        shape_for_job("Qwen/Qwen2.5-7B-Instruct")
    assert shape_for_job("Qwen/Qwen2.5-7B-Instruct", params_b=7.6).source == "params"
    assert shape_for_job("Qwen/Qwen2.5-7B-Instruct", config=QWEN25_7B).source == "config"

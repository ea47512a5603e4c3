# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Job spec defaults and validation."""

from __future__ import annotations

import pytest

from radeonlab_lora.spec import SpecError, load, normalize

MINIMAL = {"model": "Qwen/Qwen2.5-0.5B", "template": "qwen", "dataset": {"name": "d", "hf_hub_url": "org/d"}, "output_dir": "/srv/job"}


def test_defaults_filled():
    spec = normalize(MINIMAL)
    assert spec["lora"] == {"rank": 8, "alpha": 16, "target": "all", "dropout": 0.0}
    assert (spec["cutoff_len"], spec["effective_batch_size"], spec["attention"], spec["allow_qlora"]) == (1024, 8, "auto", True)
    assert spec["sdpa_kernel"] == "flash"  # an old spec without the key: sdpa sized as AOTriton flash


@pytest.mark.parametrize("value, ok", [("flash", True), ("math", True), ("cudnn", False), (None, False)])
def test_sdpa_kernel_choices(value, ok):
    if ok:
        assert normalize({**MINIMAL, "sdpa_kernel": value})["sdpa_kernel"] == value
    else:
        with pytest.raises(SpecError, match="sdpa_kernel must be one of"):
            normalize({**MINIMAL, "sdpa_kernel": value})


def test_aliases_and_partial_lora():
    spec = normalize({**MINIMAL, "epochs": 2, "lr": 2e-4, "lora": {"rank": 16, "target": ["q_proj", "v_proj"]}, "output_dir": "/srv/job/"})
    assert (spec["num_train_epochs"], spec["learning_rate"]) == (2, 2e-4)
    assert spec["lora"] == {"rank": 16, "alpha": 16, "target": "q_proj,v_proj", "dropout": 0.0}
    assert spec["output_dir"] == "/srv/job"


def test_every_problem_is_reported_at_once():
    with pytest.raises(SpecError) as info:
        normalize({"model": "m", "dataset": {"name": "d", "file": "rel.json", "hf_hub_url": "x"}, "attention": "flash",
                   "cutoff_len": 0, "lora": {"rank": -1, "dropout": 1.5}, "output_dir": "rel", "bogus": 1, "env": {"A": 1}})
    message = str(info.value)
    for fragment in ("template is required", "attention must be one of", "exactly one of", "cutoff_len must be a positive integer",
                     "lora.rank", "lora.dropout", "output_dir must be an absolute path", "unknown keys ['bogus']", "env must be an object of strings"):
        assert fragment in message


def test_relative_dataset_file_rejected():
    with pytest.raises(SpecError, match="dataset.file must be an absolute path"):
        normalize({**MINIMAL, "dataset": {"name": "d", "file": "data.json"}})


def test_not_an_object():
    with pytest.raises(SpecError):
        normalize([1, 2])


def test_load_bad_json(tmp_path):
    path = tmp_path / "job.json"
    path.write_text("{nope")
    with pytest.raises(SpecError, match="not JSON"):
        load(str(path))


def test_device_defaults_and_choices():
    spec = normalize(MINIMAL)
    assert (spec["device"], spec["torch_without_hip"]) == ("auto", False)
    for device in ("auto", "gpu", "cpu"):
        assert normalize({**MINIMAL, "device": device, "torch_without_hip": True})["device"] == device


@pytest.mark.parametrize("key, value, fragment", [
    ("device", "cuda", "device must be one of ['auto', 'gpu', 'cpu'], got 'cuda'"),
    ("device", None, "device must be one of"),
    ("torch_without_hip", "false", "torch_without_hip must be true or false, got 'false'"),
    ("torch_without_hip", 1, "torch_without_hip must be true or false, got 1"),
])
def test_device_keys_are_validated(key, value, fragment):
    with pytest.raises(SpecError) as info:
        normalize({**MINIMAL, key: value})
    assert fragment in str(info.value)


@pytest.mark.parametrize("extra, fragment", [
    ({"formatting": "alpaca"}, None),
    ({"formatting": "sharegpt", "columns": {"messages": "messages"}, "tags": {"role_tag": "role"}}, None),
    ({"formatting": "openai"}, "dataset.formatting must be one of ['alpaca', 'sharegpt']"),
    ({"formatting": "sharegpt", "tags": ["role"]}, "dataset.tags must map names to strings"),
    ({"columns": {"prompt": 1}}, "dataset.columns must map names to strings"),
])
def test_dataset_formatting(extra, fragment):
    job = {**MINIMAL, "dataset": {**MINIMAL["dataset"], **extra}}
    if fragment is None:
        assert normalize(job)["dataset"] == job["dataset"]
    else:
        with pytest.raises(SpecError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
            normalize(job)


@pytest.mark.parametrize("value, ok", [(0, True), (0.0, True), (0.05, True), (0.999, True), (100, True), (100.0, True),
                                       (1, True), (-0.1, False), (1.5, False), (True, False), ("0.1", False), (None, False)])
def test_val_size_is_a_fraction_or_a_whole_count(value, ok):
    if ok:
        assert normalize({**MINIMAL, "val_size": value})["val_size"] == value
    else:
        with pytest.raises(SpecError, match="val_size must be a fraction in"):
            normalize({**MINIMAL, "val_size": value})


def test_val_size_defaults_to_none_held_out():
    assert normalize(MINIMAL)["val_size"] == 0.0

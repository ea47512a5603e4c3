# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Several data sets in one job: the spec's datasets, dataset_info.json, LLaMA-Factory's "a,b", and the unchanged hash of one."""

from __future__ import annotations

import json

import pytest
from lora_cases import QWEN25_05B, matching_view

from radeonlab_lora import runner, spec as jobspec
from radeonlab_lora.spec import SpecError

ALPACA = [{"instruction": "Say hi", "input": "", "output": "hi"}] * 8
CHATS = [{"messages": [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "hi"}]}] * 8
OPENAI = {"formatting": "sharegpt", "columns": {"messages": "messages"},
          "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}
# Computed on the code before several data sets existed (commit 4591277): a finished job of one data set must keep its
# config hash, or the role would train it again. Since issue 48 the hash also covers the torch/HIP stack; without it
# (what these were computed on) the hash is unchanged, so the stack is the only new input.
PINNED = {
    "alpaca_file": "ceb1622de621cebe809b43bad5810dde734da2bc62e15e8c4bfe77ed473fc6a6",
    "sharegpt_file": "6b77f73a5cdba8301b689572d72539d2c6a194bbd512a510a0908e93a731bec8",
    "hf_hub": "0aa0a57053f381715ac057cb20a3c92fa9dcbe07a118e1c04d1c426f7b3911ce",
}


@pytest.fixture
def files(tmp_path):
    alpaca, chats = tmp_path / "alpaca.json", tmp_path / "chats.jsonl"
    alpaca.write_text(json.dumps(ALPACA))
    chats.write_text("".join(json.dumps(record) + "\n" for record in CHATS))
    return {"alpaca_file": {"name": "tiny_alpaca", "file": str(alpaca)},
            "sharegpt_file": {"name": "tiny_chats", "file": str(chats), **OPENAI},
            "hf_hub": {"name": "alpaca_en", "hf_hub_url": "llamafactory/alpaca_en", "split": "train"}}


def _job(tmp_path, **data):
    """A hub model (no local path in the hash), CPU facts: the hash depends on nothing of this machine."""
    return {"name": "pinned", "model": "Qwen/Qwen2.5-0.5B-Instruct", "model_config": QWEN25_05B, "template": "qwen",
            "cutoff_len": 128, "num_train_epochs": 1, "learning_rate": 5e-3, "max_samples": 68, "output_dir": str(tmp_path / "job"),
            "logging_steps": 1, "save_steps": 2, "effective_batch_size": 4, "gpu": {"vram_kb": 0}, **data}


def _prepared(job):
    return runner.prepare(jobspec.normalize(job), job["gpu"], matching_view(job["gpu"]))


def _without_stack(prepared):
    """The hash of ``prepared`` as computed before the stack was one of its inputs."""
    return runner._config_hash(prepared.spec, prepared.plan, runner._hash_inputs(prepared.spec)[:3])  # pylint: disable=protected-access


@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_job_of_one_data_set_keeps_its_config_hash(tmp_path, files, case):
    old = _prepared(_job(tmp_path, dataset=files[case]))
    as_list = _prepared(_job(tmp_path, datasets=[files[case]]))
    assert old.config_hash == as_list.config_hash
    assert _without_stack(old) == _without_stack(as_list) == PINNED[case]
    assert old.train_config()["dataset"] == files[case]["name"]
    assert old.dataset_entry == as_list.dataset_entry and list(old.dataset_entry) == [files[case]["name"]]


@pytest.mark.parametrize("report_to", ["none", "tensorboard", "mlflow"])
def test_a_job_reporting_its_curves_keeps_the_hash_it_had_before_report_to_existed(tmp_path, files, report_to):
    assert _without_stack(_prepared(_job(tmp_path, dataset=files["alpaca_file"], report_to=report_to))) == PINNED["alpaca_file"]


def test_one_local_data_set_keeps_its_sha256_for_the_nodes_to_compare(tmp_path, files):
    prepared = _prepared(_job(tmp_path, dataset=files["alpaca_file"]))
    assert isinstance(prepared.dataset_sha256, str) and len(prepared.dataset_sha256) == 64
    assert _prepared(_job(tmp_path, dataset=files["hf_hub"])).dataset_sha256 is None


def test_two_data_sets_render_two_entries_and_one_dataset_argument(tmp_path, files):
    prepared = _prepared(_job(tmp_path, datasets=[files["alpaca_file"], files["sharegpt_file"]]))
    runner.write_run_files(prepared)
    info = json.loads((tmp_path / "job" / prepared.run_dir.rsplit("/", 1)[1] / "data" / "dataset_info.json").read_text())
    assert info == {"tiny_alpaca": {"file_name": files["alpaca_file"]["file"], "formatting": "alpaca",
                                    "columns": {"prompt": "instruction", "query": "input", "response": "output"}},
                    "tiny_chats": {"file_name": files["sharegpt_file"]["file"], "formatting": "sharegpt",
                                   "columns": {"messages": "messages"}, "tags": OPENAI["tags"]}}
    train = json.loads((tmp_path / "job" / prepared.run_dir.rsplit("/", 1)[1] / "train.yaml").read_text())
    assert (train["dataset"], train["max_samples"]) == ("tiny_alpaca,tiny_chats", 68)
    assert prepared.config_hash not in PINNED.values()
    assert prepared.dataset_sha256.count(":") == 2 and prepared.dataset_sha256.startswith("tiny_alpaca:")


def test_each_data_set_is_in_the_hash(tmp_path, files):
    both = _prepared(_job(tmp_path, datasets=[files["alpaca_file"], files["hf_hub"]])).config_hash
    assert both != _prepared(_job(tmp_path, datasets=[files["alpaca_file"]])).config_hash
    with open(files["alpaca_file"]["file"], "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert _prepared(_job(tmp_path, datasets=[files["alpaca_file"], files["hf_hub"]])).config_hash != both


def test_a_missing_file_of_any_data_set_is_refused_before_planning(tmp_path, files):
    with pytest.raises(SpecError, match="dataset file /nowhere/b.json does not exist"):
        _prepared(_job(tmp_path, datasets=[files["alpaca_file"], {"name": "b", "file": "/nowhere/b.json"}]))


@pytest.mark.parametrize("data, fragment", [
    ({"datasets": []}, "datasets must be a non-empty list of objects"),
    ({"datasets": {"name": "a", "hf_hub_url": "o/a"}}, "datasets must be a non-empty list of objects"),
    ({"datasets": [{"name": "a", "hf_hub_url": "o/a"}, {"name": "a", "hf_hub_url": "o/b"}]}, "datasets name 'a' more than once"),
    ({"datasets": [{"name": "a,b", "hf_hub_url": "o/a"}]}, "datasets[0].name must not contain ','"),
    ({"datasets": [{"name": "a", "hf_hub_url": "o/a"}, {"name": "b"}]}, "datasets[1] needs exactly one of"),
    ({"datasets": [{"name": "a", "hf_hub_url": "o/a", "file": "/a.json"}]}, "datasets[0] needs exactly one of"),
    ({"datasets": [{"name": "a", "file": "a.json"}]}, "datasets[0].file must be an absolute path"),
    ({"datasets": [{"hf_hub_url": "o/a"}]}, "datasets[0] must be an object with a name"),
    ({"dataset": {"name": "a", "hf_hub_url": "o/a"}, "datasets": [{"name": "b", "hf_hub_url": "o/b"}]}, "not both"),
    ({}, "dataset is required"),
])
def test_datasets_are_checked(data, fragment):
    job = {"model": "Qwen/Qwen2.5-0.5B", "template": "qwen", "output_dir": "/srv/job", **data}
    with pytest.raises(SpecError) as info:
        jobspec.normalize(job)
    assert fragment in str(info.value)


def test_either_key_normalizes_to_datasets_with_dataset_the_first():
    one = {"name": "a", "hf_hub_url": "o/a"}
    two = [one, {"name": "b", "ms_hub_url": "o/b"}]
    base = {"model": "Qwen/Qwen2.5-0.5B", "template": "qwen", "output_dir": "/srv/job"}
    assert (jobspec.normalize({**base, "dataset": one})["datasets"], jobspec.normalize({**base, "dataset": one})["dataset"]) == ([one], one)
    assert (jobspec.normalize({**base, "datasets": two})["datasets"], jobspec.normalize({**base, "datasets": two})["dataset"]) == (two, one)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lora_job's vars/main.yml for lora_job_dataset: the job spec's dataset(s), the copies, the files the preflight reads."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "lora_job"))
DATA = "/var/lib/radeonlab/lora/job/data/"
CHATS = {"name": "a", "src": "/ctl/a.jsonl", "formatting": "sharegpt", "columns": {"messages": "messages"}}


def _render(names, **given):
    loader = DataLoader()
    variables = {}
    for part in ("defaults", "vars"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part, "main.yml"), trusted_as_template=True))
    variables.update({"lora_job_name": "job", "lora_job_model": "/srv/model", "inventory_hostname": "h", "ansible_facts": {},
                      "ansible_play_hosts_all": ["h"]}, **given)
    templar = Templar(loader=loader, variables=variables)
    return {name: templar.template(trust_as_template("{{ %s }}" % name)) for name in names}


@pytest.mark.parametrize("given, dataset", [
    ({"lora_job_dataset": {"name": "tiny", "hf_hub_url": "org/x"}, "lora_job_dataset_src": "/ctl/tiny.json"},
     {"name": "tiny", "file": DATA + "tiny.json"}),
    ({"lora_job_dataset": {"name": "x", "hf_hub_url": "org/x", "split": "train"}}, {"name": "x", "hf_hub_url": "org/x", "split": "train"}),
    ({"lora_job_dataset": {"name": "y", "file": "/srv/y.json", "formatting": "sharegpt"}},
     {"name": "y", "file": "/srv/y.json", "formatting": "sharegpt"}),
])
def test_a_single_mapping_is_written_as_the_dataset_it_always_was(given, dataset):
    found = _render(["_lora_job_spec", "_lora_job_dataset_copies", "_lora_job_dataset_host_files"], **given)
    assert found["_lora_job_spec"]["dataset"] == dataset and "datasets" not in found["_lora_job_spec"]
    copies = [{"variable": "lora_job_dataset_src", "src": "/ctl/tiny.json", "dest": DATA + "tiny.json", "dataset": given["lora_job_dataset"]}]
    assert found["_lora_job_dataset_copies"] == (copies if given.get("lora_job_dataset_src") else [])
    assert found["_lora_job_dataset_host_files"] == {}


def test_a_list_is_written_as_datasets_with_each_src_copied_into_the_data_directory():
    entries = [{"name": "h", "hf_hub_url": "org/h"}, CHATS, {"name": "f", "file": "/srv/f.json"}]
    found = _render(["_lora_job_spec", "_lora_job_dataset_copies", "_lora_job_dataset_host_files", "_lora_job_dataset_src_files",
                     "_lora_job_dataset_file"], lora_job_dataset=entries)
    assert "dataset" not in found["_lora_job_spec"] and found["_lora_job_dataset_file"] == ""
    assert found["_lora_job_spec"]["datasets"] == [entries[0], {"name": "a", "file": DATA + "a.jsonl", "formatting": "sharegpt",
                                                                "columns": {"messages": "messages"}}, entries[2]]
    assert found["_lora_job_dataset_copies"] == [{"variable": "lora_job_dataset[1] (a).src", "src": "/ctl/a.jsonl",
                                                  "dest": DATA + "a.jsonl", "dataset": CHATS}]
    assert found["_lora_job_dataset_src_files"] == {"lora_job_dataset[1] (a).src": {"path": "/ctl/a.jsonl", "dataset": CHATS, "kind": "file"}}
    host_file = {"path": "/srv/f.json", "dataset": entries[2], "kind": "file"}
    assert found["_lora_job_dataset_host_files"] == {"lora_job_dataset[2] (f).file": host_file}

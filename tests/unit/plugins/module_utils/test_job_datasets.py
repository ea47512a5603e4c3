# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tables for lora_job_dataset, one mapping or a list of data sets (plugins/module_utils/job_datasets.py)."""

import json

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import job_datasets as jd
from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs as si

ON_CONTROLLER = {"/ctl/a.jsonl", "/ctl/b.jsonl", "/other/a.jsonl"}
A = {"name": "a", "src": "/ctl/a.jsonl", "formatting": "sharegpt"}
B = {"name": "b", "src": "/ctl/b.jsonl"}


def problems(value, dataset_src=""):
    return jd.problems(value, dataset_src, is_file=lambda path: path in ON_CONTROLLER)


@pytest.mark.parametrize("value, dataset_src", [
    ({"name": "tiny_alpaca"}, "/ctl/a.jsonl"),                      # the single mapping as it always was
    ({"name": "x", "hf_hub_url": "org/x", "split": "train"}, ""),
    ({"name": "x", "file": "/srv/x.json", "formatting": "sharegpt"}, ""),
    ({"name": "x", "file": "/srv/x.json", "hf_hub_url": "org/x"}, ""),  # a single mapping's host file wins, as before
    ([A, B], ""),
    ([A, {"name": "c", "file": "/srv/c.json"}, {"name": "d", "hf_hub_url": "org/d"}, {"name": "e", "ms_hub_url": "org/e"}], ""),
])
def test_accepted(value, dataset_src):
    assert problems(value, dataset_src) == []


@pytest.mark.parametrize("value, dataset_src, expected", [
    ("tiny_alpaca", "", ['lora_job_dataset must be a dict (a YAML mapping: name and file, hf_hub_url, ms_hub_url or '
                         'lora_job_dataset_src) or a list of such dicts (each with its own src instead of lora_job_dataset_src), '
                         'got the string "tiny_alpaca".']),
    ([], "", ["lora_job_dataset is an empty list: name at least one data set."]),
    ({"formatting": "sharegpt"}, "/ctl/a.jsonl", ["lora_job_dataset needs a name (its entry in dataset_info.json)."]),
    ({"name": "x"}, "", ["lora_job_dataset needs one of file / hf_hub_url / ms_hub_url, or lora_job_dataset_src."]),
    ({"name": "a,b"}, "/ctl/a.jsonl", ['lora_job_dataset name "a,b" contains \',\', which LLaMA-Factory reads as two data sets: '
                                       'choose a name without one.']),
    ({"name": "x", "src": "/ctl/a.jsonl"}, "", ["lora_job_dataset: src names a controller file in an entry of a list of data sets; "
                                                "for a single mapping set lora_job_dataset_src instead."]),
    ({"name": "x", "hf_hub_url": "o/x", "formatting": "openai"}, "",
     ['lora_job_dataset: formatting must be one of alpaca, sharegpt, got "openai".']),
    ([A, {"name": "a", "hf_hub_url": "org/a"}], "",
     ['lora_job_dataset[0] (a) and lora_job_dataset[1] (a) have the name "a": each data set needs a name of its own.']),
    ([A, {"name": "a,b", "hf_hub_url": "org/x"}], "",
     ["lora_job_dataset[1] (a,b): the name contains ',', which LLaMA-Factory reads as two data sets: choose a name without one."]),
    ([A, {"name": "b"}], "", ["lora_job_dataset[1] (b) needs exactly one of file, hf_hub_url, ms_hub_url, src, got none."]),
    ([{"name": "a", "file": "/srv/a.json", "src": "/ctl/a.jsonl"}], "",
     ["lora_job_dataset[0] (a) needs exactly one of file, hf_hub_url, ms_hub_url, src, got file and src."]),
    ([A, {"name": "b", "src": "/ctl/missing.jsonl"}], "",
     ['lora_job_dataset[1] (b): src "/ctl/missing.jsonl" is not a file on the controller: name an existing file.']),
    ([{"name": "a", "file": "data/a.json"}], "",
     ['lora_job_dataset[0] (a): file "data/a.json" must be an absolute path on the host (a controller file goes in src).']),
    ([A, {"name": "c", "src": "/other/a.jsonl"}], "",
     ['lora_job_dataset[0] (a) and lora_job_dataset[1] (c) have a src file named "a.jsonl": both would be copied to the job\'s '
      'data/a.jsonl; rename one.']),
    ([A, "b"], "", ['lora_job_dataset[1] must be a mapping (name and one of file, hf_hub_url, ms_hub_url, src), got the string "b".']),
    ([{"src": "/ctl/a.jsonl"}], "", ["lora_job_dataset[0] needs a name (its entry in dataset_info.json)."]),
    ([A, B], "/ctl/a.jsonl", ["lora_job_dataset_src (/ctl/a.jsonl) goes with a single lora_job_dataset mapping; with a list, give "
                              "the entry its own src."]),
])
def test_refused(value, dataset_src, expected):
    assert problems(value, dataset_src) == expected


def test_every_problem_at_once():
    found = problems([{"name": "a"}, {"name": "a", "hf_hub_url": "o/a", "file": "/a.json"}, 3])
    assert [p.split(" ")[0] for p in found] == ["lora_job_dataset[0]", "lora_job_dataset[1]", "lora_job_dataset[2]", "lora_job_dataset[0]"]


def test_site_problems_checks_lora_job_dataset_and_reads_each_entry_in_its_formatting(tmp_path):
    chats, alpaca = tmp_path / "a.jsonl", tmp_path / "b.json"
    chats.write_text(json.dumps({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}) + "\n")
    alpaca.write_text(json.dumps([{"conversations": []}]))
    entries = [{"name": "a", "src": str(chats), "formatting": "sharegpt"}, {"name": "b", "src": str(alpaca)}]
    checks = {"job_datasets": {"value": entries, "dataset_src": ""},
              "datasets": {"lora_job_dataset[0] (a).src": {"path": str(chats), "dataset": entries[0]},
                           "lora_job_dataset[1] (b).src": {"path": str(alpaca), "dataset": entries[1]}}}
    found = si.site_problems(checks)
    assert len(found) == 1 and found[0].startswith("lora_job_dataset[1] (b).src (%s) is in ShareGPT shape" % alpaca)
    assert si.site_problems({"job_datasets": {"value": entries + [{"name": "a", "hf_hub_url": "o/a"}]}}) == [
        'lora_job_dataset[0] (a) and lora_job_dataset[2] (a) have the name "a": each data set needs a name of its own.']


def test_a_missing_host_file_of_an_entry_points_at_its_src():
    entries = {"lora_job_dataset[1] (b).file": {"path": "/srv/b.json", "kind": "file", "dataset": {"name": "b"}}}
    assert si.file_problems(entries, {}) == ["lora_job_dataset[1] (b).file '/srv/b.json' is not a file on this host: copy it "
                                             "there, or name it on the controller with the entry's src."]


JOB = "/var/lib/radeonlab/lora/job"


@pytest.mark.parametrize("value, dataset_src, file, spec, copied", [
    ({"name": "x", "hf_hub_url": "o/x", "split": "train"}, "", "", {"dataset": {"name": "x", "hf_hub_url": "o/x", "split": "train"}}, []),
    ({"name": "t", "hf_hub_url": "o/t", "formatting": "sharegpt"}, "/ctl/t.json", JOB + "/data/t.json",
     {"dataset": {"name": "t", "formatting": "sharegpt", "file": JOB + "/data/t.json"}}, [("lora_job_dataset_src", "/ctl/t.json")]),
    ({"name": "y", "file": "/srv/y.json", "ms_hub_url": "o/y"}, "", "/srv/y.json", {"dataset": {"name": "y", "file": "/srv/y.json"}}, []),
    ([A, {"name": "h", "hf_hub_url": "o/h"}], "", "",
     {"datasets": [{"name": "a", "formatting": "sharegpt", "file": JOB + "/data/a.jsonl"}, {"name": "h", "hf_hub_url": "o/h"}]},
     [("lora_job_dataset[0] (a).src", "/ctl/a.jsonl")]),
    ("tiny", "", "", {"datasets": []}, []),
    ([3, B], "", "", {"datasets": [{"name": "b", "file": JOB + "/data/b.jsonl"}]}, [("lora_job_dataset[1] (b).src", "/ctl/b.jsonl")]),
])
def test_plan_writes_the_spec_and_lists_the_copies(value, dataset_src, file, spec, copied):
    found = jd.plan(value, dataset_src, JOB + "/")
    assert (found["file"], found["spec"]) == (file, spec)
    assert [(copy["variable"], copy["src"]) for copy in found["copies"]] == copied
    assert sorted(found["src_files"]) == sorted(pair[0] for pair in copied)


def test_plan_lists_the_host_files_of_a_list_for_the_preflight():
    entries = [{"name": "f", "file": "/srv/f.json", "formatting": "sharegpt"}, A]
    found = jd.plan(entries, "", JOB)
    assert found["host_files"] == {"lora_job_dataset[0] (f).file": {"path": "/srv/f.json", "dataset": entries[0], "kind": "file"}}
    assert found["src_files"]["lora_job_dataset[1] (a).src"] == {"path": "/ctl/a.jsonl", "dataset": A, "kind": "file"}
    assert found["copies"][0]["dest"] == JOB + "/data/a.jsonl"

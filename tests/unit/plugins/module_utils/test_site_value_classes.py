# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tables for the value classes playbooks/validate.yml refuses before any change (issue 51): URLs without a scheme,
negative counts read as "all", divisors of 0, unknown chat templates, lora_job_extra_args keys the runner manages,
apt pin expressions, and the warning for a checkpoint interval longer than the run."""

import json

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs as si
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import LLAMAFACTORY_TEMPLATES

WEB, INDEX, GIT = ["https", "http"], ["https", "http", "file"], ["https", "http", "ssh", "git", "file"]


@pytest.mark.parametrize("entry, expected", [
    ({"variable": "lora_job_hf_endpoint", "value": "hf-mirror.com", "schemes": WEB, "optional": True},
     ["lora_job_hf_endpoint 'hf-mirror.com' has no scheme", "'https://hf-mirror.com'"]),
    ({"variable": "lora_job_hf_endpoint", "value": "", "schemes": WEB, "optional": True}, []),
    ({"variable": "lora_job_hf_endpoint", "value": "https://hf-mirror.com", "schemes": WEB, "optional": True}, []),
    ({"variable": "lora_job_hf_endpoint", "value": "ftp://hf-mirror.com", "schemes": WEB}, ["must be a https:// or http:// URL"]),
    ({"variable": "lora_job_hf_endpoint", "value": "https://", "schemes": WEB}, ["with a host"]),
    ({"variable": "llamafactory_index_url", "value": "pypi.org/simple", "schemes": INDEX}, ["'https://pypi.org/simple'"]),
    ({"variable": "llamafactory_index_url", "value": "", "schemes": INDEX}, ["llamafactory_index_url '' has no scheme"]),
    ({"variable": "llamafactory_index_url", "value": "file:///srv/simple", "schemes": INDEX}, []),
    ({"variable": "pytorch_rocm_extra_index_urls", "value": ["https://a/simple", "mirrors.aliyun.com/pypi/simple/"], "schemes": INDEX},
     ["pytorch_rocm_extra_index_urls[1] 'mirrors.aliyun.com/pypi/simple/' has no scheme"]),
    ({"variable": "pytorch_rocm_extra_index_urls", "value": [], "schemes": INDEX}, []),
    ({"variable": "llamafactory_git_url", "value": "github.com/hiyouga/LLaMA-Factory.git", "schemes": GIT, "scp": True},
     ["llamafactory_git_url 'github.com/hiyouga/LLaMA-Factory.git' has no scheme"]),
    ({"variable": "llamafactory_git_url", "value": "git@github.com:hiyouga/LLaMA-Factory.git", "schemes": GIT, "scp": True}, []),
    ({"variable": "llamafactory_git_url", "value": "ssh://git@host/r.git", "schemes": GIT, "scp": True}, []),
    ({"variable": "pytorch_rocm_wheelhouse_url", "value": "http://user:secret@10.0.0.5:8766/simple x", "schemes": INDEX},
     ["no spaces", "user:********@"]),
    ({"variable": "lora_job_mlflow_tracking_uri", "value": "user:secret@mlflow.example:5000", "schemes": WEB, "optional": True},
     ["has no scheme", "'user:********@mlflow.example:5000'", "'https://user:********@mlflow.example:5000'"]),
])
def test_url_problems(entry, expected):
    text = " ".join(si.url_problems([entry]))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text
    assert "secret" not in text


@pytest.mark.parametrize("value, refused", [(0, False), (5, False), (0.5, False), ("3", False), (-1, True), (-0.1, True),
                                            ("all", True), (True, True), (None, True)])
def test_count_problems(value, refused):
    found = si.count_problems({"lora_job_max_samples": {"value": value, "zero": "all samples"}})
    assert bool(found) == refused, found
    if refused:
        assert "lora_job_max_samples is %r" % (value,) in found[0] and "0 (all samples)" in found[0]


@pytest.mark.parametrize("value, refused", [(1, False), (15, False), ("30", False), (0, True), (-15, True), (0.5, True),
                                            ("0", True), ("", True), (False, True)])
def test_divisor_problems(value, refused):
    found = si.divisor_problems({"llamafactory_poll_interval": value})
    assert bool(found) == refused, found
    if refused:
        assert found[0].startswith("llamafactory_poll_interval must be a number greater than 0")


@pytest.mark.parametrize("pin, expected", [
    ("release o=repo.radeon.com", []),
    ("release o=repo.radeon.com,n=noble", []),
    ("release a=stable, c=main", []),
    ("release 6.4", []),
    ("version 6.4*", []),
    ("version /^1:6\\.12/", []),
    ('origin ""', []),
    ("origin repo.radeon.com", []),
    ("relase o=repo.radeon.com", ["must start with release, version or origin"]),
    ("1001", ["that is a priority"]),
    ("release o=repo.radeon.com\nPin-Priority: -1", ["control character"]),
    ("release origin=repo.radeon.com", ["not 'origin=repo.radeon.com'"]),
    ("release o=", ["not 'o='"]),
    ("release", ["release needs a value"]),
    ("", ["must start with"]),
    ("version 6.4 7.0", ["version takes one word"]),
])
def test_apt_pin_problems(pin, expected):
    text = " ".join(si.apt_pin_problems({"rocm_driver_amdgpu_pin": pin}))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text
    if expected:
        assert text.startswith("rocm_driver_amdgpu_pin %r is not an apt_preferences(5) Pin: expression" % pin)


OPTIONS = ["lora_job_template", "lora_job_lora_rank", "lora_job_max_samples"]


@pytest.mark.parametrize("extra, job, expected", [
    ({}, {}, []),
    ({"weight_decay": 0.01, "optim": "adamw_torch"}, {}, []),
    ({"template": "llama3"}, {}, ["lora_job_extra_args sets template", "template -> lora_job_template"]),
    ({"output_dir": "/tmp/x", "lora_rank": 4}, {}, ["sets lora_rank, output_dir", "remove them", "lora_rank -> lora_job_lora_rank"]),
    ({"per_device_train_batch_size": 64}, {}, ["sets per_device_train_batch_size", "sizes the batch"]),
    ({"max_samples": 10}, {"max_samples": 0}, []),
    ({"max_samples": 10}, {"max_samples": 100}, ["sets max_samples"]),
    ({"eval_steps": 10}, {"val_size": 0.05}, ["sets eval_steps"]),
    ({"eval_steps": 10}, {"val_size": 0}, []),
    ({"save_on_each_node": False}, {"distributed": True}, ["sets save_on_each_node"]),
    ("not a dict", {}, []),
])
def test_extra_args_problems(extra, job, expected):
    text = " ".join(si.extra_args_problems(extra, job, OPTIONS))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


SOURCE = '''
def register_template(name, **kwargs):
    pass

register_template(
    name="qwen",
    format_user=None,
)
register_template(name="llama3")
if False:
    register_template(name="hidden")
'''
FOUND = ["/opt/v/lib/python3.12/site-packages/llamafactory/data/template.py",
         "/opt/v/lib/python3.12/site-packages/llamafactory-0.9.4.dist-info"]


def test_template_names_reads_the_module_level_registrations():
    assert si.template_names(SOURCE) == {"qwen", "llama3"}
    assert si.template_names("def (") is None
    assert si.installed_llamafactory(FOUND) == "0.9.4"


@pytest.mark.parametrize("name, found, source, wanted, expected", [
    ("qwen", FOUND, SOURCE, "", []),
    ("qwen3", FOUND, SOURCE, "", ["'qwen3' is not a chat template of LLaMA-Factory 0.9.4 in the venv", "did you mean qwen"]),
    ("qwen3", FOUND, SOURCE, "0.9.4", ["LLaMA-Factory 0.9.4 in the venv"]),
    # the venv holds another release than the one the play installs: the recorded list of that one
    ("qwen3", FOUND, SOURCE, "0.9.5", []),
    ("qwen35", FOUND, SOURCE, "0.9.5", ["of LLaMA-Factory 0.9.5 (llamafactory_version)", "qwen3_5"]),
    ("qwen35", [], "", "0.9.5", ["'qwen35' is not a chat template", "Template qwen35 does not exist."]),
    ("Qwen", [], "", "0.9.5", ["did you mean qwen"]),
    ("", [], "", "0.9.5", ["lora_job_template '' is not"]),
    ("anything", [], "", "0.1.0", []),  # nothing recorded, nothing installed: no check
    ("anything", [], "", "", []),
])
def test_template_problems(name, found, source, wanted, expected):
    text = " ".join(si.template_problems(name, found, source, wanted))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


def test_the_recorded_templates_hold_the_defaults():
    assert {"qwen", "qwen3", "llama3", "mistral", "empty", "default"} <= set(LLAMAFACTORY_TEMPLATES["0.9.5"])


def _resume(records, **job):
    base = {"save_steps": 100, "num_train_epochs": 3, "effective_batch_size": 8, "max_samples": 0, "val_size": 0.05,
            "files": {"lora_job_dataset_src": "/data.json"}, "complete": True}
    text = json.dumps([{"instruction": "i", "output": "o"}] * records)
    return si.resume_warnings(dict(base, **job), read=lambda path: text)


@pytest.mark.parametrize("records, job, expected", [
    (1000, {}, []),  # 950 train, 119 per epoch, 357 steps
    (128, {}, ["lora_job_save_steps 100 is as long as the run or longer (about 48 optimizer steps: 121 training records",
               "trains all 48 steps again", "at most 24"]),
    (128, {"save_steps": 16, "num_train_epochs": 6}, []),
    (128, {"save_steps": 16, "num_train_epochs": 6, "max_samples": 16}, ["about 12 optimizer steps"]),
    (128, {"save_steps": 16, "num_train_epochs": 6, "effective_batch_size": 128}, ["about 6 optimizer steps"]),
    (128, {"val_size": 28}, ["100 training records"]),
    (128, {"complete": False}, []),  # a hub or host data set: its records are not known here
    (128, {"files": {}}, []),
])
def test_resume_warnings(records, job, expected):
    text = " ".join(_resume(records, **job))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


def test_resume_warnings_leave_an_unreadable_file_to_the_data_set_check():
    def broken(path):
        raise OSError(2, "No such file: %s" % path)
    assert si.resume_warnings({"save_steps": 100, "files": {"x": "/nope"}, "complete": True, "num_train_epochs": 1,
                               "effective_batch_size": 8}, read=broken) == []


def test_site_problems_runs_the_classes_and_keeps_warnings_apart():
    checks = {"urls": [{"variable": "lora_job_hf_endpoint", "value": "hf-mirror.com", "schemes": WEB}],
              "divisors": {"llamafactory_poll_interval": 0},
              "counts": {"lora_job_max_samples": {"value": -1, "zero": "all samples"}},
              "apt_pins": {"rocm_driver_amdgpu_pin": "1001"},
              "extra_args": {"value": {"template": "x"}, "job": {}, "options": OPTIONS},
              "template": {"name": "qwen35", "wanted": "0.9.5"}}
    found = si.site_problems(checks)
    assert [p.split(" ")[0] for p in found] == ["lora_job_hf_endpoint", "llamafactory_poll_interval", "lora_job_max_samples",
                                                "rocm_driver_amdgpu_pin", "lora_job_extra_args", "lora_job_template"]


def test_an_invalid_spec_is_not_reported_as_a_model_that_does_not_fit():
    found = si.plan_problems({"rc": 2, "stderr": "error: invalid job spec: lora.rank must be a positive integer, got 0\n",
                              "cutoff_len": 128})
    assert found[0].startswith("the LoRA job is invalid (the runner's plan, rc 2): error: invalid job spec: lora.rank")

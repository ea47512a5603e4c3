# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the radeonlab.llm.site_probe module (read-only, check mode) on this machine's own files."""

from __future__ import annotations

import json
import os
import pwd

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.radeonlab.llm.plugins.modules import site_probe


def run_module(args, capsys):
    with patch_module_args(dict(args, _ansible_check_mode=True)):
        with pytest.raises(SystemExit) as info:
            site_probe.main()
    return info.value.code, json.loads(capsys.readouterr().out)


def test_probe_reads_accounts_paths_and_data_sets(tmp_path, capsys):
    me = pwd.getpwuid(os.getuid()).pw_name
    good, bad = tmp_path / "alpaca.json", tmp_path / "sharegpt.json"
    good.write_text(json.dumps([{"instruction": "hi", "input": "", "output": "hello"}]))
    bad.write_text(json.dumps([{"messages": [{"role": "user", "content": "hi"}]}]))
    code, out = run_module({"users": [me, "no-such-user-here"], "paths": [str(tmp_path), str(good), "/no/such/path"],
                            "units": [], "datasets": {"a": str(good), "b": str(bad), "c": "/no/such/file.json"}}, capsys)
    assert code == 0 and out["changed"] is False
    assert list(out["accounts"]) == [me] and out["accounts"][me]["uid"] == os.getuid()
    assert out["paths"][str(tmp_path)] == {"exists": True, "isdir": True, "isfile": False}
    assert out["paths"][str(good)]["isfile"] and not out["paths"]["/no/such/path"]["exists"]
    assert len(out["dataset_problems"]) == 1 and out["dataset_problems"][0].startswith("b (") and "ShareGPT" in out["dataset_problems"][0]
    assert isinstance(out["uid_min"], int) and out["uid_max"] > out["uid_min"] and all(isinstance(p, int) for p in out["listening"])


def test_probe_reads_data_sets_in_the_formatting_given(tmp_path, capsys):
    chats = tmp_path / "chats.json"
    chats.write_text(json.dumps([{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}]))
    openai = {"formatting": "sharegpt", "columns": {"messages": "messages"},
              "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}
    code, out = run_module({"datasets": {"lora_job_dataset.file": str(chats)}, "dataset": openai}, capsys)
    assert code == 0 and out["dataset_problems"] == []
    code, out = run_module({"datasets": {"lora_job_dataset.file": str(chats)}, "dataset": {"formatting": "sharegpt"}}, capsys)
    assert code == 0 and len(out["dataset_problems"]) == 1 and 'no list of messages in "conversations"' in out["dataset_problems"][0]


def test_probe_reads_each_data_set_of_a_list_in_its_own_formatting(tmp_path, capsys):
    chats, alpaca = tmp_path / "chats.jsonl", tmp_path / "alpaca.json"
    chats.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    alpaca.write_text(json.dumps([{"instruction": "hi", "input": "", "output": "hello"}]))
    openai = {"name": "a", "formatting": "sharegpt", "columns": {"messages": "messages"},
              "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}
    datasets = {"lora_job_dataset[0] (a).file": {"path": str(chats), "dataset": openai},
                "lora_job_dataset[1] (b).file": {"path": str(alpaca), "dataset": {"name": "b"}}}
    code, out = run_module({"datasets": datasets, "dataset": {"formatting": "sharegpt"}}, capsys)
    assert code == 0 and out["dataset_problems"] == []
    datasets["lora_job_dataset[1] (b).file"]["dataset"] = {"name": "b", "formatting": "sharegpt"}
    code, out = run_module({"datasets": datasets}, capsys)
    assert code == 0 and len(out["dataset_problems"]) == 1 and out["dataset_problems"][0].startswith("lora_job_dataset[1] (b).file (")


@pytest.mark.parametrize("text, expected", [("UID_MIN 500\n", 500), ("# UID_MIN 10\n  UID_MIN\t 2000\n", 2000), ("", 1000)])
def test_uid_min(text, expected):
    assert site_probe.uid_min(text) == expected

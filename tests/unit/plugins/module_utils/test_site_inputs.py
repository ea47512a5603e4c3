# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tables for the checks behind playbooks/validate.yml (plugins/module_utils/site_inputs.py)."""

import json
import os

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs as si

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "openpgp")
KEY = open(os.path.join(FIXTURES, "test_key.asc"), encoding="utf-8").read()
FPR = open(os.path.join(FIXTURES, "test_key.fingerprint"), encoding="utf-8").read().strip()
OPTIONS = {"gpu_groups_users": {"type": "list", "elements": "str"}, "lora_job_dataset": {"type": "dict"},
           "lora_job_name": {"type": "str"}}


@pytest.mark.parametrize("values, expected", [
    ({"gpu_groups_users": "trainer"}, ["gpu_groups_users must be a list, got the string 'trainer'", '["trainer"]']),
    ({"gpu_groups_users": "a,b"}, ['["a", "b"]']),
    ({"lora_job_dataset": "tiny"}, ["lora_job_dataset must be a dict"]),
    ({"gpu_groups_users": ["trainer"], "lora_job_dataset": {"name": "x"}, "lora_job_name": "job"}, []),
    ({"unknown_var": "x"}, []),
])
def test_type_problems(values, expected):
    text = " ".join(si.type_problems(OPTIONS, values))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


@pytest.mark.parametrize("path, ok", [
    ("/opt/radeonlab/venv", True), ("/opt/radeon-lab_2/v.env+x@y", True), ("/opt/my venv", False),
    ("/opt/venv;rm -rf /", False), ("opt/venv", False), ("/opt/../etc", False), ("/opt/$HOME", False), ("/opt/'q'", False),
])
def test_path_problems(path, ok):
    assert (si.path_problems({"pytorch_rocm_venv": path}) == []) == ok


@pytest.mark.parametrize("value, ok", [(1, True), ("8", True), (0.5, True), (0, False), (-3, False), ("x", False),
                                       (None, False), (True, False)])
def test_positive_problems(value, ok):
    assert (si.positive_problems({"lora_job_lora_rank": value}) == []) == ok


@pytest.mark.parametrize("value, quoted", [
    ("plain", '"plain"'), ('a"b', '"a\\"b"'), ("back\\slash", '"back\\\\slash"'), ("$HOME", '"\\$HOME"'),
    ("tick`", '"tick\\`"'), ("trailing  ", '"trailing  "'), ("it's", '"it\'s"'),
])
def test_systemd_env_quote(value, quoted):
    assert si.systemd_env_quote(value) == quoted


@pytest.mark.parametrize("value, redacted", [
    ("http://127.0.0.1:8767/", "http://127.0.0.1:8767/"),
    ("https://ci:s3cret@mirror.example/simple", "https://ci:********@mirror.example/simple"),
    ("http://u:p%40ss@proxy:3128", "http://u:********@proxy:3128"),
    ("https://ghp_token@mirror.example/", "https://********@mirror.example/"),  # a token as the user
    ("--proxy=http://a:b@p:1 --index-url https://c:d@i/simple", "--proxy=http://a:********@p:1 --index-url https://c:********@i/simple"),
    ("pip's say: user:pass@host without a scheme", "pip's say: user:pass@host without a scheme"),
])
def test_redact_url(value, redacted):
    assert si.redact_url(value) == redacted


def test_secret_with_a_newline_is_refused_and_not_echoed():
    problems = si.secret_problems({"llamafactory_webui_auth_password": "secret\nvalue", "lora_job_hf_token": "hf_ok"})
    assert len(problems) == 1 and "llamafactory_webui_auth_password" in problems[0] and "secret" not in problems[0]


ACCOUNTS = {"trainer": {"uid": 1000}, "root": {"uid": 0}, "daemon": {"uid": 1}, "nobody": {"uid": 65534}}


@pytest.mark.parametrize("users, create, unprivileged, expected", [
    ({"pytorch_rocm_user": "trainer"}, [], True, []),
    ({"pytorch_rocm_user": "newbie"}, ["newbie"], True, []),
    ({"pytorch_rocm_user": "newbie"}, [], True, ["does not exist", "radeonlab_training_user_create"]),
    ({"lora_job_user": "root"}, ["root"], True, ["root (uid 0)"]),
    ({"lora_job_user": "daemon"}, [], True, ["system account (uid 1 outside UID_MIN..UID_MAX 1000..60000)"]),
    ({"lora_job_user": "nobody"}, [], True, ["system account (uid 65534"]),
    ({"gpu_groups_users": ["trainer", "daemon"]}, [], False, []),
    ({"gpu_groups_users": ["ghost"]}, [], False, ["gpu_groups_users: user 'ghost' does not exist"]),
    ({"gpu_groups_users": ["Bad Name"]}, [], False, ["is not a user name"]),
])
def test_user_problems(users, create, unprivileged, expected):
    text = " ".join(si.user_problems(users, ACCOUNTS, 1000, create, unprivileged))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


def test_openpgp_fingerprint_matches_gnupg():
    assert si.openpgp_fingerprints(KEY) == [FPR]
    assert si.key_problems(KEY, " ".join(FPR[i:i + 4] for i in range(0, 40, 4)).lower(), "http://m/k") == []


@pytest.mark.parametrize("content, pinned, expected", [
    (KEY, "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C", "rocm_repo_key_fingerprint pins CA8BB472"),
    ("<html>not found</html>", FPR, "not an ASCII-armored OpenPGP public key"),
    (KEY + "\n" + KEY, FPR, "holds 2 primary keys"),
    (KEY.replace(KEY.splitlines()[3], KEY.splitlines()[3][:10]), FPR, "rocm_repo_key_url http://m/k"),
])
def test_key_problems(content, pinned, expected):
    problems = si.key_problems(content, pinned, "http://m/k")
    assert len(problems) == 1 and expected in problems[0], problems


ALPACA = [{"instruction": "Say hi", "input": "", "output": "hi"}]


@pytest.mark.parametrize("text, expected", [
    (json.dumps(ALPACA), None),
    ("\n".join(json.dumps(r) for r in ALPACA * 2), None),
    (json.dumps([{"conversations": [{"from": "human", "value": "hi"}]}]), "ShareGPT shape"),
    (json.dumps([{"question": "q", "answer": "a"}]), "record 0 is not an alpaca record"),
    (json.dumps([]), "holds no records"),
    ("{not json", "is not JSON"),
    (json.dumps({"instruction": "x"}) + "\n[", "is not JSON"),
])
def test_dataset_problems(text, expected):
    problems = si.dataset_problems("lora_job_dataset_src", text, "/d.json")
    assert (problems == []) if expected is None else (expected in problems[0] and "lora_job_dataset_src" in problems[0])


SHAREGPT = {"formatting": "sharegpt"}
OPENAI = {"formatting": "sharegpt", "columns": {"messages": "messages"},
          "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}
TURNS = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]


@pytest.mark.parametrize("dataset, records, expected", [
    (SHAREGPT, [{"conversations": TURNS}], None),
    (SHAREGPT, [{"conversations": [{"from": "system", "value": "be brief"}] + TURNS * 2}], None),
    (SHAREGPT, [{"conversations": TURNS + [{"from": "observation", "value": "42"}, {"from": "gpt", "value": "it is 42"}]}], None),
    (OPENAI, [{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}], None),
    (SHAREGPT, [{"messages": [{"role": "user", "content": "hi"}]}], "has no list of messages in \"conversations\""),
    (SHAREGPT, [{"conversations": [{"role": "user", "content": "hi"}]}], "every message needs string \"from\" and \"value\""),
    (SHAREGPT, [{"conversations": [TURNS[1], TURNS[0]]}], "message 0 is from 'gpt' where a user turn is due"),
    (SHAREGPT, [{"conversations": TURNS[:1]}], "ends without an answer (1 turns"),
    (SHAREGPT, [{"conversations": [{"from": "system", "value": "s"}]}], "ends without an answer (0 turns"),
    (SHAREGPT, [{"conversations": TURNS}, {"conversations": []}], "record 1 has no list of messages"),
    (SHAREGPT, [ALPACA[0]], "record 0 has no list of messages"),
    (SHAREGPT, [], "holds no records: it must be a JSON list of sharegpt records"),
    ({"formatting": "alpaca"}, [{"conversations": TURNS}], "set its formatting: sharegpt"),
    ("not a mapping", ALPACA, None),
])
def test_sharegpt_dataset_problems(dataset, records, expected):
    problems = si.dataset_problems("lora_job_dataset_src", json.dumps(records), "/d.json", dataset)
    assert (problems == []) if expected is None else (len(problems) == 1 and expected in problems[0]), problems


PROC_NET_TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:223D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1EB4 0100007F:A2B4 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   0: 00000000000000000000000000000000:1EB5 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  0 0 3"""


def test_listening_ports_and_port_problems():
    listening = si.listening_ports(PROC_NET_TCP)
    assert listening == [7861, 8765]  # 0x1EB4 (7860) is an established connection, not a listener
    assert si.port_problems("llamafactory_webui_port", 7860, listening, False) == []
    assert "port 8765 is already in use" in si.port_problems("llamafactory_webui_port", "8765", listening, False)[0]
    assert si.port_problems("llamafactory_webui_port", 7861, listening, True) == []  # the play's own WebUI holds it


@pytest.mark.parametrize("rocm, torch, expected", [
    ("6.4", "", None), ("6.4", "2.8", None), ("6.2", "2.9.1", "no stable PyTorch wheels"),
    ("7.1", "", None), ("7.0", "2.11", "no ROCm 7.0 wheel index"), ("9.9", "", "no PyTorch ROCm wheel index"),
])
def test_torch_problems(rocm, torch, expected):
    problems = si.torch_problems(rocm, torch)
    assert (problems == []) if expected is None else (expected in problems[0] and "pytorch_rocm_torch_version" in problems[0])


def test_torch_problems_nightly_only_line(monkeypatch):
    # no recorded line is nightly-only since issue 21 (7.1 has stable rows); the check stays for such a line
    monkeypatch.setattr(si, "torch_for", lambda rocm, torch: {"torch": None, "index_tag": "nightly/rocm9.9"})
    assert "only a nightly" in si.torch_problems("9.9", "")[0]


LOOPBACK = r"^(127\.\d+\.\d+\.\d+|::1|localhost)$"


@pytest.mark.parametrize("webui, expected", [
    ({"enabled": True, "bind": "127.0.0.1", "port": 7860}, None),
    ({"enabled": False, "bind": "0.0.0.0", "port": 1}, None),
    ({"enabled": True, "bind": "0.0.0.0", "port": 7860}, "exposes the WebUI beyond loopback without a login"),
    ({"enabled": True, "bind": "0.0.0.0", "port": 7860, "user": "u", "password": "long enough pw"}, None),
    ({"enabled": True, "bind": "127.0.0.1", "port": 7860, "user": "u", "password": "short"}, "at least 12 characters"),
    ({"enabled": True, "bind": "127.0.0.1", "port": 80}, "1024-65535"),
    ({"enabled": True, "bind": "127.0.0.1", "port": 7860, "user": "a:b", "password": "long enough pw"}, "must not contain"),
])
def test_webui_problems(webui, expected):
    problems = si.webui_problems(webui, LOOPBACK)
    assert (problems == []) if expected is None else (expected in " ".join(problems))


def test_file_plan_hosts_and_site_problems():
    entries = {"lora_job_model": {"path": "/m", "kind": "dir"}, "lora_job_dataset.file": {"path": "/d.json", "kind": "file"}}
    stats = {"/m": {"exists": True, "isdir": False, "isfile": True}, "/d.json": {"exists": False, "isdir": False, "isfile": False}}
    text = " ".join(si.file_problems(entries, stats))
    assert "lora_job_model '/m' is not a directory" in text and "lora_job_dataset.file '/d.json' is not a file" in text
    assert si.plan_problems({"rc": 0}) == [] and si.plan_problems({"skipped": True}) == []
    assert "does not fit the GPU (the runner's plan): refused: 9 GiB" in si.plan_problems({"rc": 2, "stderr": "refused: 9 GiB\n",
                                                                                           "cutoff_len": 99})[0]
    checks = {"positive": {"lora_job_num_train_epochs": 0}, "datasets": {"lora_job_dataset_src": "/missing.json"},
              "key": {"status": -1, "msg": "Connection refused", "pinned": FPR, "url": "http://m/k"}, "problems": ["extra."]}
    problems = si.site_problems(checks)
    assert [p.split(" ")[0] for p in problems] == ["lora_job_num_train_epochs", "rocm_repo_key_url", "lora_job_dataset_src", "extra."]


def test_spec_options_drop_defaults():
    specs = {"argument_specs": {"main": {"options": {"a": {"type": "bool", "default": "{{ x }}"},
                                                     "b": {"type": "dict", "options": {"c": {"type": "int", "default": 1}}}}}}}
    assert si.spec_options(specs) == {"a": {"type": "bool"}, "b": {"type": "dict", "options": {"c": {"type": "int"}}}}


@pytest.mark.parametrize("trusted, urls, expected", [
    (["mirrors.aliyun.com"], ["https://mirrors.aliyun.com/pypi/simple"], ["mirrors.aliyun.com"]),
    (["Mirrors.Aliyun.com:443"], ["HTTPS://mirrors.aliyun.com/pypi/simple"], ["mirrors.aliyun.com"]),  # case, a port
    (["mirror.lan"], ["http://mirror.lan:3141/root/pypi/+simple/"], []),  # plain http may be trusted
    (["mirror.lan"], ["https://pypi.org/simple", "http://mirror.lan/simple"], []),
    (["pypi.tuna.tsinghua.edu.cn"], ["https://pypi.org/simple", "https://pypi.tuna.tsinghua.edu.cn/simple"],
     ["pypi.tuna.tsinghua.edu.cn"]),  # an extra index counts too
    ([], ["https://pypi.org/simple"], []),
    (["pypi.org"], [], []),
])
def test_https_trusted_hosts(trusted, urls, expected):
    assert si.https_trusted_hosts(trusted, urls) == expected


@pytest.mark.parametrize("entry, expected", [
    ({"role": "llamafactory", "trusted": ["mirrors.aliyun.com"], "urls": ["https://mirrors.aliyun.com/pypi/simple"]},
     "llamafactory_trusted_hosts names mirrors.aliyun.com, which llamafactory_index_url or llamafactory_extra_index_urls "
     "reach over https"),
    # pytorch_rocm without an index URL of its own: the PyTorch index of the support matrix (https)
    ({"role": "pytorch_rocm", "trusted": ["download.pytorch.org"], "urls": [""]}, "pytorch_rocm_trusted_hosts names download.pytorch.org"),
    ({"role": "pytorch_rocm", "trusted": ["mirror.lan"], "urls": ["http://mirror.lan/whl/rocm6.4"]}, None),
])
def test_trusted_problems_in_the_site_validation(entry, expected):
    problems = si.site_problems({"trusted": [entry]})
    if expected is None:
        assert problems == []
    else:
        assert len(problems) == 1 and expected in problems[0] and "--cert" in problems[0]

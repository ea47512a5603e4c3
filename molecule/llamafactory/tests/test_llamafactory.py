"""Verify radeonlab.llm.llamafactory on the lab workstations (real container state)."""
import json
import re

import pytest

VENV = "/opt/radeonlab/venv"
USER = "trainer"
UNIT = "llamafactory-webui.service"
FACTS = "/etc/ansible/facts.d/llamafactory.fact"
# host name suffix -> (WebUI port, HSA_OVERRIDE_GFX_VERSION the lab GPU needs, "" = none)
LAB = {"navi31": (7860, ""), "navi22": (7861, "10.3.0")}


@pytest.fixture(name="lab")
def fixture_lab(host):
    name = host.backend.get_hostname()
    for suffix, values in LAB.items():
        if name.endswith(suffix):
            return values
    pytest.fail("unknown lab host %s" % name)
    return None


def _show(host, prop):
    return host.check_output("systemctl show -p %s --value %s", prop, UNIT)


def _journal(host):
    return host.run("journalctl -u %s -n 40 --no-pager" % UNIT).stdout


def test_llamafactory_is_installed_in_the_venv_as_the_user(host):
    out = host.check_output("runuser -u %s -- %s/bin/python -c %s", USER, VENV,
                            "import json, importlib.metadata as m; print(json.dumps([m.version('llamafactory'), "
                            "m.version('torch'), m.version('jieba'), m.version('nltk'), m.version('rouge-chinese')]))")
    lf, torch, jieba, nltk, rouge = json.loads(out.splitlines()[-1])
    assert lf == "0.9.5"
    assert torch.split("+")[0] == "2.13.0"  # the venv's pin survived the install
    assert (jieba, nltk, rouge) == ("0.42.1", "3.10.4", "1.0.3")
    assert host.run("find %s -not -user %s -print -quit" % (VENV, USER)).stdout.strip() == ""


def test_unit_is_active_as_the_training_user(host):
    assert host.service(UNIT).is_running, _journal(host)
    assert host.service(UNIT).is_enabled
    assert _show(host, "User") == USER
    pid = _show(host, "MainPID")
    assert pid != "0"
    assert host.check_output("ps -o user= -p %s", pid).strip() == USER
    assert _show(host, "Restart") == "on-failure"


def test_unit_hardening_keeps_the_gpu_devices(host):
    assert _show(host, "NoNewPrivileges") == "yes"
    assert _show(host, "ProtectSystem") == "strict"
    assert _show(host, "PrivateTmp") == "yes"
    assert _show(host, "PrivateDevices") == "no"
    assert _show(host, "DevicePolicy") == "auto"
    assert _show(host, "DeviceAllow") == ""
    groups = [g for g in ("render", "video") if host.run("getent group %s" % g).rc == 0]
    assert groups, "neither render nor video exists"
    assert _show(host, "SupplementaryGroups").split() == groups


def test_listens_only_on_loopback(host, lab):
    port = lab[0]
    pid = _show(host, "MainPID")
    # As the unit's user: the containers lack CAP_SYS_PTRACE, so root's ss cannot name another user's sockets.
    listeners = [line.split() for line in host.check_output("runuser -u %s -- ss -Hltnp", USER).splitlines()]
    ours = [fields[3] for fields in listeners if "pid=%s," % pid in fields[-1]]
    assert ours == ["127.0.0.1:%d" % port], listeners
    # nothing else claims the port on any address
    assert [f[3] for f in listeners if f[3].endswith(":%d" % port)] == ["127.0.0.1:%d" % port]


def test_page_answers_http_200(host, lab):
    code = host.check_output(
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:%d/', timeout=30).status)\""
        % lab[0])
    assert code == "200", _journal(host)


def test_environment_carries_the_override_and_no_telemetry(host, lab):
    env = dict(item.split("=", 1) for item in re.findall(r'(?:"([^"]*)"|(\S+))', _show(host, "Environment"))
               for item in [item[0] or item[1]])
    assert env.get("HSA_OVERRIDE_GFX_VERSION", "") == lab[1]
    assert env["GRADIO_SERVER_NAME"] == "127.0.0.1"
    assert env["GRADIO_SERVER_PORT"] == str(lab[0])
    assert env["GRADIO_ANALYTICS_ENABLED"] == "False"
    assert env["GRADIO_SHARE"] == "False"
    assert env["DISABLE_VERSION_CHECK"] == "1"
    assert env["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert "FLASH_ATTENTION_TRITON_AMD_ENABLE" not in env  # no flash_attn in the lab
    # torch 2.13 ships AOTriton 0.12b: gfx1100's kernels are native there (no experimental switch needed), gfx1030 has
    # none
    assert "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL" not in env
    # localhost only: the plain CLI, no credentials file
    assert _show(host, "ExecStart").find("llamafactory-cli webui") != -1
    assert not host.file("/etc/llamafactory/webui-auth.env").exists


def test_facts_record_version_attention_and_env(host, lab):
    facts_file = host.file(FACTS)
    assert facts_file.exists and facts_file.user == "root" and facts_file.mode == 0o644
    facts = json.loads(facts_file.content_string)
    assert facts["version"] == "0.9.5"
    assert facts["attention"]["backend"] == "sdpa"
    # sdpa on torch 2.13.0 (AOTriton 0.12b): gfx1100 on AOTriton's flash kernel (native from 0.12b, no experimental
    # switch), gfx1031 -> gfx1030 on the math kernel because AOTriton has no RDNA2 kernels
    assert facts["attention"]["env"] == {}
    assert facts["attention"]["sdpa_kernel"] == ("math" if lab[1] else "flash")
    assert ("has no AOTriton SDPA kernels for gfx1030" if lab[1] else "torch 2.13 (AOTriton 0.12b): AOTriton flash") \
        in facts["attention"]["sdpa_reason"]
    assert facts["attention"]["targets"] == (["gfx1030"] if lab[1] else ["gfx1100"])
    assert facts["env"]["llamafactory_version"] == "0.9.5"
    assert facts["env"]["pytorch_version"].startswith("2.13.0")
    assert facts["env"]["transformers_version"]
    assert facts["webui"] == {"enabled": True, "url": "http://127.0.0.1:%d/" % lab[0], "bind": "127.0.0.1",
                              "port": lab[0], "auth": False}
    local = host.ansible("setup", "filter=ansible_local", check=False)["ansible_facts"]["ansible_local"]
    assert local["llamafactory"]["attention"]["backend"] == "sdpa"


def test_bitsandbytes_is_pinned_and_its_probe_recorded_why_4bit_cannot_run_here(host):
    version = host.check_output("runuser -u %s -- %s/bin/python -c %s", USER, VENV,
                                "import importlib.metadata as m; print(m.version('bitsandbytes'))").splitlines()[-1]
    assert version == "0.50.2"
    record = json.loads(host.file(FACTS).content_string)["bitsandbytes"]
    # the lab's torch (PyPI's CUDA build) sees no GPU: the probe, not a setting, says 4-bit QLoRA cannot run, and why
    assert record["ok"] is False and "sees no GPU: no 4-bit kernel can run" in record["reason"], record
    assert record["version"] == "0.50.2"


def test_liger_kernel_is_pinned_and_its_probe_recorded_no_gpu(host):
    version = host.check_output("runuser -u %s -- %s/bin/python -c %s", USER, VENV,
                                "import importlib.metadata as m; print(m.version('liger-kernel'))").splitlines()[-1]
    assert version == "0.8.5"
    record = json.loads(host.file(FACTS).content_string)["liger_kernel"]
    # the lab's torch (PyPI's CUDA build) sees no GPU: the probe says the fused kernels cannot run here, and why
    assert record["ok"] is False and record["reason"].startswith("no GPU: torch 2.13.0"), record
    assert record["version"] == "0.8.5"

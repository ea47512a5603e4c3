"""After training (issue 15): the merged model and the API each host serves its adapter through.

- navi31 writes the merged model (`lora_job_export: merged`) and fetches it: the files are on the host and the
  controller, and the merged weights give the logits of the base model with the adapter loaded.
- Every host serves its adapter through LLaMA-Factory's OpenAI-compatible API on a port of its own; navi31 and navi22
  want the planted key, navi21igpu none (on loopback). A real request from the controller (the hosts share its loopback)
  gets the adapter's greedy answer to a sample prompt, which is the one `samples.json` recorded.
- `lora_job_serve: false` stops the API and removes its unit, config and key on every host (checked last, from the last
  host, before the faults and the two-host jobs of the next files train).
"""

import json
import os
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from test_site import (API_ENV, CONVERGE, FIRST_HOST, KEYLESS_API as KEYLESS, RESULTS, RUN_ENV, SECRETS, _converge_again, _hostname,
                       _status)

API_PORTS = {"site-navi31": 8862, "site-navi22": 8863, "site-navi21igpu": 8864}  # molecule.yml's lab_api_port
API_UNIT = "radeonlab-lora-api-tiny-alpaca.service"
API_CONFIG = "/etc/radeonlab/lora-api-tiny-alpaca.yaml"
JOB_SPEC = "/var/lib/radeonlab/lora/tiny-alpaca/job.json"
VENV_PYTHON = "/opt/radeonlab/venv/bin/python"
MERGED_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
COMPARE = r"""
import sys, torch
from transformers import AutoModelForCausalLM
from peft import PeftModel
merged, base, adapter = sys.argv[1:4]
ids = torch.arange(3, 40).unsqueeze(0)
with torch.no_grad():
    folded = AutoModelForCausalLM.from_pretrained(merged, dtype=torch.float32)(ids).logits
    plain = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    base_logits = plain(ids).logits
    adapted = PeftModel.from_pretrained(plain, adapter)(ids).logits
print((folded - adapted).abs().max().item(), (folded - base_logits).abs().max().item())
"""


def _key(host):
    return "" if _hostname(host) == KEYLESS else SECRETS["API key"]


def _api(host, path, body=None, key=None):
    request = urllib.request.Request("http://127.0.0.1:%d/v1%s" % (API_PORTS[_hostname(host)], path),
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", **({"Authorization": "Bearer " + key} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, None


@pytest.mark.only_on(FIRST_HOST)
def test_the_merged_model_is_on_the_host_and_the_controller_and_equals_base_plus_adapter(host):
    status = _status(host)
    export = status["export"]
    merged = os.path.join(status["run_dir"], "merged")
    assert export["state"] == "merged" and export["dir"] == merged, export
    assert MERGED_FILES <= set(export["files"]), export["files"]
    for name in export["files"]:
        assert host.file(os.path.join(merged, name)).is_file, name
        assert os.path.isfile(os.path.join(RESULTS, _hostname(host), "merged", name)), name
    assert host.file(merged).user == "trainer"
    spec = json.loads(host.file("/var/lib/radeonlab/lora/tiny-alpaca/job.json").content_string)
    compared = host.run("runuser -u trainer -- %s -c %s %s %s %s", VENV_PYTHON, COMPARE, merged, spec["model"], status["output_dir"])
    assert compared.rc == 0, compared.stderr[-2000:]
    to_adapter, to_base = (float(value) for value in compared.stdout.split()[-2:])
    assert to_adapter < 1e-4 < 0.1 < to_base, (to_adapter, to_base)  # folded in, and it changed the model
    with open(os.path.join(RESULTS, "report.md"), encoding="utf-8") as handle:
        assert "- merged model: %s (%d files, " % (merged, len(export["files"])) in handle.read()


def test_the_api_serves_the_adapter_and_answers_a_sample_prompt_as_the_samples_did(host):
    status = _status(host)
    adapter_answer = json.loads(host.file(os.path.join(status["run_dir"], "samples.json")).content_string)["samples"][0]
    code, reply = _api(host, "/chat/completions", {"model": "tiny-alpaca", "messages": [{"role": "user", "content": adapter_answer["prompt"]}],
                                                   "max_tokens": 64, "do_sample": False}, key=_key(host))
    assert code == 200, code
    assert reply["object"] == "chat.completion" and reply["model"] == "tiny-alpaca"
    assert reply["choices"][0]["message"]["role"] == "assistant"
    assert reply["choices"][0]["message"]["content"] == adapter_answer["adapter"] != adapter_answer["base"], (reply, adapter_answer)
    unit = host.run("systemctl show -p User -p ActiveState -p Environment %s", API_UNIT).stdout
    assert "User=trainer" in unit and "ActiveState=active" in unit and "API_VERBOSE=0" in unit, unit
    assert adapter_answer["prompt"] not in host.run("journalctl -u %s --no-pager", API_UNIT).stdout  # requests are not logged
    assert status["output_dir"] in host.file(API_CONFIG).content_string
    with open(os.path.join(RESULTS, "report.md"), encoding="utf-8") as handle:
        section = handle.read().split("\n## %s\n" % _hostname(host))[1].split("\n## ")[0]
    assert "- API: http://127.0.0.1:%d/v1, model tiny-alpaca, " % API_PORTS[_hostname(host)] in section, section


def test_the_api_wants_its_key_where_one_is_set(host):
    if _hostname(host) == KEYLESS:
        assert not host.file(API_ENV).exists
        assert _api(host, "/models")[0] == 200
        return
    key_file = host.file(API_ENV)
    assert key_file.user == "root" and key_file.mode == 0o600
    assert _api(host, "/models")[0] == 401
    assert _api(host, "/models", key=SECRETS["API key"] + "x")[0] == 401
    code, models = _api(host, "/models", key=SECRETS["API key"])
    assert code == 200 and [model["id"] for model in models["data"]] == ["tiny-alpaca"]


def _present(name, path):
    return subprocess.run(["docker", "exec", name, "test", "-e", path], check=False).returncode == 0


def _listening(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


# Issue 50: a job LLaMA-Factory would reject at start-up (a chat template it does not have) is refused before the job spec
# is written or the previous job's API is touched: the API answers the same before and after, and its unit never restarted.
@pytest.mark.only_on(FIRST_HOST)
def test_a_job_with_an_unknown_template_is_refused_while_the_previous_api_answers(host):
    name = _hostname(host)
    started = ["docker", "exec", name, "systemctl", "show", "-p", "ActiveEnterTimestampMonotonic", "--value", API_UNIT]
    before = subprocess.run(started, capture_output=True, text=True, check=True).stdout.strip()
    spec = host.file(JOB_SPEC).content_string
    assert _api(host, "/models", key=_key(host))[0] == 200, "the API did not answer before the bad job"
    run = subprocess.run(["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--tags", "lora_job",
                          "--limit", name, "-e", "lora_job_template=qwen35"],
                         capture_output=True, text=True, timeout=1200, check=False, env=RUN_ENV)
    output = run.stdout + run.stderr
    assert run.returncode != 0, output[-3000:]
    assert "lora_job_template 'qwen35' is not a chat template" in " ".join(output.split()), output[-3000:]
    assert "changed: [" not in output, output[-3000:]
    assert host.file(JOB_SPEC).content_string == spec, "the job spec was rewritten for a job that was refused"
    assert subprocess.run(started, capture_output=True, text=True, check=True).stdout.strip() == before, "the API restarted"
    status, answer = _api(host, "/chat/completions", {"model": "tiny-alpaca", "max_tokens": 4,
                                                     "messages": [{"role": "user", "content": "Say hi."}]}, key=_key(host))
    assert status == 200 and answer["choices"], answer


# On the last host testinfra visits (checks run host by host), after every host's API checks above; the run retires the
# API on every host, so the faults and the two-host jobs of the next files train without three idle APIs holding memory.
@pytest.mark.only_on(FIRST_HOST)
@pytest.mark.full_only  # a lora_job replay on every host (159 s of make test): make test-full
def test_serving_off_stops_the_api_and_removes_its_unit_config_and_key_on_every_host(host):
    served = {name: subprocess.run(["docker", "exec", name, "systemctl", "is-active", "--quiet", API_UNIT], check=False).returncode == 0
              for name in API_PORTS}
    assert all(served.values()), served
    rc, output = _converge_again("--tags", "lora_job", "-e", "radeonlab_torch_without_hip=true", "-e", "lora_job_serve=false")
    assert rc == 0, output[-3000:]
    left = {name: [path for path in (API_ENV, API_CONFIG, "/etc/systemd/system/" + API_UNIT) if _present(name, path)]
            for name in API_PORTS}
    assert not any(left.values()), left
    assert not [port for port in API_PORTS.values() if _listening(port)]
    leaked = SECRETS["API key"] in output
    assert not leaked, "the API key is in the output of the run"

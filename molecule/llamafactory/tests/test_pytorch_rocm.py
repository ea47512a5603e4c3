"""Verify radeonlab.llm.pytorch_rocm on the lab workstations (real container state), in the llamafactory scenario."""
import json
import os
import pathlib
import shlex
import urllib.parse

import pytest

VENV = "/opt/radeonlab/venv"
USER = "trainer"
FACTS = "/etc/ansible/facts.d/pytorch_rocm.fact"
WANTED = {"torch": "2.13.0", "torchvision": "0.28.0", "torchaudio": "2.11.0"}

PROJECT = pathlib.Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", pathlib.Path(__file__).resolve().parents[3]))
EPHEMERAL = pathlib.Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))
ACCESS_LOG = PROJECT / ".cache" / "wheelhouse.serve" / "access.log"
# the scenario's wheelhouse URL tags its requests; other scenarios may share the server
TAG = "/~%s/" % os.environ.get("MOLECULE_SCENARIO_NAME", "llamafactory")
# molecule.yml: navi22 gets its wheels pushed (pytorch_rocm_wheelhouse_delivery: push), navi31 over HTTP
PUSHED = "/var/cache/radeonlab/wheelhouse"
PAGES = ["llamafactory.html", "pytorch_rocm.html"]


def _pushed(host):
    return host.backend.get_hostname().endswith("navi22")


def _as_trainer(host, *argv):
    cmd = host.run("runuser -u %s -- %s" % (USER, " ".join(shlex.quote(a) for a in argv)))
    assert cmd.rc == 0, cmd.stderr
    return cmd.stdout


def test_venv_belongs_to_the_training_user(host):
    venv = host.file(VENV)
    assert venv.is_directory
    assert venv.user == USER
    assert host.file(VENV + "/bin/python").exists
    assert host.file(VENV + "/lib/python3.11/site-packages/torch").is_directory
    # nothing in the venv belongs to root (a sudo pip would leave such files)
    assert host.run("find %s -not -user %s -print -quit" % (VENV, USER)).stdout.strip() == ""


def test_python_is_at_least_3_11(host):
    out = _as_trainer(host, VENV + "/bin/python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
    assert tuple(int(p) for p in out.strip().split(".")) >= (3, 11)


def test_torch_imports_as_the_training_user(host):
    out = _as_trainer(host, VENV + "/bin/python", "-c",
                      "import json, torch, torchvision, torchaudio; "
                      "print(json.dumps([torch.__version__, torchvision.__version__, torchaudio.__version__, "
                      "torch.version.hip, (torch.ones(2, 2) @ torch.ones(2, 2)).sum().item()]))")
    torch_v, vision_v, audio_v, hip, total = json.loads(out.strip().splitlines()[-1])
    assert torch_v.split("+")[0] == WANTED["torch"]
    assert vision_v.split("+")[0] == WANTED["torchvision"]
    assert audio_v.split("+")[0] == WANTED["torchaudio"]
    assert hip is None  # lab stand-in: PyPI's CUDA build
    assert total == 8.0


def test_venv_pins_the_wheels(host):
    conf = host.file(VENV + "/pip.conf")
    assert conf.exists and conf.user == USER
    assert "constraint = %s/radeonlab-constraints.txt" % VENV in conf.content_string
    constraints = host.file(VENV + "/radeonlab-constraints.txt").content_string
    for name, version in WANTED.items():
        assert "%s==%s\n" % (name, version) in constraints


def test_facts_file_records_the_verification(host):
    facts_file = host.file(FACTS)
    assert facts_file.exists and facts_file.user == "root" and facts_file.mode == 0o644
    facts = json.loads(facts_file.content_string)
    assert facts["torch"].split("+")[0] == WANTED["torch"]
    assert facts["venv"] == VENV and facts["user"] == USER
    assert facts["hip"] is None and facts["device_count"] == 0 and facts["devices"] == []
    assert facts["cpu_matmul_ok"] is True and facts["ok"] is True
    assert facts["gpu_required"] is False
    assert facts["source"] == ("file://%s/pytorch_rocm.html" % PUSHED if _pushed(host) else "http://127.0.0.1:8768" + TAG)
    assert facts["python"].startswith("3.11")


def test_ansible_sees_the_local_facts(host):
    local = host.ansible("setup", "filter=ansible_local", check=False)["ansible_facts"]["ansible_local"]
    assert local["pytorch_rocm"]["torch"].split("+")[0] == WANTED["torch"]


def _log_lines():
    return ACCESS_LOG.read_text(encoding="utf-8").splitlines()


def _mark(name):
    path = pathlib.Path("%s.%s" % (EPHEMERAL / "wheelhouse-log", name))
    if not path.is_file():
        pytest.fail("no %s mark (run through `molecule test`, which runs prepare and converge)" % path.name)
    return int(path.read_text().strip())


def _wheel_gets(lines):
    """This scenario's wheel downloads: GET /~<scenario>/<name>.whl"""
    return [line for line in lines
            if line.split()[2] == "GET" and line.split()[3].startswith(TAG) and line.split()[3].endswith(".whl")]


def test_hosts_installed_from_the_wheelhouse():
    lines = _log_lines()
    first_converge = lines[_mark("prepare"):_mark("converge")]
    torch_gets = [line for line in _wheel_gets(first_converge)
                  if line.split()[3].startswith(TAG + "torch-") and line.split()[4] == "200"]
    # one full torch wheel for navi31 (navi22's wheels were pushed, not fetched)
    assert len(torch_gets) >= 1, first_converge[-20:]


def test_the_pushed_host_holds_its_wheel_set_and_no_records(host):
    listing = host.run("ls -1A %s" % PUSHED)
    if not _pushed(host):
        assert listing.rc != 0  # served over HTTP: nothing pushed
        return
    names = listing.stdout.split()
    for name in WANTED:
        assert [n for n in names if n.startswith("%s-%s" % (name, WANTED[name])) and n.endswith(".whl")], names
    # wheels and the link page of each role that pushed (pytorch_rocm, then llamafactory): no .radeonlab records or logs
    assert sorted(n for n in names if not n.endswith(".whl")) == PAGES, names
    # every pushed wheel is linked with the sha256 recorded at download, and its bytes on the host match it
    page = "".join(host.file("%s/%s" % (PUSHED, name)).content_string for name in PAGES)
    for name in (n for n in names if n.endswith(".whl")):
        digest = host.run("sha256sum %s/%s" % (PUSHED, name)).stdout.split()[0]
        assert "%s#sha256=%s" % (urllib.parse.quote(name), digest) in page, name
    wheel = host.file("%s/%s" % (PUSHED, [n for n in names if n.startswith("torch-")][0]))
    assert wheel.user == "root" and wheel.mode == 0o644


def test_second_converge_downloaded_nothing():
    lines = _log_lines()
    after = lines[_mark("converge"):]
    assert _wheel_gets(after) == [], after

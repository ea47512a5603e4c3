# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The push delivery's link page (roles/venv_pip/tasks/push.yml, rendered here from the task itself) and the
host's pip command line: pip installs the pushed wheel, and refuses it once its bytes differ from the sha256
recorded at download, before it writes anything into the target."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import jinja2
import pytest
import yaml

ROLES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles"))
DEMO = "demo-1.0+local-py3-none-any.whl"


def _page_task():
    with open(os.path.join(ROLES, "venv_pip", "tasks", "push.yml"), encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    (task,) = [t for t in tasks if t["name"].startswith("Write the host's link page")]
    return task["ansible.builtin.copy"]


def _wheelhouse_args(url):
    """The host's pip source arguments, as pytorch_rocm's vars/main.yml builds them (--only-binary, no --trusted-host
    for file://)."""
    with open(os.path.join(ROLES, "pytorch_rocm", "vars", "main.yml"), encoding="utf-8") as handle:
        expression = yaml.safe_load(handle)["_pytorch_rocm_wheelhouse_args"]
    env = jinja2.Environment()
    env.filters["urlsplit"] = lambda value, part: getattr(__import__("urllib.parse").parse.urlsplit(value), part)
    return yaml.safe_load(env.from_string(expression).render(_pytorch_rocm_wheelhouse_url=url))


@pytest.fixture
def pushed(tmp_path, demo_wheel):
    """The host's copy after a push: the wheel and the caller's link page with the sha256 recorded at download."""
    host = tmp_path / "var-cache-radeonlab-wheelhouse"
    host.mkdir()
    demo_wheel(host / DEMO, "VALUE = 1\n", version="1.0+local")
    recorded = hashlib.sha256((host / DEMO).read_bytes()).hexdigest()
    task = _page_task()
    assert task["dest"].endswith("/{{ venv_pip_push_page }}")
    page = jinja2.Environment(autoescape=False).from_string(task["content"]).render(
        venv_pip_push_names=[DEMO], venv_pip_push_hashes={DEMO: recorded})
    (host / "index.html").write_text(page)
    return host, recorded


def _pip_install(host, target):
    argv = ([sys.executable, "-m", "pip", "--isolated", "install", "--disable-pip-version-check", "--progress-bar", "off"]
            + _wheelhouse_args("file://%s/index.html" % host) + ["--target", str(target), "demo==1.0+local"])
    return argv, subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)


def test_the_host_command_line_is_binary_only_and_hash_checked(pushed):
    host, recorded = pushed
    assert "%s#sha256=%s" % (DEMO.replace("+", "%2B"), recorded) in (host / "index.html").read_text()
    args = _wheelhouse_args("file://%s/index.html" % host)
    assert args == ["--no-index", "--only-binary=:all:", "--find-links", "file://%s/index.html" % host]
    assert "--trusted-host" not in _wheelhouse_args("https://wheels.lan/")
    assert _wheelhouse_args("http://10.0.0.2:8766/")[-2:] == ["--trusted-host", "10.0.0.2"]


def test_pip_installs_the_pushed_wheel_and_refuses_it_once_tampered(pushed, tmp_path, demo_wheel):
    host, _recorded = pushed
    _argv, ok = _pip_install(host, tmp_path / "venv-ok")
    assert ok.returncode == 0, ok.stdout
    assert (tmp_path / "venv-ok" / "demo" / "__init__.py").read_text() == "VALUE = 1\n"

    demo_wheel(host / DEMO, "VALUE = 'tampered'\n", version="1.0+local")  # same name, other bytes than the download recorded
    argv, refused = _pip_install(host, tmp_path / "venv-tampered")
    print("$ " + " ".join(argv[1:]) + "\n" + refused.stdout)
    assert refused.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in refused.stdout
    assert DEMO in refused.stdout or "demo==1.0+local" in refused.stdout
    assert not (tmp_path / "venv-tampered").exists() or not any((tmp_path / "venv-tampered").iterdir())


def _push_page_of(role):
    with open(os.path.join(ROLES, role, "tasks", "wheelhouse.yml"), encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    (block,) = [t for t in tasks if t["name"].startswith("Push this host's wheels")]
    (push,) = [t for t in block["block"] if t.get("ansible.builtin.import_role", {}).get("tasks_from") == "push"]
    return push["vars"]["venv_pip_push_page"]


def test_each_caller_has_a_page_of_its_own_in_the_one_host_copy():
    """One shared page would be rewritten by pytorch_rocm and llamafactory in turn on every run (never idempotent)."""
    pages = {role: _push_page_of(role) for role in ("pytorch_rocm", "llamafactory")}
    assert pages == {"pytorch_rocm": "pytorch_rocm.html", "llamafactory": "llamafactory.html"}

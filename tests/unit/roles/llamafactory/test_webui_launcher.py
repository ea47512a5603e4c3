# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/webui_launcher.py: refuses to serve without credentials, hides them from the UI's
children, and binds where GRADIO_SERVER_NAME says (run against a fake llamafactory package)."""

from __future__ import annotations

import json
import os

import pytest

AUTH = {"LLAMAFACTORY_WEBUI_AUTH_USER": "trainer", "LLAMAFACTORY_WEBUI_AUTH_PASSWORD": "s3cret pass"}
# llamafactory.extras.misc and llamafactory.webui.interface, reduced to what the launcher calls; launch() writes
# its arguments, fix_proxy's and the environment the UI (and every training process it spawns) would see.
MISC = """
import os
CALLS = {}
def is_env_enabled(name, default="0"):
    return os.getenv(name, default).lower() in ["true", "y", "1"]
def fix_proxy(ipv6_enabled=False):
    CALLS["fix_proxy"] = {"ipv6_enabled": ipv6_enabled}
"""
INTERFACE = """
import json, os
from llamafactory.extras.misc import CALLS
class _UI:
    def queue(self):
        return self
    def launch(self, **kwargs):
        with open(os.environ["FAKE_LF_LAUNCH"], "w") as handle:
            json.dump({"kwargs": kwargs, "calls": CALLS, "env": sorted(k for k in os.environ if k.startswith("LLAMAFACTORY_"))}, handle)
def create_ui():
    return _UI()
"""


@pytest.fixture
def launch(tmp_path, run_script):
    site = tmp_path / "site"
    for rel, text in (("llamafactory/__init__.py", ""), ("llamafactory/extras/__init__.py", ""), ("llamafactory/extras/misc.py", MISC),
                      ("llamafactory/webui/__init__.py", ""), ("llamafactory/webui/interface.py", INTERFACE)):
        os.makedirs(os.path.dirname(site / rel), exist_ok=True)
        (site / rel).write_text(text)
    record = tmp_path / "launch.json"

    def run(**env):
        proc = run_script("llamafactory", "webui_launcher.py", env=dict(env, FAKE_LF_LAUNCH=str(record)), path=[site])
        return proc, (json.loads(record.read_text()) if record.exists() else None)
    return run


@pytest.mark.parametrize("env", [
    {},
    {"LLAMAFACTORY_WEBUI_AUTH_USER": "trainer"},
    {"LLAMAFACTORY_WEBUI_AUTH_PASSWORD": "s3cret pass"},
    {"LLAMAFACTORY_WEBUI_AUTH_USER": "", "LLAMAFACTORY_WEBUI_AUTH_PASSWORD": "s3cret pass"},
    {"LLAMAFACTORY_WEBUI_AUTH_USER": "trainer", "LLAMAFACTORY_WEBUI_AUTH_PASSWORD": ""},
], ids=["none", "user-only", "password-only", "empty-user", "empty-password"])
def test_refuses_without_credentials(launch, env):
    proc, launched = launch(GRADIO_SERVER_NAME="0.0.0.0", **env)
    assert proc.returncode == 78  # EX_CONFIG
    assert "refusing to serve the WebUI without authentication" in proc.stderr
    assert launched is None


@pytest.mark.parametrize("env, server_name, ipv6", [
    ({}, "127.0.0.1", False),
    ({"GRADIO_SERVER_NAME": "0.0.0.0"}, "0.0.0.0", False),
    ({"GRADIO_SERVER_NAME": "192.168.10.5", "GRADIO_IPV6": "0"}, "192.168.10.5", False),
    ({"GRADIO_IPV6": "1"}, "[::]", True),
    ({"GRADIO_IPV6": "true", "GRADIO_SERVER_NAME": "::"}, "::", True),
], ids=["default-loopback", "all-ipv4", "one-address", "ipv6-default", "ipv6-named"])
def test_launches_with_auth(launch, env, server_name, ipv6):
    proc, launched = launch(**dict(AUTH, **env))
    assert proc.returncode == 0, proc.stderr
    assert launched["kwargs"] == {"share": False, "server_name": server_name, "inbrowser": False, "auth": ["trainer", "s3cret pass"],
                                  "auth_message": "LLaMA-Factory (radeonlab.llm)"}
    assert launched["calls"] == {"fix_proxy": {"ipv6_enabled": ipv6}}
    assert launched["env"] == []  # the credentials left the environment before the UI started

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load or run the scripts that roles ship in roles/<role>/files/ (they run on hosts, not through Ansible)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROLES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "roles"))
# The stand-in torch of the lora_job tests (knobs: FAKE_TORCH_DEVICES, FAKE_TORCH_HIP, FAKE_TORCH_VERSION, ...).
FAKE_TORCH = os.path.abspath(os.path.join(HERE, "..", "lora_job", "fake_torch"))
# Inherited variables that would change what a script sees.
_DROP = ("FAKE_", "PYTHON", "HSA_", "HIP_", "ROCR_", "CUDA_", "LLAMAFACTORY_", "GRADIO_", "FLASH_ATTENTION_", "PIP_")


def script_path(role, name):
    return os.path.join(ROLES, role, "files", name)


@pytest.fixture
def load_script():
    """Import roles/<role>/files/<name> as a fresh module (no __pycache__ beside the shipped file)."""
    def load(role, name):
        spec = importlib.util.spec_from_file_location("radeonlab_%s_%s" % (role, name[:-3]), script_path(role, name))
        module = importlib.util.module_from_spec(spec)
        saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
        try:
            spec.loader.exec_module(module)
        finally:
            sys.dont_write_bytecode = saved
        return module
    return load


@pytest.fixture
def run_script():
    """Run roles/<role>/files/<name> with this Python in a clean environment; PYTHONPATH = ``path``."""
    def run(role, name, *args, env=None, path=()):
        child = {k: v for k, v in os.environ.items() if not k.startswith(_DROP)}
        child["PYTHONDONTWRITEBYTECODE"] = "1"
        if path:
            child["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
        child.update(env or {})
        return subprocess.run([sys.executable, script_path(role, name), *args], env=child, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120, check=False)
    return run


def last_json(proc):
    """The JSON object a script prints on its last line."""
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def json_of():
    return last_json


def write_dist(site, name, version, requires=()):
    """A minimal installed distribution (``<name>-<version>.dist-info``) that importlib.metadata finds on ``site``."""
    info = os.path.join(str(site), "%s-%s.dist-info" % (name.replace("-", "_"), version))
    os.makedirs(info, exist_ok=True)
    lines = ["Metadata-Version: 2.1", "Name: %s" % name, "Version: %s" % version]
    lines += ["Requires-Dist: %s" % r for r in requires]
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


@pytest.fixture
def dist():
    return write_dist


@pytest.fixture
def fake_torch():
    return FAKE_TORCH


@pytest.fixture
def demo_wheel():
    """Write a pure-Python wheel of the package ``demo`` (module body ``body``) that pip can install offline."""
    def write(path, body, version="1.0"):
        info = "demo-%s.dist-info" % version
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("demo/__init__.py", body)
            archive.writestr(info + "/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: %s\n" % version)
            archive.writestr(info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
            archive.writestr(info + "/RECORD", "")
    return write

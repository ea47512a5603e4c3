# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""radeonlab_lora.digest: the one digest lora_job compares to decide whether a host's runner needs a copy."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from lora_cases import FILES
from radeonlab_lora import digest


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "radeonlab_lora"
    shutil.copytree(FILES + "/radeonlab_lora", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _rename(root):
    (root / "spec.py").rename(root / "spec2.py")


def _edit(root):
    (root / "spec.py").write_bytes((root / "spec.py").read_bytes() + b"\n")


def _add(root):
    (root / "extra.py").write_text("")


def _bytecode(root):
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "spec.cpython-311.pyc").write_bytes(b"\0")
    (root / "spec.pyc").write_bytes(b"\0")


@pytest.mark.parametrize("change, differs", [
    (_edit, True), (_rename, True), (_add, True), (_bytecode, False),
], ids=["edited", "renamed", "added", "bytecode-only"])
def test_digest_follows_names_and_contents_only(package, change, differs):
    before = digest.package_digest(str(package))
    change(package)
    assert (digest.package_digest(str(package)) != before) is differs


def test_a_copy_has_the_shipped_digest_and_the_module_prints_it(package):
    shipped = digest.package_digest()
    assert digest.package_digest(str(package)) == shipped
    out = subprocess.run([sys.executable, "-m", "radeonlab_lora.digest"], cwd=str(package.parent), env={"PYTHONDONTWRITEBYTECODE": "1"},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == shipped and len(shipped) == 64

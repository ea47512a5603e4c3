# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_repo's ROCm lines and driver versions are the data module's (plugins/module_utils/support_matrix.py).

The role reads them from its vars/ files at run time; this keeps those copies equal to the one data module, so
a line gpu_env knows is a line rocm_repo installs.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

VARS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rocm_repo", "vars"))


def _vars(name):
    with open(os.path.join(VARS, name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _lines_on(distribution, release):
    return [line for line in sm.RELEASE_LINES if release in (sm.RELEASES[line][distribution] or ())]


def test_known_lines_are_the_lines_with_an_apt_distribution():
    recorded = [line for line in sm.RELEASE_LINES if sm.RELEASES[line]["ubuntu"] or sm.RELEASES[line]["debian"]]
    assert _vars("main.yml")["_rocm_repo_known_lines"] == recorded
    assert "7.2" in recorded  # gpu_env knows 7.2, so rocm_repo must accept it (issue 21)


@pytest.mark.parametrize("vars_file, distribution", [("Ubuntu.yml", "ubuntu"), ("Debian.yml", "debian")])
def test_os_lines_are_the_data_modules(vars_file, distribution):
    releases = _vars(vars_file)["_rocm_repo_os_releases"]
    assert releases
    for release, entry in releases.items():
        assert entry["rocm_lines"] == _lines_on(distribution, release), (vars_file, release)


def test_driver_versions_are_the_data_modules():
    assert _vars("main.yml")["_rocm_repo_amdgpu_versions"] == sm.AMDGPU_REPO_VERSIONS
    for rocm, driver in sm.AMDGPU_REPO_VERSIONS.items():
        assert re.match(r"^7\.\d+(\.[1-9]\d*)?$", rocm), rocm  # the repository path form: no trailing .0
        assert ".".join(rocm.split(".")[:2]) in sm.RELEASES, rocm
        assert driver.startswith("30.")


def test_supported_platforms_text_names_the_newest_line():
    text = _vars("main.yml")["_rocm_repo_supported_platforms"]
    newest = _vars("main.yml")["_rocm_repo_known_lines"][-1]
    assert text.count("-%s)" % newest) + text.count("-%s;" % newest) == 3, text

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_repo's ROCm lines and driver versions come from the data module (plugins/module_utils/support_matrix.py).

The role's vars template them through the rocm_apt_lines filter, so a line added to the support matrix is a line
rocm_repo registers, on the releases AMD lists it for: nothing else to edit.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rocm_repo"))


def _render(name, distribution, vars_file):
    loader = DataLoader()
    variables = {}
    for part in ("defaults/main.yml", "vars/main.yml", "vars/" + vars_file):
        variables.update(loader.load_from_file(os.path.join(ROLE, part), trusted_as_template=True))
    variables["ansible_facts"] = {"distribution": distribution}
    return Templar(loader=loader, variables=variables).template(trust_as_template("{{ %s }}" % name))


def _lines_on(distribution, release):
    return [line for line in sm.RELEASE_LINES if release in (sm.RELEASES[line][distribution] or ())]


def test_known_lines_are_the_lines_with_an_apt_distribution():
    recorded = [line for line in sm.RELEASE_LINES if sm.RELEASES[line]["ubuntu"] or sm.RELEASES[line]["debian"]]
    assert _render("_rocm_repo_known_lines", "Ubuntu", "Ubuntu.yml") == recorded
    assert "7.2" in recorded  # gpu_env knows 7.2, so rocm_repo must accept it (issue 21)


@pytest.mark.parametrize("vars_file, distribution", [("Ubuntu.yml", "ubuntu"), ("Debian.yml", "debian")])
def test_os_lines_are_the_data_modules(vars_file, distribution):
    releases = _render("_rocm_repo_os_releases", vars_file.split(".")[0], vars_file)
    assert releases
    for release, entry in releases.items():
        assert entry["rocm_lines"] == _lines_on(distribution, release), (vars_file, release)
        assert entry["rocm_lines"], (vars_file, release)


def test_another_distribution_has_no_releases():
    assert sm.rocm_apt_lines("Fedora")["releases"] == {}
    assert sm.rocm_apt_lines("Fedora")["known_lines"] == sm.rocm_apt_lines("Ubuntu")["known_lines"]


def test_driver_versions_are_the_data_modules():
    assert _render("_rocm_repo_amdgpu_versions", "Ubuntu", "Ubuntu.yml") == sm.AMDGPU_REPO_VERSIONS
    for rocm, driver in sm.AMDGPU_REPO_VERSIONS.items():
        assert re.match(r"^7\.\d+(\.[1-9]\d*)?$", rocm), rocm  # the repository path form: no trailing .0
        assert ".".join(rocm.split(".")[:2]) in sm.RELEASES, rocm
        assert driver.startswith("30.")


def test_supported_platforms_text_names_the_newest_line():
    text = _render("_rocm_repo_supported_platforms", "Ubuntu", "Ubuntu.yml")
    newest = sm.rocm_apt_lines("Ubuntu")["known_lines"][-1]
    assert text.count("-%s)" % newest) + text.count("-%s;" % newest) == 3, text
    assert text.startswith("Ubuntu 22.04 (ROCm 6.0-"), text


def test_no_copy_of_the_lines_is_left_in_the_vars():
    for name in ("main.yml", "Ubuntu.yml", "Debian.yml"):
        with open(os.path.join(ROLE, "vars", name), encoding="utf-8") as handle:
            text = handle.read()
        assert not re.search(r'\["6\.\d"', text), name
        assert "30.10" not in yaml.safe_dump(yaml.safe_load(text)), name

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of plugins/filter/site_inputs.py and its sidecar documentation."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.radeonlab.llm.plugins.filter import site_inputs

FILTERS = site_inputs.FilterModule().filters()
HERE = os.path.dirname(site_inputs.__file__)


def test_every_filter_has_its_sidecar_documentation():
    assert set(FILTERS) == {"site_problems", "role_options", "role_file", "systemd_env_quote", "https_trusted_hosts", "redact_url"}
    for name in FILTERS:
        with open(os.path.join(HERE, name + ".yml"), encoding="utf-8") as handle:
            assert yaml.safe_load(handle)["DOCUMENTATION"]["name"] == name


def test_role_options_are_the_argument_specs_without_defaults():
    options = FILTERS["role_options"](["gpu_groups", "lora_job"])
    assert options["gpu_groups_users"] == {k: v for k, v in options["gpu_groups_users"].items() if k != "default"}
    assert options["gpu_groups_users"]["type"] == "list" and "lora_job_name" in options
    assert not any("default" in option for option in options.values())


def test_role_file_and_its_failure():
    assert FILTERS["role_file"]("lora_job", "defaults/main.yml").endswith(os.path.join("roles", "lora_job", "defaults", "main.yml"))
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm.role_file"):
        FILTERS["role_file"]("lora_job", "no/such.yml")


def test_site_problems_wants_a_dict():
    assert FILTERS["site_problems"]({"positive": {"lora_job_lora_rank": 0}})[0].startswith("lora_job_lora_rank")
    with pytest.raises(AnsibleFilterError, match="expects a dict"):
        FILTERS["site_problems"]("nope")


def test_https_trusted_hosts_filter_is_the_module_utils_check():
    assert FILTERS["https_trusted_hosts"](["mirrors.aliyun.com", "mirror.lan"],
                                          ["https://mirrors.aliyun.com/pypi/simple", "http://mirror.lan/simple"]) == ["mirrors.aliyun.com"]

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Misspelt variables (plugins/module_utils/variable_names.py) against the names playbooks/validate.yml knows.

KNOWN is built as the play builds it: every role's argument_specs (radeonlab.llm.role_options), the playbooks' own
options and the names the collection sets, from playbooks/vars/validate.yml.
"""

import pathlib

import pytest
import yaml

from ansible_collections.radeonlab.llm.plugins.filter.site_inputs import role_options
from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs, variable_names as vn

ROOT = pathlib.Path(__file__).resolve().parents[4]
VALIDATE = yaml.safe_load((ROOT / "playbooks" / "vars" / "validate.yml").read_text(encoding="utf-8"))
PREFIXES = [role + "_" for role in VALIDATE["__validate_roles"]] + ["radeonlab_"]
KNOWN = sorted(role_options(VALIDATE["__validate_roles"])) + sorted(VALIDATE["__validate_playbook_options"]) + VALIDATE["__validate_set_names"]


@pytest.mark.parametrize("names, own, expected", [
    (["rocm_driver_rebot"], (), [("rocm_driver_rebot", "rocm_driver_reboot")]),
    (["lora_job_learnig_rate"], (), [("lora_job_learnig_rate", "lora_job_learning_rate")]),
    (["gpu_groups_user"], (), [("gpu_groups_user", "gpu_groups_users")]),
    (["radeonlab_hsa_override"], (), [("radeonlab_hsa_override", "gpu_environment_hsa_override")]),
    (["rocm_driver_xyzzy"], (), [("rocm_driver_xyzzy", None)]),
    (["rocm_driver_reboot", "lora_job_learning_rate", "radeonlab_hosts", "pytorch_rocm_facts"], (), []),
    (["_rocm_driver_rebot", "__lora_job_learnig_rate"], (), []),
    (["ansible_user", "reboot", "my_rocm_driver_rebot", "rocm_drivr_reboot"], (), []),
    (["rocm_driver_mine", "lora_job_site_a", "lora_job_site_b"], ["rocm_driver_mine", "lora_job_site_*"], []),
    (["rocm_driver_mine", "rocm_driver_rebot"], "rocm_driver_mine", [("rocm_driver_rebot", "rocm_driver_reboot")]),
    (["rocm_driver_rebot", "radeonlab_own_variables"], ["*"], []),
])
def test_unknown_variables(names, own, expected):
    assert vn.unknown_variables(names, KNOWN, PREFIXES, own) == expected


def test_one_sentence_names_every_unknown_variable_and_the_opt_out():
    problems = site_inputs.site_problems({"names": {"given": ["rocm_driver_rebot", "rocm_driver_xyzzy", "rocm_driver_reboot"],
                                                    "known": KNOWN, "prefixes": PREFIXES}})
    assert len(problems) == 1
    assert "rocm_driver_rebot (did you mean rocm_driver_reboot?)" in problems[0]
    assert "rocm_driver_xyzzy (no known name is close)" in problems[0]
    assert "radeonlab_own_variables" in problems[0] and "rocm_driver_reboot (" not in problems[0]


def test_known_names_come_from_the_argument_specs():
    assert {"rocm_driver_reboot", "lora_job_learning_rate", "gpu_groups_users", "radeonlab_own_variables"} <= set(KNOWN)
    assert len(role_options(VALIDATE["__validate_roles"])) > 100


def _set_names(node):
    """The names set_fact sets and register registers in a task list, blocks included."""
    if isinstance(node, list):
        return {name for item in node for name in _set_names(item)}
    if not isinstance(node, dict):
        return set()
    names = set()
    if isinstance(node.get("ansible.builtin.set_fact"), dict):
        names |= set(node["ansible.builtin.set_fact"]) - {"cacheable"}
    if isinstance(node.get("register"), str):
        names.add(node["register"])
    if "hosts" in node and isinstance(node.get("vars"), dict):  # a play's vars (site.yml's radeonlab_torch)
        names |= set(node["vars"])
    for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
        names |= _set_names(node.get(key))
    return names


def test_every_name_the_collection_sets_is_known():
    files = sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("roles/*/handlers/*.yml")) + sorted(ROOT.glob("playbooks/**/*.yml"))
    found = set()
    for path in files:
        found |= _set_names(yaml.safe_load(path.read_text(encoding="utf-8")))
    prefixed = {name for name in found if not name.startswith("_") and any(name.startswith(prefix) for prefix in PREFIXES)}
    assert "rocm_driver_facts" in prefixed and "radeonlab_torch" in prefixed
    assert sorted(prefixed - set(KNOWN)) == [], "add them to __validate_set_names in playbooks/vars/validate.yml"


@pytest.mark.parametrize("path", sorted(ROOT.glob("inventory/*/group_vars/*.yml")), ids=lambda p: "/".join(p.parts[-3:]))
def test_the_inventories_pass(path):
    assert vn.name_problems(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, KNOWN, PREFIXES) == []

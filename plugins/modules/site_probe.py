#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: site_probe
short_description: Read what the site play must check on a host before it changes anything
version_added: 0.2.0
description:
  - One read-only round trip for C(playbooks/validate.yml) - the named accounts and C(UID_MIN), whether paths exist,
    the TCP ports in LISTEN state, the active state of systemd units, and the shape of data set files (alpaca or sharegpt records).
  - Changes nothing on the host.
options:
  users:
    description: Account names to look up in the password database.
    type: list
    elements: str
    default: []
  paths:
    description: Paths whose existence and kind (file, directory) are reported.
    type: list
    elements: path
    default: []
  units:
    description: systemd units whose C(ActiveState) is reported (C(inactive) where systemd does not know them).
    type: list
    elements: str
    default: []
  datasets:
    description:
      - Data set files, a dict of variable name to path, checked for the shape the LoRA job trains on (a JSON list or
        JSON lines; alpaca records with string C(instruction) and C(output), or sharegpt records as O(dataset) says).
        A missing file is reported under O(paths).
      - A value may also be a dict of C(path) and C(dataset), a data set read in its own description (an entry of a
        C(lora_job_dataset) list) instead of O(dataset).
    type: dict
    default: {}
  dataset:
    description:
      - The data set's description as O(datasets) are to be read (C(lora_job_dataset)) - C(formatting) (C(alpaca), the
        default, or C(sharegpt)) and, for sharegpt, C(columns) and C(tags) as in LLaMA-Factory's C(dataset_info.json).
    type: dict
    default: {}
extends_documentation_fragment:
  - radeonlab.llm.attributes
  - radeonlab.llm.attributes.info_module
author:
  - radeonlab.llm maintainers (@radeonlab)
"""

EXAMPLES = r"""
- name: Read the accounts, paths, ports and units the site needs
  radeonlab.llm.site_probe:
    users: [trainer]
    paths: [/srv/models/qwen2.5-0.5b]
    units: [llamafactory-webui.service]
    datasets:
      lora_job_dataset.file: /srv/data/alpaca.json
  register: __probe

- name: Read two data sets of one job, each in its own formatting
  radeonlab.llm.site_probe:
    datasets:
      lora_job_dataset[0] (alpaca).file: {path: /srv/data/alpaca.json, dataset: {name: alpaca}}
      lora_job_dataset[1] (chats).file: {path: /srv/data/chats.jsonl, dataset: {name: chats, formatting: sharegpt}}
  register: __probe
"""

RETURN = r"""
accounts:
  description: The O(users) that exist, with C(uid), C(gid) and C(home).
  returned: always
  type: dict
  sample: {trainer: {uid: 1000, gid: 1000, home: /home/trainer}}
uid_min:
  description: C(UID_MIN) of C(/etc/login.defs) (1000 where it is not set); lower uids are system accounts.
  returned: always
  type: int
uid_max:
  description: C(UID_MAX) of C(/etc/login.defs) (60000 where it is not set); higher uids are system accounts.
  returned: always
  type: int
paths:
  description: Per path in O(paths), C(exists), C(isdir) and C(isfile).
  returned: always
  type: dict
listening:
  description: Local TCP ports in LISTEN state (IPv4 and IPv6).
  returned: always
  type: list
  elements: int
units:
  description: C(ActiveState) per unit in O(units).
  returned: always
  type: dict
dataset_problems:
  description: One sentence per data set file of O(datasets) that exists but is not in the shape its description says.
  returned: always
  type: list
  elements: str
"""

import os
import pwd
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.radeonlab.llm.plugins.module_utils.site_inputs import dataset_file, dataset_problems, listening_ports


def argument_spec():
    return dict(
        users=dict(type="list", elements="str", default=[]),
        paths=dict(type="list", elements="path", default=[]),
        units=dict(type="list", elements="str", default=[]),
        datasets=dict(type="dict", default={}),
        dataset=dict(type="dict", default={}),
    )


def build_module():
    return AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except (IOError, OSError):
        return ""


def accounts(names):
    found = {}
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        found[name] = {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir}
    return found


def uid_min(login_defs, key="UID_MIN", default=1000):
    match = re.search(r"^\s*%s\s+(\d+)" % key, login_defs, re.M)
    return int(match.group(1)) if match else default


def unit_states(module, units):
    states = {}
    systemctl = module.get_bin_path("systemctl")
    for unit in units:
        if systemctl is None:
            states[unit] = "unknown"
            continue
        rc, out, dummy = module.run_command([systemctl, "show", "--property=ActiveState", "--value", unit],
                                            environ_update={"LC_ALL": "C"})
        states[unit] = out.strip() if rc == 0 and out.strip() else "inactive"
    return states


def main():
    module = build_module()
    params = module.params
    problems, login_defs = [], _read("/etc/login.defs")
    for variable, item in sorted(params["datasets"].items()):
        path, dataset = dataset_file(item, params["dataset"])
        if os.path.isfile(path):
            problems.extend(dataset_problems(variable, _read(path), path, dataset))
    module.exit_json(
        changed=False,
        accounts=accounts(params["users"]),
        uid_min=uid_min(login_defs),
        uid_max=uid_min(login_defs, "UID_MAX", 60000),
        paths=dict((p, {"exists": os.path.exists(p), "isdir": os.path.isdir(p), "isfile": os.path.isfile(p)}) for p in params["paths"]),
        listening=listening_ports(_read("/proc/net/tcp") + "\n" + _read("/proc/net/tcp6")),
        units=unit_states(module, params["units"]),
        dataset_problems=problems,
    )


if __name__ == "__main__":
    main()

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rocm_driver's vars rendered as a play would: the role's defaults and vars, the host's facts and what the preflight
probes register (a host with nothing to report unless a test says otherwise)."""

from __future__ import annotations

import base64
import os

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rocm_driver"))
STRIX_HALO = ("0x1022", "0x1507", "0x1002", "0x1586")  # lspci -n's vendor and device lines: an AMD host bridge, the 8060S
NOTHING_PROBED = {
    "__rocm_driver_wsl_interop": {"stat": {"exists": False}},
    "__rocm_driver_dkms_madison": {"stdout": ""},
    "__rocm_driver_boot": {"files": []},
    "__rocm_driver_pci_ids": {"stdout_lines": []},
}


def slurp(text):
    """What ansible.builtin.slurp registers for a file holding ``text`` (None: no such file)."""
    return {"failed": True, "msg": "file not found"} if text is None else {"content": base64.b64encode(text.encode()).decode()}


def host_facts(kernel="6.8.0-45-generic", container=False, **more):
    """ansible_facts of an Ubuntu 24.04 host, bare metal or a container."""
    return {"kernel": kernel, "distribution": "Ubuntu", "distribution_version": "24.04",
            "virtualization_role": "guest" if container else "host", "virtualization_type": "docker" if container else "kvm", **more}


def render(expression, facts, **registered):
    """``expression`` templated over the role's variables, ``facts`` as ansible_facts and ``registered`` over NOTHING_PROBED."""
    loader = DataLoader()
    variables = {}
    for part in ("defaults/main.yml", "vars/main.yml", "vars/Ubuntu.yml"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part), trusted_as_template=True))
    variables.update(NOTHING_PROBED, ansible_facts=facts, **registered)
    return Templar(loader=loader, variables=variables).template(trust_as_template(expression))

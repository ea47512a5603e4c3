#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rocm_facts
short_description: Gather AMD GPU facts from rocminfo or the amdgpu KFD topology
version_added: 0.1.0
description:
  - Runs C(rocminfo) and parses its output into C(ansible_facts.rocm), which lists the GPU and
    CPU agents the ROCm runtime sees, the runtime version, whether the amdgpu driver is loaded and,
    when the runtime cannot enumerate any agent, the cause with a hint on how to fix it.
  - Where C(rocminfo) is missing or fails without listing agents, reads the KFD topology in sysfs
    (C(/sys/class/kfd/kfd/topology/nodes/*/properties) and C(/sys/class/drm/card*/device)) the way
    ollama does, so GPU facts exist before ROCm is installed or while it is broken.
  - Changes nothing on the host.
options:
  rocminfo_path:
    description:
      - The C(rocminfo) executable.
      - A bare name is looked up on E(PATH) and then in C(/opt/rocm/bin); a value containing a
        C(/) is used as given.
    type: str
    default: rocminfo
  timeout:
    description:
      - Seconds to wait for C(rocminfo) before giving up (error kind V(timeout)).
      - Enforced with coreutils C(timeout) when that is installed; V(0) waits forever.
    type: int
    default: 30
  source:
    description:
      - Where the facts come from.
      - V(rocminfo) runs C(rocminfo) only.
      - V(sysfs) reads only the KFD topology and DRM sysfs files under O(sysfs_root).
      - V(auto) runs C(rocminfo) and falls back to sysfs when C(rocminfo) is missing, or fails
        (or times out) without listing any agent. After a failure the facts come from sysfs but
        C(error) still reports why C(rocminfo) failed.
    type: str
    choices: [auto, rocminfo, sysfs]
    default: auto
  sysfs_root:
    description:
      - Root directory under which C(sys/) and C(proc/cpuinfo) are read, for the sysfs source and
        for the driver state. Mainly for tests and chroots.
    type: path
    default: /
  fail_on_error:
    description:
      - When V(true), an error (no agent enumerated, C(rocminfo) missing with O(source=rocminfo),
        timeout) fails the task with the hint and the tool's own message in C(msg).
      - When V(false), the task succeeds and the error is returned in C(ansible_facts.rocm.error).
    type: bool
    default: true
extends_documentation_fragment:
  - radeonlab.llm.attributes
  - radeonlab.llm.attributes.facts
  - radeonlab.llm.attributes.info_module
attributes:
  facts:
    support: full
notes:
  - C(rocminfo) runs with E(LC_ALL=C) and an argv list, never through a shell. It reads the
    environment of the task, so E(HSA_OVERRIDE_GFX_VERSION) set with C(environment:) shows in the
    reported gfx C(name) (only C(chip_id) then reveals the real silicon).
  - GPU C(index) is the 0-based position among GPU agents in output order, which is the index
    E(ROCR_VISIBLE_DEVICES) uses.
  - C(integrated) is true when any of these holds, first match wins.
    (1) rocminfo lists C(APU) in the agent's C(Memory Properties) (ROCm 6.x and later).
    (2) The gfx target only exists in APUs (gfx801, gfx810, gfx902, gfx909, gfx90c, gfx1013,
    gfx1033, gfx1035, gfx1036, gfx1037, gfx1103, gfx1150, gfx1151, gfx1152, gfx1153).
    (3) No device-local VRAM pool is reported.
    (4) At most 12 compute units, which catches an iGPU renamed by E(HSA_OVERRIDE_GFX_VERSION).
    (5) VRAM of at most 4 GiB with at most 16 compute units (ollama's iGPU VRAM threshold).
    (6) From sysfs, ollama's rule VRAM <= 4 GiB, GTT >= 8 GiB and GTT >= 4 x VRAM.
  - So Strix Halo (gfx1151, 40 CUs, up to 96 GiB carved out of system RAM) counts as integrated,
    because its VRAM is the same memory the CPU uses; small 4 GiB discrete cards (RX 6400, RX 6500 XT,
    RX 550/560) are reported as integrated, as ollama does.
  - From sysfs, C(marketing_name) is the board's C(product_name) when the driver exposes one (else
    empty), C(runtime_version) is null, C(isa) holds only the bare target derived from
    C(gfx_target_version), and C(vram_kb) is C(mem_info_vram_total), slightly larger than the
    pool rocminfo reports.
seealso:
  - name: rocminfo
    description: The ROCm tool this module runs.
    link: https://rocm.docs.amd.com/projects/rocminfo/en/latest/
author:
  - radeonlab.llm maintainers (@radeonlab)
"""

EXAMPLES = r"""
- name: Gather ROCm GPU facts (fails with a hint when the GPU is unusable)
  radeonlab.llm.rocm_facts:

- name: Gather facts without failing, e.g. before ROCm is installed
  radeonlab.llm.rocm_facts:
    fail_on_error: false
  register: __rocm_probe

- name: Show why ROCm cannot see a GPU
  ansible.builtin.debug:
    msg: "{{ ansible_facts['rocm']['error']['hint'] }}"
  when: ansible_facts['rocm']['error'] is not none

- name: Read only the KFD topology (no ROCm user space needed)
  radeonlab.llm.rocm_facts:
    source: sysfs

- name: Use a specific ROCm install and wait longer
  radeonlab.llm.rocm_facts:
    rocminfo_path: /opt/rocm-6.2.4/bin/rocminfo
    timeout: 90

- name: Make the discrete GPUs visible to training jobs
  ansible.builtin.set_fact:
    __visible_devices: >-
      {{ ansible_facts['rocm']['gpus'] | rejectattr('integrated') | map(attribute='index') | map('string') | join(',') }}
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    rocm:
      description: AMD GPU facts.
      returned: always
      type: dict
      contains:
        gpus:
          description: GPU agents in output order (DSP/NPU agents are not included).
          returned: always
          type: list
          elements: dict
          contains:
            node:
              description: KFD topology node id (the number in E(HSA_OVERRIDE_GFX_VERSION_<node>)).
              type: int
              sample: 1
            index:
              description: 0-based ordinal among GPU agents, the E(ROCR_VISIBLE_DEVICES) index.
              type: int
              sample: 0
            name:
              description: The gfx target as the runtime reports it (after any override).
              type: str
              sample: gfx1100
            marketing_name:
              description: Marketing name, empty when the tool prints none.
              type: str
              sample: Radeon RX 7900 XTX
            compute_units:
              description: Compute units, null when unknown.
              type: int
              sample: 96
            vram_kb:
              description: Device-local memory in KiB, null when none is reported.
              type: int
              sample: 25149440
            uuid:
              description: Agent UUID as printed (C(GPU-XX) when masked), null when absent.
              type: str
              sample: GPU-69e905a91bab9202
            chip_id:
              description: PCI device id of the silicon (decimal), null when absent.
              type: int
              sample: 29772
            isa:
              description: ISA names of the agent.
              type: list
              elements: str
              sample: [amdgcn-amd-amdhsa--gfx1100]
            integrated:
              description: Whether the GPU shares system memory with the CPU (see notes for the rule).
              type: bool
              sample: false
        cpus:
          description: CPU agents (one per NUMA node or socket).
          returned: always
          type: list
          elements: dict
          contains:
            node:
              description: KFD topology node id.
              type: int
              sample: 0
            name:
              description: CPU model, null when unknown.
              type: str
              sample: AMD Ryzen 9 5900X 12-Core Processor
            marketing_name:
              description: Marketing name.
              type: str
              sample: AMD Ryzen 9 5900X 12-Core Processor
            compute_units:
              description: Logical CPUs of the agent.
              type: int
              sample: 24
        version:
          description:
            - Installed ROCm release from C(/opt/rocm/.info/version) under O(sysfs_root) (build suffix
              dropped), null when ROCm userspace is not installed.
            - This, not C(runtime_version), is the release to give M(radeonlab.llm.gpu_env).
          returned: always
          type: str
          sample: "6.4.0"
        runtime_version:
          description: HSA runtime version from rocminfo, null from sysfs or when not printed.
          returned: always
          type: str
          sample: "1.14"
        driver_loaded:
          description:
            - Whether the amdgpu kernel driver is loaded and live (rocminfo's C(ROCk module) line,
              else C(/sys/module/amdgpu)).
            - Under WSL, where neither exists, true when a GPU agent was listed.
          returned: always
          type: bool
          sample: true
        source:
          description: Where C(gpus) and C(cpus) come from.
          returned: always
          type: str
          choices: [rocminfo, sysfs]
          sample: rocminfo
        error:
          description: Null when agents were enumerated, else why not.
          returned: always
          type: dict
          contains:
            kind:
              description:
                - V(rock_not_loaded), V(rock_not_live), V(kfd_permission_denied),
                  V(kfd_operation_not_permitted), V(kfd_cannot_allocate_memory),
                  V(hsa_out_of_resources), V(segfault) or V(unknown) from the output;
                  V(rocminfo_not_found) or V(timeout) from the run.
              type: str
              sample: kfd_permission_denied
            message:
              description: The tool's own line.
              type: str
              sample: "Unable to open /dev/kfd read-write: Permission denied"
            hint:
              description: What to do about it.
              type: str
              sample: "This user may not open /dev/kfd: add it to the render and video groups ..."
rc:
  description: Exit status of rocminfo, on failure only.
  returned: failure, when rocminfo ran
  type: int
  sample: 1
stdout:
  description: Output of rocminfo, on failure only.
  returned: failure, when rocminfo ran
  type: str
stderr:
  description: Error output of rocminfo, on failure only.
  returned: failure, when rocminfo ran
  type: str
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.radeonlab.llm.plugins.module_utils.kfd import read_driver, read_kfd_topology
from ansible_collections.radeonlab.llm.plugins.module_utils.rocminfo import (
    gpu_is_integrated,
    make_error,
    parse_rocminfo,
)

ROCM_BIN_DIRS = ["/opt/rocm/bin"]
TIMEOUT_KILL_AFTER = 5
_TIMEOUT_RCS = (124, 137)
_SEGV_RCS = (-11, 139)


def argument_spec():
    """Argument spec of the module (kept apart so tests and other plugins can build it)."""
    return dict(
        rocminfo_path=dict(type="str", default="rocminfo"),
        timeout=dict(type="int", default=30),
        source=dict(type="str", choices=["auto", "rocminfo", "sysfs"], default="auto"),
        sysfs_root=dict(type="path", default="/"),
        fail_on_error=dict(type="bool", default=True),
    )


def build_module():
    return AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)


def find_rocminfo(module, path):
    """Absolute path of rocminfo, or None."""
    if "/" in path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return module.get_bin_path(path, required=False, opt_dirs=ROCM_BIN_DIRS)


def run_rocminfo(module, binary, timeout):
    """Run rocminfo; return (rc, stdout, stderr, timed_out)."""
    argv = [binary]
    wrapped = False
    if timeout and timeout > 0:
        timeout_bin = module.get_bin_path("timeout", required=False)
        if timeout_bin:
            argv = [timeout_bin, "-k", str(TIMEOUT_KILL_AFTER), str(timeout), binary]
            wrapped = True
    rc, out, err = module.run_command(argv, check_rc=False, environ_update={"LC_ALL": "C", "LANG": "C"})
    return rc, out or "", err or "", wrapped and rc in _TIMEOUT_RCS


def _split_agents(agents, details=None):
    """Turn parser/sysfs agents into (gpus, cpus) fact lists."""
    gpus = []
    cpus = []
    for pos, agent in enumerate(agents):
        kind = (agent.get("type") or "").upper()
        if kind == "GPU":
            extra = (details or {}).get(pos, {})
            gpus.append({
                "node": agent.get("node"),
                "index": len(gpus),
                "name": agent.get("name"),
                "marketing_name": agent.get("marketing_name") or "",
                "compute_units": agent.get("compute_units"),
                "vram_kb": agent.get("vram_kb"),
                "uuid": agent.get("uuid"),
                "chip_id": agent.get("chip_id"),
                "isa": list(agent.get("isa") or []),
                "integrated": gpu_is_integrated(
                    agent.get("name"),
                    agent.get("vram_kb"),
                    agent.get("compute_units"),
                    memory_properties=agent.get("memory_properties"),
                    gtt_kb=extra.get("gtt_kb"),
                ),
            })
        elif kind == "CPU":
            cpus.append({
                "node": agent.get("node"),
                "name": agent.get("name"),
                "marketing_name": agent.get("marketing_name") or "",
                "compute_units": agent.get("compute_units"),
            })
    return gpus, cpus


def facts_from_sysfs(root):
    topo = read_kfd_topology(root)
    gpu_positions = [pos for pos, agent in enumerate(topo["agents"]) if agent["type"] == "GPU"]
    details = dict(zip(gpu_positions, topo["devices"]))
    gpus, cpus = _split_agents(topo["agents"], details)
    return {
        "gpus": gpus,
        "cpus": cpus,
        "runtime_version": None,
        "driver_loaded": topo["driver"]["loaded"],
        "source": "sysfs",
        "error": topo["error"],
    }


def facts_from_rocminfo(text, root):
    parsed = parse_rocminfo(text, details=True)
    gpus, cpus = _split_agents(parsed["agents"])
    if parsed["driver"] is not None:
        driver_loaded = parsed["driver"]["state"] == "loaded"
    else:
        driver = read_driver(root)
        driver_loaded = driver["loaded"] if driver["present"] else bool(gpus)
    return {
        "gpus": gpus,
        "cpus": cpus,
        "runtime_version": parsed["runtime_version"],
        "driver_loaded": driver_loaded,
        "source": "rocminfo",
        "error": parsed["error"],
    }, bool(parsed["agents"])


def gather(module):
    """Return (facts, run) where run is None or {rc, stdout, stderr} of the rocminfo run."""
    params = module.params
    source = params["source"]
    root = params["sysfs_root"] or "/"
    if source == "sysfs":
        return facts_from_sysfs(root), None

    binary = find_rocminfo(module, params["rocminfo_path"])
    if binary is None:
        if source == "auto":
            return facts_from_sysfs(root), None
        message = "rocminfo not found: %s (looked on PATH and in %s)" % (params["rocminfo_path"], ", ".join(ROCM_BIN_DIRS))
        return {
            "gpus": [],
            "cpus": [],
            "runtime_version": None,
            "driver_loaded": read_driver(root)["loaded"],
            "source": "rocminfo",
            "error": make_error("rocminfo_not_found", message),
        }, None

    rc, out, err, timed_out = run_rocminfo(module, binary, params["timeout"])
    run = {"rc": rc, "stdout": out, "stderr": err}
    text = out if not err else out + "\n" + err
    facts, has_agents = facts_from_rocminfo(text, root)
    if timed_out:
        facts["error"] = make_error("timeout", "rocminfo did not finish within %d seconds" % params["timeout"])
    elif not has_agents and rc in _SEGV_RCS and facts["error"]["kind"] == "unknown":
        facts["error"] = make_error("segfault", "rocminfo was killed by SIGSEGV (rc=%d)" % rc)

    if source == "auto" and (timed_out or not has_agents):
        fallback = facts_from_sysfs(root)
        fallback["error"] = facts["error"]
        return fallback, run
    return facts, run


def read_rocm_version(root):
    """The installed ROCm release, e.g. '6.4.0' from a '6.4.0-47' version file, or None."""
    path = os.path.join(root, "opt", "rocm", ".info", "version")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    match = re.match(r"(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def main():
    module = build_module()
    facts, run = gather(module)
    facts["version"] = read_rocm_version(module.params["sysfs_root"] or "/")
    error = facts["error"]
    if error is not None and module.params["fail_on_error"]:
        msg = "rocm_facts: %s: %s. Hint: %s" % (error["kind"], error["message"] or "(no output)", error["hint"])
        extra = dict(run) if run else {}
        module.fail_json(msg=msg, rocm=facts, **extra)
    module.exit_json(changed=False, ansible_facts={"rocm": facts})


if __name__ == "__main__":
    main()

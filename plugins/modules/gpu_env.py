#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_env
short_description: Decide HSA_OVERRIDE_GFX_VERSION and GPU visibility for a ROCm host
version_added: 0.1.0
description:
  - Takes the GPUs of C(ansible_facts.rocm.gpus) (from M(radeonlab.llm.rocm_facts)), the installed ROCm version and
    an override policy, and returns the environment variables the training job and the WebUI service must run
    with, plus an explanation per GPU with the source of each decision.
  - Decisions come from the versioned support matrix in C(plugins/module_utils/support_matrix.py) (see
    C(docs/support_matrix.md)); the module changes nothing on the host.
  - A GPU that runs natively (its target has kernels in rocBLAS and the PyTorch ROCm wheel of that ROCm line) is
    never overridden. A GPU of an override family (for example gfx1031 -> C(10.3.0), gfx1101 on ROCm < 6.3 ->
    C(11.0.0), gfx90c -> C(9.0.0)) gets the value whose kernels it borrows. Targets nothing rescues (gfx803 and
    older, RDNA1, pre-production gfx940/gfx941) are hidden.
  - When all overridden GPUs need the same value and no other GPU is present, one global
    C(HSA_OVERRIDE_GFX_VERSION) is returned. Otherwise per-node C(HSA_OVERRIDE_GFX_VERSION_<node>) variables are
    returned, where C(<node>) is the KFD topology node id that rocminfo prints as C(Node:) (libhsakmt
    C(topology_sysfs_get_node_props()) reads C(HSA_OVERRIDE_GFX_VERSION_%d) with that node id before the global
    variable; CPU agents come first, so a single GPU is usually node 1). Per-node variables exist from ROCm 6.2;
    on older ROCm a rig that needs different values keeps the natively supported GPUs and hides the others.
  - Integrated GPUs next to a usable discrete GPU are hidden through C(ROCR_VISIBLE_DEVICES) unless
    O(include_integrated=true). C(ROCR_VISIBLE_DEVICES) lists visible GPUs by C(GPU-<uuid>) where the UUID is
    known and by index otherwise (masked C(GPU-XX) values); it is only returned when some GPU is hidden.
  - "Overridden captures: rocminfo run while C(HSA_OVERRIDE_GFX_VERSION) was set reports the overridden target
    (an RX 6700 XT shows as gfx1030). When the GPU's C(chip_id) is one of the chips known to the matrix and its
    real target borrows the reported target's kernels, the real target is used (and C(reported_name) keeps what
    rocminfo said). Unknown chips are taken as reported; the module warns when its own environment carries an
    override, because the facts were then probably gathered under it."
author:
  - radeonlab.llm maintainers (@radeonlab)
options:
  gpus:
    description:
      - The GPU list of C(ansible_facts.rocm.gpus).
      - Each item needs C(name) (gfx target, feature suffixes such as C(:xnack-) allowed) and C(node) (KFD node id as
        rocminfo's C(Node:) prints it). C(index) (ordinal among GPUs, the C(ROCR_VISIBLE_DEVICES) index; defaults to
        the rank by node), C(uuid), C(integrated), C(chip_id), C(marketing_name) and C(compute_units) are used when
        present; C(vram_kb) is passed through to the result; other keys (C(isa)) are ignored.
    type: list
    elements: dict
    required: true
  rocm_version:
    description:
      - Installed ROCm version, C(X.Y) or C(X.Y.Z), for example C(6.2) or C(6.4.1). Lines 5.7 to 7.2 are covered.
    type: str
    required: true
  override:
    description:
      - C(auto) applies the support matrix.
      - C(off) never sets C(HSA_OVERRIDE_GFX_VERSION); GPUs that would need one stay visible (for custom-built
        kernels) and GPUs nothing rescues stay hidden.
      - An explicit C(major.minor.stepping) value (decimal, as libhsakmt parses it, major<=63, minor<=255,
        stepping<=255; gfx90a is C(9.0.10)) replaces the matrix value for every GPU that does not run natively and
        has the same major version. It is never applied to a natively supported GPU, nor across generations.
    type: str
    default: auto
  include_integrated:
    description:
      - Keep integrated GPUs (APU graphics) visible next to a discrete GPU. ROCm asks to disable the IGP because
        the runtime may crash otherwise. A host whose only GPUs are integrated always keeps them.
    type: bool
    default: false
  select:
    description:
      - Which of the usable GPUs to keep visible. C(all) (the default) keeps every one; a number N keeps the first N
        by index; a list of indices (ROCr ordinals, the C(index) of O(gpus)) keeps those. The others are hidden with
        C(ROCR_VISIBLE_DEVICES) and the reason C(not selected).
      - A selection the usable GPUs cannot meet (more GPUs than there are, an index that is hidden or absent) fails.
    type: raw
    default: all
  kernel:
    description:
      - The running kernel, for AMD's verdict on a visible Ryzen AI Max (Strix Halo, gfx1151) GPU with this ROCm release
        (RV(apu_kernel)). Keys C(release) (C(uname -r), Ansible's C(kernel) fact), C(version) (C(uname -v), Ansible's
        C(kernel_version), which names an Ubuntu kernel's upload), C(distribution) and C(distribution_version).
      - Omitted, the verdict is C(unknown).
    type: dict
extends_documentation_fragment:
  - radeonlab.llm.attributes
  - radeonlab.llm.attributes.info_module
notes:
  - The per-GPU C(source) fields cite C(rocm_facts.md) sections or public documents; entries marked UNVERIFIED in the
    matrix give C(verified=false).
  - ollama's documentation suggests C(HSA_OVERRIDE_GFX_VERSION_0) for the first GPU; libhsakmt uses KFD node ids,
    where node 0 is normally the CPU, so this module follows libhsakmt.
seealso:
  - name: Support matrix
    description: Generated table of the decisions per GPU target and ROCm line.
    link: https://github.com/radeonlab/llm/blob/main/docs/support_matrix.md
  - name: GPU isolation techniques
    description: ROCR_VISIBLE_DEVICES and the other visibility variables.
    link: https://rocm.docs.amd.com/en/docs-6.1.2/conceptual/gpu-isolation.html
"""

EXAMPLES = r"""
- name: Gather ROCm facts
  radeonlab.llm.rocm_facts:

- name: Decide the GPU environment
  radeonlab.llm.gpu_env:
    gpus: "{{ ansible_facts['rocm']['gpus'] }}"
    rocm_version: "{{ ansible_facts['rocm']['version'] }}"  # the installed release, from rocm_facts
  register: __gpu_env

- name: Run the training job with it
  ansible.builtin.command:
    cmd: llamafactory-cli train /srv/lora/job.yaml
  environment: "{{ __gpu_env.env }}"
  changed_when: true

- name: Use an RX 6800 XT and the Ryzen iGPU together, forcing 10.3.0
  radeonlab.llm.gpu_env:
    gpus: "{{ ansible_facts['rocm']['gpus'] }}"
    rocm_version: "6.4.1"
    override: "10.3.0"
    include_integrated: true
  register: __gpu_env

- name: Train on the first two of four cards
  radeonlab.llm.gpu_env:
    gpus: "{{ ansible_facts['rocm']['gpus'] }}"
    rocm_version: "6.4.1"
    select: 2
  register: __gpu_env

- name: Refuse hosts without a usable GPU
  ansible.builtin.assert:
    that: __gpu_env.usable_gpus > 0
    fail_msg: "{{ __gpu_env.gpus | map(attribute='reason') | join('; ') }}"
"""

RETURN = r"""
env:
  description:
    - Environment variables to pass to the training job and the WebUI service. Empty when nothing is needed.
    - Possible keys are C(HSA_OVERRIDE_GFX_VERSION), C(HSA_OVERRIDE_GFX_VERSION_<node>) and C(ROCR_VISIBLE_DEVICES).
  returned: always
  type: dict
  sample:
    HSA_OVERRIDE_GFX_VERSION_2: "10.3.0"
    ROCR_VISIBLE_DEVICES: "1"
gpus:
  description: One explanation per input GPU, ordered by index.
  returned: always
  type: list
  elements: dict
  contains:
    node:
      description: KFD node id (rocminfo C(Node:)).
      type: int
    index:
      description: Ordinal among GPUs, as C(ROCR_VISIBLE_DEVICES) counts them.
      type: int
    name:
      description: The gfx target the decision is about (the real one for an overridden capture).
      type: str
    reported_name:
      description: The target as the facts reported it.
      type: str
    marketing_name:
      description: Marketing name from the facts.
      type: str
    integrated:
      description: Whether the facts mark the GPU as integrated.
      type: bool
    vram_kb:
      description: The GPU's VRAM in KiB as the facts gave it (rocminfo's pool size), or null.
      type: int
    status:
      description: C(native), C(override) or C(unsupported) according to the matrix.
      type: str
    override:
      description: The override value this GPU effectively gets from O(override), or null.
      type: str
    recommended_override:
      description: The value the matrix recommends (null for native and unsupported GPUs).
      type: str
    visible:
      description: Whether the GPU stays visible to the ROCm runtime.
      type: bool
    official:
      description: Whether AMD lists the target as supported on that ROCm line.
      type: bool
    verified:
      description: False when an UNVERIFIED matrix entry is behind the decision.
      type: bool
    reason:
      description: Why, in words.
      type: str
    source:
      description: The sources of the decision (sections of rocm_facts.md or public URLs).
      type: str
  sample:
    - node: 1
      index: 0
      name: gfx803
      reported_name: gfx803
      marketing_name: Radeon RX 580 Series
      integrated: false
      status: unsupported
      override: null
      recommended_override: null
      visible: false
      official: false
      verified: true
      reason: "gfx803 on ROCm 6.4: pre-Vega GCN ... hidden: no kernels and no override can rescue it"
      source: "rocm_facts.md §2: 'Never listed for Linux' ..."
override_mode:
  description: C(none), C(global) or C(per_node).
  returned: always
  type: str
  sample: per_node
usable_gpus:
  description: Number of GPUs left visible.
  returned: always
  type: int
  sample: 1
rocm_line:
  description: The ROCm release line the decision used.
  returned: always
  type: str
  sample: "6.4"
matrix_version:
  description: Version of the support matrix data.
  returned: always
  type: str
  sample: "2026.08.1"
apu_kernel:
  description:
    - AMD's verdict on ROCm on a visible Ryzen AI Max GPU (gfx1151) with this ROCm release and the running kernel, from
      AMD's RDNA3.5 system optimization page (the kernels with the KFD fixes, and the ROCm release x kernel table). A
      verdict other than C(supported) is also a warning.
  returned: always
  type: dict
  contains:
    applies:
      description: Whether a visible GPU is a Ryzen AI Max one (the rest is empty otherwise).
      type: bool
    status:
      description: C(supported), C(experimental), C(unsupported) or C(unknown) (a release or kernel the table does not settle).
      type: str
    kernel_has_fixes:
      description: Whether the running kernel carries the KFD fixes (null when not known).
      type: bool
    kernel:
      description: The running kernel release, as given.
      type: str
    min_kernel:
      description: AMD's minimum kernels per kind.
      type: str
    message:
      description: What the verdict means and what is supported.
      type: str
    source:
      description: Where the table comes from.
      type: str
  sample:
    applies: true
    status: unsupported
    kernel_has_fixes: true
    kernel: 6.18.44-fc-v1300
    min_kernel: Ubuntu 24.04 HWE 6.17.0-19.19~24.04.2, Ubuntu 24.04 OEM 6.14.0-1018, any other distribution 6.18.4
    message: "gfx1151: AMD lists ROCm 7.1.0 as unsupported on kernel 6.18.44-fc-v1300 (has the KFD fixes). ..."
    source: "AMD, 'AMD RDNA3.5 system optimization' ..."
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.radeonlab.llm.plugins.module_utils.gfx import gpu_environment


def build_module():
    argument_spec = dict(
        gpus=dict(type="list", elements="dict", required=True),
        rocm_version=dict(type="str", required=True),
        override=dict(type="str", default="auto"),
        include_integrated=dict(type="bool", default=False),
        select=dict(type="raw", default="all"),
        kernel=dict(type="dict"),
    )
    return AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)


def main():
    module = build_module()
    params = module.params
    try:
        result = gpu_environment(
            params["gpus"],
            params["rocm_version"],
            policy=params["override"],
            include_integrated=params["include_integrated"],
            select=params["select"],
            kernel=params["kernel"],
        )
    except ValueError as exc:
        module.fail_json(msg=str(exc), changed=False)

    inherited = sorted(k for k in os.environ if k == "HSA_OVERRIDE_GFX_VERSION" or k.startswith("HSA_OVERRIDE_GFX_VERSION_"))
    if inherited:
        module.warn(
            "%s set in the module's environment: rocminfo facts gathered under it report overridden gfx targets; "
            "pass chip_id in the facts or gather them without the override" % ", ".join(inherited)
        )
    for warning in result.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()

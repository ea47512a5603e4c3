# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which bitsandbytes release a host gets, and whether its 4-bit kernels exist for the host's GPUs.

No Ansible import; Python 3.8 compatible. The data (releases, ROCm builds, targets, sources) is
``support_matrix.BITSANDBYTES``; the filter ``radeonlab.llm.bitsandbytes_support`` wraps
:func:`bitsandbytes_support`. This is the *expectation* from the data; whether 4-bit really works is the
llamafactory role's probe (``files/kernel_probe.py bitsandbytes``, a 4-bit matmul on every visible GPU), and only
the probe decides ``bitsandbytes_ok``. The expectation explains a failed probe (which build, which target).

bitsandbytes loads ``libbitsandbytes_rocm<major><minor>.so`` for torch's HIP version, so the ROCm line
that counts is torch's (``torch.version.hip``), not the host's; a GPU under HSA_OVERRIDE_GFX_VERSION runs
the kernels of the target it borrows.
"""

from __future__ import annotations

import re

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils.attention import apply_environment, effective_target

__all__ = ("BitsandbytesPolicyError", "rocm_line_of_hip", "bitsandbytes_support")

_HIP_RE = re.compile(r"^(\d+)\.(\d+)")


class BitsandbytesPolicyError(ValueError):
    """An input the policy cannot interpret (the filter turns it into AnsibleFilterError)."""


def rocm_line_of_hip(hip):
    """'6.4.43484-123' -> '6.4', '7.14.0' -> '7.14'; None for a torch without HIP."""
    if hip in (None, ""):
        return None
    match = _HIP_RE.match(str(hip).strip())
    if not match:
        raise BitsandbytesPolicyError("torch HIP version %r is not major.minor[.patch]" % (hip,))
    return "%d.%d" % (int(match.group(1)), int(match.group(2)))


def bitsandbytes_support(gpus, hip=None, cuda=None, version=None, env=None):
    """The release to install and, per visible GPU, whether that release's build for torch's ROCm line has its kernels.

    Returns ``{"version", "rocm_line", "library", "supported", "reason", "gpus": [{"target", "reported",
    "supported", "reason"}], "source", "verified"}``. ``supported`` is an expectation; the probe decides.
    """
    try:
        row = sm.bitsandbytes_release(version)
    except ValueError as exc:
        raise BitsandbytesPolicyError(str(exc))
    name = "bitsandbytes %s" % row["version"]
    line = rocm_line_of_hip(hip)
    result = {"version": row["version"], "rocm_line": line, "library": None, "supported": False, "reason": "", "gpus": [],
              "source": row["source"], "verified": row["verified"]}
    if line is None:
        if cuda:
            result.update(library="libbitsandbytes_cuda", supported=bool(row["cuda"]),
                          reason="%s ships CUDA builds; torch is a CUDA %s build" % (name, cuda))
        else:
            result["reason"] = "torch has no HIP (a CPU build): %s's 4-bit kernels need a ROCm or CUDA torch" % name
        return result
    builds = row["rocm_builds"]
    if line not in builds:
        result["reason"] = "%s ships no build for ROCm %s (torch HIP %s; builds for ROCm %s)" % (
            name, line, hip, ", ".join(builds))
        return result
    library = "libbitsandbytes_rocm%s.so" % line.replace(".", "")
    result["library"] = library
    for gpu in apply_environment(list(gpus or []), env):
        try:
            targets = effective_target(gpu)
        except ValueError as exc:
            raise BitsandbytesPolicyError(str(exc))
        if targets is None:
            continue
        target, reported = targets
        borrowed = "" if target == reported else " (%s borrowing %s)" % (reported, target)
        ok = target in builds[line]
        result["gpus"].append({
            "target": target, "reported": reported, "supported": ok,
            "reason": "%s%s: %s %s kernels" % (target, borrowed, library, "has its" if ok else "has no"),
        })
    if not result["gpus"]:
        result["reason"] = "no GPU visible: %s's 4-bit kernels need one" % name
        return result
    missing = [gpu for gpu in result["gpus"] if not gpu["supported"]]
    result["supported"] = not missing
    if missing:
        result["reason"] = "%s for ROCm %s has no kernels for %s" % (name, line, ", ".join(g["reported"] for g in missing))
    else:
        result["reason"] = "%s for ROCm %s has kernels for %s" % (name, line, ", ".join(sorted({g["target"] for g in result["gpus"]})))
    return result

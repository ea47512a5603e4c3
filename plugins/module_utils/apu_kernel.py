# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does this host's kernel run ROCm on its Ryzen AI Max APU (Strix Halo)? Pure, over ``support_matrix.APU_KERNELS``.

AMD lists the kernels that carry the KFD fixes gfx1151 needs, and per ROCm release whether it is supported on such a
kernel and on an older one (``support_matrix.SOURCES['amd_rdna35']``). :func:`check` reads the running kernel as
Ansible's facts give it (``kernel``: ``uname -r``; ``kernel_version``: ``uname -v``, which names an Ubuntu kernel's
upload, ``#19~24.04.2-Ubuntu``) and returns the status with a message that says what to change.
No Ansible import; Python 3.8 compatible.
"""

from __future__ import annotations

import re

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils.driver_kernel import kernel_key

STATUSES = ("supported", "experimental", "unsupported", "unknown")
_UPLOAD_RE = re.compile(r"#\d+~(\d+)\.(\d+)\.(\d+)")


def _version(text):
    return tuple(int(part) for part in text.split("."))


def _native(distribution, distribution_version):
    wanted = sm.APU_KERNELS["native"].get(str(distribution or ""))
    if not wanted:
        return False
    try:
        return _version(str(distribution_version)) >= _version(wanted)
    except ValueError:
        return False


def kernel_has_fixes(release, version="", distribution="", distribution_version=""):
    """True, False, or None (an Ubuntu kernel whose upload cannot be read) for the running kernel."""
    key = kernel_key(release)  # (6, 17, 0, 19) for 6.17.0-19-generic
    if key is None:
        return None
    upstream, abi = key[:3], key[3]
    if _native(distribution, distribution_version):
        return True
    mins = sm.APU_KERNELS["min_kernel"]
    if distribution == "Ubuntu" and str(release).endswith("-oem"):
        floor, floor_abi = mins["ubuntu_oem"]
        return (upstream, abi or 0) >= (_version(floor), floor_abi)
    if distribution == "Ubuntu":
        floor, floor_abi, floor_upload = mins["ubuntu_hwe"]
        if (upstream, abi or 0) != (_version(floor), floor_abi):
            return (upstream, abi or 0) > (_version(floor), floor_abi)
        upload = _UPLOAD_RE.search(str(version or ""))
        return None if upload is None else tuple(int(part) for part in upload.groups()) >= floor_upload
    return upstream >= _version(mins["other"][0])


def release_status(rocm_version, fixed):
    """The status AMD gives ``rocm_version`` on a kernel with (``fixed``) or without the fixes; 'unknown' when unlisted."""
    version = str(rocm_version or "")
    rows = sm.APU_KERNELS["releases"]
    matches = [prefix for prefix in rows if version == prefix or version.startswith(prefix + ".")]
    if not matches or fixed is None:
        return "unknown"
    with_fixes, without = rows[max(matches, key=len)]
    return with_fixes if fixed else without


def check(gfx_targets, rocm_version, kernel=None):
    """The APU kernel check for a host whose visible GPUs are ``gfx_targets``.

    ``kernel``: ``{release, version, distribution, distribution_version}`` (Ansible's ``kernel``, ``kernel_version``,
    ``distribution``, ``distribution_version``). Returns ``{applies, status, kernel_has_fixes, kernel, min_kernel,
    message, source}``; ``applies`` is False (status 'unknown', no message) when no target is a Ryzen AI Max one.
    """
    kernel = dict(kernel or {})
    targets = sorted(set(gfx_targets or ()) & set(sm.APU_KERNELS["targets"]))
    result = {"applies": bool(targets), "status": "unknown", "kernel_has_fixes": None, "kernel": kernel.get("release"),
              "min_kernel": sm.APU_KERNELS["min_kernel_text"], "message": "", "source": sm.SOURCES[sm.APU_KERNELS["source"]]}
    if not targets:
        return result
    fixed = kernel_has_fixes(kernel.get("release"), kernel.get("version"), kernel.get("distribution"), kernel.get("distribution_version"))
    status = release_status(rocm_version, fixed)
    result.update(kernel_has_fixes=fixed, status=status)
    where = "kernel %s (%s)" % (kernel.get("release") or "?", "has the KFD fixes" if fixed else
                                "older than AMD's minimum" if fixed is False else "fixes not known")
    if status == "supported":
        result["message"] = "%s: ROCm %s is supported on %s" % ("/".join(targets), rocm_version, where)
    elif status == "unknown":
        result["message"] = ("%s: AMD's Ryzen AI Max table says nothing of ROCm %s on %s; it lists ROCm 7.2 as supported "
                             "on a kernel with the KFD fixes (%s)" % ("/".join(targets), rocm_version, where, sm.APU_KERNELS["min_kernel_text"]))
    else:
        result["message"] = ("%s: AMD lists ROCm %s as %s on %s. Supported: ROCm 7.2 on a kernel with the KFD fixes "
                             "(%s)" % ("/".join(targets), rocm_version, status, where, sm.APU_KERNELS["min_kernel_text"]))
    return result

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does the amdgpu-dkms of the configured driver line build on this host's kernels? Pure, over
``support_matrix.AMDGPU_DKMS_KERNELS``.

The driver line is read from the amdgpu-dkms version apt offers (``1:6.16.6.30200000-2238411.24.04``: the kernel
driver base, then the line, 30200000 = 30.20.0; before 7.0 the ROCm release, 60400 = 6.4.0). A kernel counts by its
series (``6.17.0-19-generic``: 6.17). The kernels checked are the running one and the newest installed one (the one
the next boot takes). No Ansible import; Python 3.8 compatible.
"""

from __future__ import annotations

import re

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

_DKMS_VERSION_RE = re.compile(r"^(?:\d+:)?\d+\.\d+\.\d+\.(\d+)-")
_KERNEL_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:-(\d+))?")
_VMLINUZ_RE = re.compile(r"^vmlinuz-(\d.*)$")


def driver_line(dkms_version):
    """``1:6.16.6.30200000-2238411.24.04`` -> '30.20.0'; ``1:6.12.12.60400-2147987.24.04`` -> '6.4.0'; None when unreadable."""
    match = _DKMS_VERSION_RE.match(str(dkms_version or "").strip())
    if not match:
        return None
    number = int(match.group(1))
    if number >= 10 ** 7:  # 30200000: major 30, minor 20, patch 0 (two digits each, then two zeros)
        return "%d.%d.%d" % (number // 10 ** 6, number // 10 ** 4 % 100, number // 100 % 100)
    return "%d.%d.%d" % (number // 10 ** 4, number // 100 % 100, number % 100)  # 60400: 6.4.0


def kernel_key(release):
    """``6.17.0-19-generic`` -> (6, 17, 0, 19), for ordering kernels; None when it does not start with a version."""
    match = _KERNEL_RE.match(str(release or "").strip())
    if not match:
        return None
    return tuple(int(part or 0) for part in match.groups())


def kernel_series(release):
    key = kernel_key(release)
    return None if key is None else "%d.%d" % key[:2]


def newest_kernel(boot_files):
    """The newest kernel release among ``/boot`` file names (``vmlinuz-<release>``), or None."""
    releases = [match.group(1) for match in (_VMLINUZ_RE.match(name.rsplit("/", 1)[-1]) for name in boot_files or ()) if match]
    releases = [release for release in releases if kernel_key(release) is not None]
    return max(releases, key=kernel_key) if releases else None


def _line_key(line):
    return tuple(int(part) for part in line.split("."))


def status(line, release, distribution=""):
    """('builds' | 'fails' | 'unknown', the matching row or None) for driver ``line`` on kernel ``release``.

    Rows name a line (``30.20``) and the first point release that fixed a failure (``30.20.1``, or None): a row
    ``fails`` holds for the points before the fix; from the fix on the line builds. A distribution-specific row
    (``ubuntu-24.04``) wins over an ``any`` row, and among those the newest.
    """
    series = kernel_series(release)
    if not line or series is None:
        return "unknown", None
    rows = [row for row in sm.AMDGPU_DKMS_KERNELS
            if (line + ".").startswith(row["line"] + ".") and row["kernel"] == series
            and row["distribution"] in (distribution, "any")]
    rows.sort(key=lambda row: (row["distribution"] == "any", [-int(part) for part in row["date"].split("-")]))
    for row in rows:
        if row["status"] == "fails" and row["fixed_in"] and _line_key(line) >= _line_key(row["fixed_in"]):
            return "builds", row
        return row["status"], row
    return "unknown", None


def check(dkms_version, running, newest=None, distribution=""):
    """The check before amdgpu-dkms is installed: ``{line, kernels: [{release, role, status, source}], refused, message}``.

    ``refused`` when the driver is known to fail on the running or the next boot's kernel; the message names the ways
    out (the in-kernel driver, a driver line that builds, holding the kernel). Unknown pairs are named, not refused.
    """
    line = driver_line(dkms_version)
    kernels = []
    for role, release in (("running", running), ("next boot", newest)):
        if not release or any(kernel["release"] == release for kernel in kernels):
            continue
        verdict, row = status(line, release, distribution)
        kernels.append({"release": release, "role": role, "status": verdict,
                        "source": sm.SOURCES[row["source"]] if row else None, "note": row["note"] if row else ""})
    failing = [kernel for kernel in kernels if kernel["status"] == "fails"]
    unknown = [kernel for kernel in kernels if kernel["status"] == "unknown"]
    if failing:
        message = ("amdgpu-dkms %s (driver line %s) is known not to build on kernel %s: %s. Choose one: "
                   "rocm_driver_kernel_module: inbox (the kernel's own amdgpu driver, no DKMS build); a driver line "
                   "that builds on it (rocm_repo_amdgpu_version); or boot and hold a kernel it builds on. Nothing was changed."
                   % (dkms_version, line or "?", ", ".join("%s (%s)" % (k["release"], k["role"]) for k in failing),
                      "; ".join(k["note"] for k in failing if k["note"])))
    elif unknown:
        kernels_text = ", ".join(k["release"] for k in unknown)
        message = ("amdgpu-dkms %s (driver line %s) on kernel %s: no report says whether it builds (if a build fails, "
                   "DKMS's make.log under /var/lib/dkms/amdgpu says why)" % (dkms_version, line or "?", kernels_text))
    else:
        message = "amdgpu-dkms %s (driver line %s) builds on kernel %s" % (
            dkms_version, line, ", ".join(k["release"] for k in kernels))
    return {"line": line, "kernels": kernels, "refused": bool(failing), "message": message}


def hold_packages(installed, release, meta_patterns=()):
    """The installed packages that pin the kernel ``release``: its own (``linux-image-<release>``, ``-headers-``,
    ``-modules-``, ``-modules-extra-``, ...) and the kernel meta packages that would pull a newer one in (``meta_patterns``:
    regular expressions, per distribution). Sorted; empty when ``release`` is empty.
    """
    release = str(release or "").strip()
    if not release:
        return []
    names = set(installed or ())
    own = {name for name in names if name.startswith("linux-") and name.endswith("-" + release)}
    metas = {name for name in names for pattern in meta_patterns or () if re.match("^(?:%s)$" % pattern, name)}
    return sorted(own | metas)

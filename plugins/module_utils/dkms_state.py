# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Is amdgpu-dkms left broken by a failed build, and what does its make.log say? Pure.

A failed DKMS build makes amdgpu-dkms's postinst fail; dpkg leaves the package half-configured (``dpkg-query``'s
``db:Status-Abbrev`` ``iF``), and every later ``dpkg --configure -a`` retries the same build and fails again (ROCm/amdgpu#192:
"Error! Bad return status for module build ... Consult /var/lib/dkms/amdgpu/6.12.12-2164967.24.04/build/make.log ...
dpkg: error processing package amdgpu-dkms (--configure)"). :func:`state` reads what dpkg, ``dkms status`` and the make.log
say; :func:`recovery` decides what the role does about it: remove the package (AMD's approved flow is to remove the old
amdgpu-dkms, then install the new one: ROCm/legacy-rocm-build#3701), so that dpkg is consistent and a re-run installs it
afresh. No Ansible import; Python 3.8 compatible.
"""

from __future__ import annotations

import re

# dpkg-query(1), --list: desired action, package status, error flag. Status letters: n Not-installed, c Config-files,
# H Half-installed, U Unpacked, F Half-configured, W Triggers-awaiting, t Triggers-pending, i Installed; error R Reinst-required.
STATUS_NAMES = {"n": "not-installed", "c": "config-files", "H": "half-installed", "U": "unpacked", "F": "half-configured",
                "W": "triggers-awaiting", "t": "triggers-pending", "i": "installed"}
BROKEN_STATUSES = ("half-installed", "unpacked", "half-configured")
# /var/lib/dkms/<module>/<module version>/build/make.log (ROCm/amdgpu#192, #209; ROCm/legacy-rocm-build#5111).
DKMS_TREE = "/var/lib/dkms/amdgpu"
MAKE_LOG = DKMS_TREE + "/%s/build/make.log"
LOG_LINES = 20
LOG_LINE_CHARS = 300
_PKG_VERSION_RE = re.compile(r"^(?:\d+:)?(\d+\.\d+\.\d+)\.\d+-(\S+)$")
# dkms 3.x: "amdgpu/6.16.6-2255209.24.04, 6.17.0-5-generic, x86_64: installed (Original modules exist)" (ROCm/legacy-rocm-build
# #5624); dkms 2.x: "amdgpu, 1.9-211.el7, 3.10.0-862.11.6.el7.x86_64, x86_64: installed" (#557). A module only added: no kernel.
_DKMS_NEW_RE = re.compile(r"^(?P<module>[^/,\s]+)/(?P<version>[^,\s]+)(?:,\s*(?P<kernel>[^,\s]+),\s*(?P<arch>[^:\s]+))?:\s*(?P<state>\w+)")
_DKMS_OLD_RE = re.compile(r"^(?P<module>[^/,\s]+),\s*(?P<version>[^,\s]+)(?:,\s*(?P<kernel>[^,\s]+),\s*(?P<arch>[^:\s]+))?:\s*(?P<state>\w+)")
# What a compiler, make or DKMS says when a build fails; the log's first line names module, version and kernel.
_RELEVANT_RE = re.compile(r"(error|Error|ERROR|\*\*\*|undefined|implicit declaration|fatal|No such file|DKMS make\.log for)")


class DkmsStateError(ValueError):
    """An input that is not what dpkg-query or dkms print."""


def module_version(package_version):
    """``1:6.12.12.60401-2164967.24.04`` -> ``6.12.12-2164967.24.04``, the DKMS tree's directory (ROCm/amdgpu#192); None."""
    match = _PKG_VERSION_RE.match(str(package_version or "").strip())
    return "%s-%s" % match.groups() if match else None


def parse_dpkg(line, package="amdgpu-dkms"):
    """``dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}'`` output (blanks, or tabs) -> {installed, version, status, abbrev}.

    Empty output (dpkg-query knows no such package) is ``not-installed``.
    """
    for row in str(line or "").splitlines():
        words = row.split("\t") if "\t" in row else row.split()
        if not words or words[0].strip() != package:
            continue
        if len(words) == 2:  # a package dpkg knows but never installed has no version: "amdgpu-dkms  un"
            words = [words[0], "", words[1]]
        abbrev = words[2].strip() if len(words) > 2 else ""
        if len(abbrev) < 2 or abbrev[1] not in STATUS_NAMES:
            raise DkmsStateError("not a dpkg-query line of %s: %r" % (package, row))
        status = STATUS_NAMES[abbrev[1]]
        return {"version": words[1].strip() or None, "abbrev": abbrev, "status": status, "reinst_required": abbrev[2:3] == "R",
                "installed": status not in ("not-installed", "config-files")}
    return {"version": None, "abbrev": "", "status": "not-installed", "reinst_required": False, "installed": False}


def parse_dkms_status(text):
    """``dkms status`` lines -> [{module, version, kernel, arch, state}] (both dkms 2.x and 3.x layouts)."""
    rows = []
    for line in str(text or "").splitlines():
        line = line.strip()
        match = _DKMS_NEW_RE.match(line) or _DKMS_OLD_RE.match(line)
        if match:
            rows.append({key: match.group(key) for key in ("module", "version", "kernel", "arch", "state")})
    return rows


def log_excerpt(text, limit=LOG_LINES):
    """The lines of a make.log that say why a build failed (errors, make's ``***``, the header), at most ``limit``."""
    lines = [line.rstrip() for line in str(text or "").splitlines()]
    relevant = [line for line in lines if _RELEVANT_RE.search(line)]
    header = [line for line in relevant if line.startswith("DKMS make.log for")][:1]
    errors = [line for line in relevant if not line.startswith("DKMS make.log for")]
    picked = header + errors[:max(0, limit - len(header))]
    if not errors:  # nothing matched: the log's end is the next best thing
        picked = header + [line for line in lines if line.strip()][-max(1, limit - len(header)):]
    return [line[:LOG_LINE_CHARS] for line in picked]


def state(dpkg_line, dkms_status_text="", kernels=None, make_log="", make_log_path=None):
    """What dpkg and DKMS say about amdgpu-dkms: ``{package, module_version, broken, kernels, unbuilt, make_log, log, message}``.

    ``kernels``: [(release, role)] to check DKMS's build for (the running kernel, the next boot's). ``broken``: dpkg left
    the package half-configured, unpacked or half-installed, or marked it reinst-required.
    """
    package = parse_dpkg(dpkg_line)
    version = module_version(package["version"])
    rows = [row for row in parse_dkms_status(dkms_status_text) if row["module"] == "amdgpu"]
    checked = []
    for release, role in kernels or ():
        if release and not any(kernel["release"] == release for kernel in checked):
            found = [row["state"] for row in rows if row["kernel"] == release and (version is None or row["version"] == version)]
            checked.append({"release": release, "role": role, "dkms": found[0] if found else "missing"})
    broken = package["status"] in BROKEN_STATUSES or package["reinst_required"]
    unbuilt = [kernel for kernel in checked if kernel["dkms"] != "installed"] if package["installed"] else []
    path = make_log_path or (MAKE_LOG % version if version else None)
    log = log_excerpt(make_log) if (broken or unbuilt) and make_log else []
    if broken:
        message = ("amdgpu-dkms %s is %s (dpkg %s): its DKMS build failed, and every dpkg --configure -a retries it and fails"
                   % (package["version"], package["status"], package["abbrev"].strip()))
    elif unbuilt:
        message = "amdgpu-dkms %s has no amdgpu module installed for kernel %s" % (
            package["version"], ", ".join("%s (%s: %s)" % (k["release"], k["role"], k["dkms"]) for k in unbuilt))
    elif package["installed"]:
        message = "amdgpu-dkms %s is installed and DKMS built it for kernel %s" % (
            package["version"], ", ".join(k["release"] for k in checked) or "(none checked)")
    else:
        message = "amdgpu-dkms is not installed"
    if log:
        message += "; %s says:\n  %s" % (path, "\n  ".join(log))
    elif broken or unbuilt:
        message += "; %s is not there to say why" % (path or DKMS_TREE + "/<version>/build/make.log")
    return {"package": package, "module_version": version, "broken": broken, "kernels": checked, "unbuilt": unbuilt,
            "make_log": path, "log": log, "message": message}


def recovery(found, kernel_driver):
    """What the role does about ``found`` (a :func:`state`): ``{action: none|remove, message}``.

    A broken package is removed (``dpkg --remove amdgpu-dkms``; the firmware package stays), AMD's remove-then-install
    flow: with ``kernel_driver`` dkms the install step then installs the configured driver afresh (and a build that fails
    again is recovered the same way before the play stops); with inbox the kernel's own driver takes over.
    """
    if kernel_driver not in ("dkms", "inbox"):
        raise DkmsStateError("kernel_driver must be dkms or inbox, got %r" % (kernel_driver,))
    if not found["broken"]:
        return {"action": "none", "message": ""}
    then = ("then installs the configured amdgpu-dkms afresh; if that build fails too, the package is removed again and the "
            "play stops with its make.log" if kernel_driver == "dkms"
            else "the kernel's own amdgpu driver is used (rocm_driver_kernel_module: inbox or auto's choice)")
    return {"action": "remove",
            "message": "RECOVERING amdgpu-dkms: %s. The role removes it (dpkg --remove amdgpu-dkms, the firmware package stays) so "
                       "that dpkg is consistent again, and %s." % (found["message"], then)}

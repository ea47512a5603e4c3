# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Move the ROCm user space to the line the configured repository offers: upgrade, stay, or refuse a downgrade. Pure.

The configured line is what apt offers: radeonlab.llm.rocm_repo registers one ``rocm/apt/<version>`` source (``7.1`` and
``7.1.1`` are different directories upstream), so the ROCm versions ``apt-cache madison`` lists are that line's. A ROCm
package's version ends in the release number before the Debian revision (``rocm-core 7.1.0.70100-20~24.04``:
ROCm/legacy-rocm-build#5657; ``hip-runtime-amd 6.1.40093.60102-119~22.04``, which ``rocm-hip-runtime`` depends on with
``=``: #3306), so a meta package alone cannot move: every installed package of the old release is named at the new
release's version. The installed release is ``/opt/rocm/.info/version`` (``6.4.0-47``; radeonlab.llm.rocm_facts reads it
the same way). No Ansible import; Python 3.8 compatible.
"""

from __future__ import annotations

import re

# five digits, major * 10000 + minor * 100 + patch; a distribution's date-stamped version (mawk 1.3.4.20240123-1) is none
_RELEASE_NUMBER_RE = re.compile(r"\.(\d{5})-[^-\s]+$")
_INFO_RE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")
_MADISON_RE = re.compile(r"^\s*(\S+)\s+\|\s*(\S+)\s+\|", re.MULTILINE)
DIRECTIONS = ("fresh", "same", "upgrade", "downgrade", "unknown")


def release_number(package_version):
    """``7.1.1.70101-38~24.04`` -> 70101; None for a version that carries no ROCm release number (a distribution's)."""
    match = _RELEASE_NUMBER_RE.search(str(package_version or "").strip())
    return int(match.group(1)) if match else None


def release_packages(installed, exclude=()):
    """The names among {package: version} whose version carries a ROCm release number, less ``exclude``, sorted."""
    return sorted(name for name, version in (installed or {}).items()
                  if name not in set(exclude or ()) and release_number(version) is not None)


def release_of_number(number):
    """70101 -> '7.1.1'; 60400 -> '6.4.0'."""
    return "%d.%d.%d" % (number // 10000, number // 100 % 100, number % 100)


def release_of_info(text):
    """``/opt/rocm/.info/version`` text (``6.4.0-47``) -> (6, 4, 0); None when absent or unreadable."""
    match = _INFO_RE.match(str(text or ""))
    return tuple(int(part or 0) for part in match.groups()) if match else None


def _key(number):
    return (number // 10000, number // 100 % 100, number % 100)


def parse_madison(text):
    """``apt-cache madison`` output -> {package: [versions]} in the order apt lists them."""
    offered = {}
    for name, version in _MADISON_RE.findall(str(text or "")):
        offered.setdefault(name, [])
        if version not in offered[name]:
            offered[name].append(version)
    return offered


def plan(info_text, installed, madison_text, wanted, allow_downgrade=False):
    """The ROCm user space this run installs.

    ``info_text``: /opt/rocm/.info/version ('' when none); ``installed``: {package: version} (package_facts); ``madison_text``:
    ``apt-cache madison`` of ``wanted`` and of every installed package of the installed release; ``wanted``: the meta package
    and extras. Returns ``{installed, target, direction, refused, install, not_offered, message}``; ``install`` holds
    ``name=version`` at the target release, for apt with explicit versions.
    """
    offered = parse_madison(madison_text)
    numbers = {release_number(version) for versions in offered.values() for version in versions} - {None}
    target = max(numbers, key=_key) if numbers else None
    installed_release = release_of_info(info_text)
    installed_number = None if installed_release is None else (
        installed_release[0] * 10000 + installed_release[1] * 100 + installed_release[2])
    old = sorted(name for name, version in (installed or {}).items()
                 if installed_number is not None and release_number(version) == installed_number)
    names = sorted(set(wanted or ()) | set(old))
    install, not_offered = [], []
    for name in names:
        at_target = [version for version in offered.get(name, []) if release_number(version) == target]
        if at_target:
            install.append("%s=%s" % (name, at_target[0]))
        else:
            not_offered.append(name)
    if target is None:
        direction = "unknown"
    elif installed_release is None:
        direction = "fresh"
    else:
        direction = ("same" if _key(target) == installed_release
                     else "upgrade" if _key(target) > installed_release else "downgrade")
    shown = release_of_number(target) if target is not None else None
    now = ".".join(str(part) for part in installed_release) if installed_release else None
    refused = direction == "downgrade" and not allow_downgrade
    if direction == "unknown":
        message = "apt offers no ROCm release of %s (radeonlab.llm.rocm_repo registers the repository)" % ", ".join(wanted or ())
    elif direction == "fresh":
        message = "ROCm %s user space to install (%s)" % (shown, ", ".join(wanted or ()))
    elif direction == "same":
        message = "ROCm %s user space installed, the configured line's" % shown
    elif direction == "upgrade":
        message = "ROCm user space %s -> %s (the configured line): %d package(s) move" % (now, shown, len(install))
    elif refused:
        message = ("ROCm user space %s is installed and the configured line is %s, older: a downgrade, refused. Set "
                   "rocm_repo_rocm_version to %s or newer, or rocm_driver_allow_downgrade: true to go down. Nothing was changed."
                   % (now, shown, now))
    else:
        message = "ROCm user space %s -> %s, a downgrade (rocm_driver_allow_downgrade: true)" % (now, shown)
    if not_offered and direction in ("upgrade", "downgrade"):
        message += "; the %s line has no %s (left to apt)" % (shown, ", ".join(not_offered))
    return {"installed": now, "target": shown, "direction": direction, "refused": refused, "install": install,
            "not_offered": not_offered, "message": message}

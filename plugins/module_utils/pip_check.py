# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which lines of ``pip check`` are problems in a venv radeonlab.llm installed (radeonlab.llm.venv_pip).

No Ansible import; Python 3.8 compatible. The filter ``radeonlab.llm.pip_check_problems`` wraps :func:`pip_check_problems`.

radeonlab.llm.venv_pip installs ``venv_pip_no_deps`` (liger-kernel) with ``pip install --no-deps``: its PyPI wheel
requires ``triton``, and a ROCm torch gets its Triton from another distribution (``pytorch-triton-rocm``; newer builds
``triton-rocm``) that installs the same ``triton`` import package, so pip would add PyPI's ``triton`` over torch's own
(LlamaFactory#10511: Triton 3.7.0 brought by ``pip install liger-kernel`` next to a ROCm 6.3 torch, "cannot get address
for 'hipDrvLaunchKernelEx'"). pip check then reports ``liger-kernel 0.8.5 requires triton, which is not installed.``;
that one line is not a problem when the venv's ``triton`` import package comes from a distribution whose version is
inside the requirement's range. Everything else pip check says stays a problem: the same requirement in a venv without
any Triton, a version outside the range, any package's requirement other than those of ``SHARED_IMPORT_PACKAGES``,
and every requirement of a package installed with its dependencies.

The facts come from the venv (roles/venv_pip/files/pip_check.py): pip check's exit status and lines, and for each
requirement of a no-deps package that no distribution of that name satisfies, the distributions that ship its import
package (``unmet``).
"""

from __future__ import annotations

import re

__all__ = ("SHARED_IMPORT_PACKAGES", "pip_check_problems")

# Requirement names whose import package other distributions ship in place of the named one: torch's Triton is
# pytorch-triton-rocm (ROCm wheels of download.pytorch.org) or triton-rocm, each installing ``triton/``.
SHARED_IMPORT_PACKAGES = ("triton",)

# pip/_internal/commands/check.py: "%s %s requires %s, which is not installed." (canonical names)
_MISSING = re.compile(r"^(?P<package>\S+) (?P<version>\S+) requires (?P<name>\S+), which is not installed\.$")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_CLEAN = "No broken requirements found."


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(requirements):
    names = set()
    for spec in requirements or ():
        match = _NAME.match(str(spec))
        if match:
            names.add(_canonical(match.group(1)))
    return names


def _verdict(line, no_deps, unmet):
    """(exempt, text): whether this pip check line is the shared-import requirement of a no-deps package, met in the venv."""
    match = _MISSING.match(line)
    if not match or _canonical(match.group("package")) not in no_deps or _canonical(match.group("name")) not in SHARED_IMPORT_PACKAGES:
        return False, line
    name, package = _canonical(match.group("name")), _canonical(match.group("package"))
    entry = next((e for e in unmet if _canonical(e.get("package", "")) == package and _canonical(e.get("name", "")) == name), None)
    if entry is None:
        return False, line
    shipped = entry.get("providers") or []
    good = [p for p in shipped if p.get("satisfies")]
    what = "%s %s (installed without its dependencies) requires %s" % (package, match.group("version"), entry.get("requirement", name))
    if good:
        return True, "%s: the venv's %s import package is %s" % (
            what, entry.get("import", name), ", ".join("%s %s's" % (p["name"], p["version"]) for p in good))
    if shipped:
        return False, "%s: the venv's %s import package is %s, outside that range" % (
            what, entry.get("import", name), ", ".join("%s %s's" % (p["name"], p["version"]) for p in shipped))
    return False, ("%s: no distribution in the venv ships the %s import package (a ROCm torch brings its own, "
                   "pytorch-triton-rocm, on Linux x86_64); give the venv torch's Triton, or do not install %s" % (
                       what, entry.get("import", name), package))


def pip_check_problems(report, no_deps=()):
    """Split pip check's lines into problems and the lines exempt as described above.

    ``report``: {"rc": int, "lines": [str], "unmet": [...]} from files/pip_check.py. ``no_deps``: the requirements
    installed with --no-deps (specifiers or names). Returns {"problems": [str], "exempt": [str]}.
    """
    report = report or {}
    lines = [str(line).strip() for line in report.get("lines") or [] if str(line).strip()]
    rc = int(report.get("rc") or 0)
    if rc == 0:
        return {"problems": [], "exempt": []}
    names, unmet = _names(no_deps), list(report.get("unmet") or [])
    real = [line for line in lines if line != _CLEAN and not line.startswith("WARNING:")]
    problems, exempt = [], []
    for line in real:
        is_exempt, text = _verdict(line, names, unmet)
        (exempt if is_exempt else problems).append(text)
    if not real:
        problems = lines or ["pip check failed (exit %d) without saying why" % rc]
    return {"problems": problems, "exempt": exempt}

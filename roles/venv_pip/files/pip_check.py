# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pip check in this venv, and what answers for the requirements pip installed without dependencies (radeonlab.llm.venv_pip).

    <venv>/bin/python pip_check.py [NO_DEPS_REQUIREMENT...]

Prints one JSON object: {"rc": int, "lines": [pip check's lines], "unmet": [...]}. For each installed
distribution named on the command line (venv_pip_no_deps: installed with ``pip install --no-deps``), every
requirement of it that holds here and that no distribution of that name satisfies is one ``unmet`` entry:
{"package", "version", "requirement", "name", "import", "providers": [{"name", "version", "satisfies"}]} -
the installed distributions that ship the import package of that name (``triton`` is shipped by
pytorch-triton-rocm, torch's Triton on ROCm) and whether their version is inside the requirement's range.
What pip check may then leave unmet is decided on the controller (plugins/module_utils/pip_check.py).
Read-only; uses the ``packaging`` copy every pip vendors; exit status 0 (pip check's own is ``rc``).
"""
import json
import subprocess
import sys

try:
    from importlib import metadata
except ImportError:  # pragma: no cover - Python < 3.8 is never a venv this role creates
    sys.exit("Python >= 3.8 required")

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name


def providers(package):
    """The installed distributions that ship the import package ``package`` (their top_level.txt, else their RECORD)."""
    found, seen = [], set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if not name or canonicalize_name(name) in seen:
            continue
        seen.add(canonicalize_name(name))
        top = dist.read_text("top_level.txt")
        if top is not None:
            ships = package in top.split()
        else:
            ships = any(getattr(path, "parts", ("",))[0] == package for path in dist.files or [])
        if ships:
            found.append({"name": name, "version": dist.version})
    return sorted(found, key=lambda p: canonicalize_name(p["name"]))


def _installed(name):
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def unmet(no_deps):
    """What the distributions installed without their dependencies require and no distribution of that name satisfies."""
    found = []
    for spec in no_deps:
        dist = _installed(Requirement(spec).name)
        if dist is None:
            continue  # pip check does not list it either; the install's own probe says it is missing
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            have = _installed(req.name)
            if have is not None and req.specifier.contains(have.version, prereleases=True):
                continue
            package = canonicalize_name(req.name).replace("-", "_")
            shipped = [dict(p, satisfies=req.specifier.contains(p["version"], prereleases=True)) for p in providers(package)]
            found.append({"package": canonicalize_name(dist.metadata["Name"]), "version": dist.version, "requirement": str(req),
                          "name": canonicalize_name(req.name), "import": package, "providers": shipped})
    return found


def main(argv):
    proc = subprocess.run([sys.executable, "-m", "pip", "check", "--disable-pip-version-check"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    print(json.dumps({"rc": proc.returncode, "lines": lines, "unmet": unmet(argv)}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

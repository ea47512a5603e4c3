# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Are these requirements already satisfied in this Python environment? (radeonlab.llm.venv_pip)

    <venv>/bin/python torch_probe.py 'torch==2.9.1+rocm6.4' 'torchvision==0.24.1+rocm6.4' ... [--no-deps REQUIREMENT...]

Prints one JSON object: {"satisfied": bool, "installed": {name: version}, "problems": [text]}.
Checks each requirement and, recursively, the dependencies of what it finds, the way pip would (a
marker that does not hold here drops a requirement; ``name[extra]`` adds what that extra needs), but
without pip's network access, so a satisfied venv costs no download at all. The requirements after
``--no-deps`` are what pip installs without their dependencies (venv_pip_no_deps): each must be there,
but what it requires is not followed (the venv's own packages answer for it; pip check says which may
be missing). Uses the ``packaging`` copy that every pip vendors; read-only; exit status 0 unless the
arguments are wrong.
"""
import json
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


def _installed(name):
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _applies(req, extras):
    """Does the requirement's marker hold here for one of these extras ("" = none), as pip decides?"""
    return req.marker is None or any(req.marker.evaluate({"extra": extra}) for extra in extras)


def probe(requirements, no_deps=()):
    installed, problems, seen = {}, [], set()
    todo = [(req, None) for req in map(Requirement, list(requirements) + list(no_deps)) if _applies(req, [""])]
    alone = {canonicalize_name(Requirement(spec).name) for spec in no_deps}
    while todo:
        req, parent = todo.pop()
        key = (canonicalize_name(req.name), str(req.specifier), tuple(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        dist = _installed(req.name)
        where = " (needed by %s)" % parent if parent else ""
        if dist is None:
            problems.append("%s is not installed%s" % (req, where))
            continue
        version = dist.version
        installed[canonicalize_name(req.name)] = version
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            problems.append("%s %s is installed, %s wanted%s" % (req.name, version, req, where))
            continue
        if canonicalize_name(req.name) in alone:
            continue
        extras = [""] + sorted(req.extras)  # name[extra] also needs what that extra adds
        for dep in dist.requires or []:
            dep_req = Requirement(dep)
            if _applies(dep_req, extras):
                todo.append((dep_req, "%s %s" % (req.name, version)))
    return {"satisfied": not problems, "installed": installed, "problems": sorted(problems)}


def main(argv):
    split = argv.index("--no-deps") if "--no-deps" in argv else len(argv)
    if not argv[:split] and not argv[split + 1:]:
        sys.stderr.write("usage: torch_probe.py REQUIREMENT... [--no-deps REQUIREMENT...]\n")
        return 2
    print(json.dumps(probe(argv[:split], argv[split + 1:]), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build wheels for pinned requirements that PyPI only ships as sdists (radeonlab.llm.llamafactory).

    python local_wheels.py --dir DIR --index-url URL [--check] NAME==VERSION...

The fleet wheelhouse (radeonlab.llm.venv_pip's wheelhouse.py) downloads binary wheels only
(--only-binary=:all:), and LLaMA-Factory's metrics requirement jieba has no wheel on PyPI. This builds
`NAME-VERSION-*.whl` into DIR (pure-Python sdists only: the result must be a py3-none-any wheel, so the
controller's Python does not matter) unless such a wheel is already there. wheelhouse.py then finds it
through --find-links DIR. Prints {"changed": bool, "present": [...], "built": [...], "missing": [...]}.

Two plays filling the same wheelhouse take turns on wheelhouse.py's lock (DIR/.radeonlab/lock), and a
wheel is built in a private folder and renamed into DIR, so nobody ever sees half a wheel there.
"""
import argparse
import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

STATE = ".radeonlab"  # wheelhouse.py's state folder: its lock serialises every writer of DIR


def _norm(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def _existing(directory, name, version):
    pattern = os.path.join(directory, "*.whl")
    for path in glob.glob(pattern):
        parts = os.path.basename(path).split("-")
        if len(parts) >= 5 and _norm(parts[0]) == _norm(name) and parts[1] == version:
            return os.path.basename(path)
    return None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--index-url", required=True)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("requirements", nargs="*")
    args = parser.parse_args(argv)
    result = {"changed": False, "present": [], "built": [], "missing": []}
    lock = None
    if not args.check and args.requirements:
        os.makedirs(os.path.join(args.dir, STATE), exist_ok=True)
        lock = open(os.path.join(args.dir, STATE, "lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        return _run(args, result)
    finally:
        if lock is not None:
            lock.close()


def _run(args, result):
    for req in args.requirements:
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$", req.strip())
        if not match:
            print(json.dumps({"failed": True, "msg": "%s is not pinned as NAME==VERSION" % req}))
            return 1
        name, version = match.groups()
        found = _existing(args.dir, name, version)
        if found:
            result["present"].append(found)
            continue
        result["changed"] = True
        if args.check:
            result["missing"].append(req)
            continue
        building = tempfile.mkdtemp(prefix="build-", dir=os.path.join(args.dir, STATE))
        try:
            argv_pip = [sys.executable, "-m", "pip", "--isolated", "wheel", "--disable-pip-version-check",
                        "--progress-bar", "off", "--no-deps", "--no-binary", name, "--index-url", args.index_url,
                        "--wheel-dir", building, req]
            proc = subprocess.run(argv_pip, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, env=dict(os.environ, PIP_CONFIG_FILE=os.devnull), check=False)
            found = _existing(building, name, version)
            if proc.returncode != 0 or not found:
                print(json.dumps({"failed": True, "msg": "pip wheel %s failed (rc %d): %s" % (
                    req, proc.returncode, proc.stdout[-2000:])}))
                return 1
            if not found.endswith("-py3-none-any.whl") and not found.endswith("-py2.py3-none-any.whl"):
                print(json.dumps({"failed": True, "msg": "%s built %s, which is not a pure-Python wheel; build it for the "
                                  "hosts' Python and platform instead" % (req, found)}))
                return 1
            os.replace(os.path.join(building, found), os.path.join(args.dir, found))
        finally:
            shutil.rmtree(building, ignore_errors=True)
        result["built"].append(found)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

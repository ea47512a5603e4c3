# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fill a fleet wheelhouse once, on the controller (radeonlab.llm.venv_pip, for pytorch_rocm and llamafactory).

    python wheelhouse.py --dir DIR --sets JSON [--check]

JSON is a list of wheel sets, one per distinct host kind of the play:
    {"python_version": "3.11", "platform": "manylinux_2_28_x86_64", "requirements": [...], "no_deps": [...],
     "index_url": "...", "extra_index_urls": [...], "trusted_hosts": [...], "pip_options": [...]}

For every set, ``pip download`` fetches the requirements and all their dependencies as binary
wheels for that Python and platform, then a second ``pip download --no-deps`` the wheels of
"no_deps" alone (what the hosts install without its dependencies: venv_pip_no_deps), into DIR
(flat, so one HTTP directory listing serves all sets to ``pip install --no-index --find-links``).
A set that was downloaded completely before is skipped: DIR/.radeonlab/<key>.json records what it
consists of (key = hash of the requirements, Python, platform and indexes), and its files are still there. pip runs isolated from the
controller's own pip configuration (files and PIP_* variables), so a laptop and a CI runner with
extra indexes or constraints configured download the same thing; everything it needs is passed
explicitly. Its output goes to DIR/.radeonlab/<key>.log while it runs.

Prints one JSON object: {"changed": bool, "sets": [...], "bytes": N, "files": N, "seconds": S}; each set
lists the file names it consists of ("names", what a push delivers to its hosts) and their recorded
sha256 ("hashes", the links of the host's --find-links page). A recorded wheel whose bytes changed since
its download fails the run (before anything is served, pushed or downloaded), naming the file. A wheel is
hashed again only when its stat (inode, size, mtime, ctime) differs from the one recorded at download: any
later write moves ctime, so an untouched multi-GB set is checked in milliseconds, not re-read on every run.
With --check nothing is written; sets that would be downloaded have status "missing".
"""
import argparse
import fcntl
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

STATE = ".radeonlab"
_LINE = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(.+?)\s*$")
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_(.+)$")


def platforms(platform):
    """pip (< 24) does not widen --platform manylinux_2_28_x86_64 to older glibc tags; do it here.

    A host with glibc 2.28 runs every manylinux_2_N wheel with N <= 28 (and the legacy aliases
    manylinux2014/2010/1 = 2_17/2_12/2_5); many dependencies (nvidia-*, numpy) only carry such tags.
    """
    match = _MANYLINUX.match(platform)
    if not match or match.group(1) != "2":
        return [platform]
    minor, arch = int(match.group(2)), match.group(3)
    result = ["manylinux_2_%d_%s" % (m, arch) for m in range(minor, 4, -1)]
    for legacy, floor in (("manylinux2014", 17), ("manylinux2010", 12), ("manylinux1", 5)):
        if minor >= floor:
            result.append("%s_%s" % (legacy, arch))
    return result


def key_of(wheel_set):
    identity = {k: wheel_set.get(k) for k in ("python_version", "platform", "index_url")}
    identity["requirements"] = sorted(wheel_set.get("requirements") or [])
    identity["extra_index_urls"] = sorted(wheel_set.get("extra_index_urls") or [])
    if wheel_set.get("no_deps"):  # only where there are some: the keys (stamps) of the sets without stay as they were
        identity["no_deps"] = sorted(wheel_set["no_deps"])
    blob = json.dumps(identity, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


_HASHED = {}  # (path, inode, size, mtime) -> sha256, within one run of this script (sets share wheels)


def sha256_of(path):
    """The one hash of the wheelhouse: recorded at download, checked before every use, handed to pip in each link."""
    info = os.stat(path)
    key = (path, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = _sha256_file(path)
    return _HASHED[key]


def stat_of(path):
    """What changes when a file's bytes do: a later write moves ctime, which no unprivileged call can set back."""
    info = os.stat(path)
    return [info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _verified(path, entry):
    """The file holds the bytes recorded at its download: untouched since (its stat as recorded) or the same sha256."""
    return entry.get("stat") == stat_of(path) or sha256_of(path) == entry["sha256"]


def _sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def present(directory, stamp):
    """The recorded files of a set, or None when the record is missing, predates the hashes, or a file is gone.

    A recorded file whose bytes no longer match the sha256 recorded at download raises RuntimeError: it is
    never served, pushed or downloaded over (pip would reuse the changed file as "already downloaded").
    """
    try:
        with open(stamp, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    files = record.get("files") or []
    if not files or not all(isinstance(e, dict) and e.get("sha256") for e in files):
        return None
    gone, changed = False, []
    for entry in files:
        path = os.path.join(directory, entry["name"])
        if not os.path.isfile(path) or os.path.islink(path):
            gone = True
        elif os.path.getsize(path) != entry["size"] or not _verified(path, entry):
            changed.append(entry["name"])
    if changed:
        raise RuntimeError(
            "wheelhouse %s: tampered wheel refused: %s does not match the sha256 recorded at its download (%s). "
            "Nothing was served, pushed or installed from it. If you replaced it on purpose, delete it and %s to "
            "download the set again; otherwise treat the wheelhouse as compromised." % (
                directory, ", ".join(changed), stamp, stamp))
    return None if gone else files


def links_page(wheels):
    """The HTML page pip's --find-links reads: one link per wheel, carrying its recorded sha256 (pip checks it)."""
    links = ['<a href="%s#sha256=%s">%s</a><br>' % (urllib.parse.quote(name), digest, html.escape(name))
             for name, digest in sorted(wheels.items())]
    return "<!DOCTYPE html>\n<html><head><title>radeonlab wheelhouse</title></head><body>\n%s\n</body></html>\n" % (
        "\n".join(links))


def pip_argv(wheel_set, directory, no_deps=False):
    """The pip download of the set's requirements with their dependencies, or (no_deps) of its "no_deps" alone."""
    argv = [sys.executable, "-m", "pip", "--isolated", "download", "--disable-pip-version-check",
            "--progress-bar", "off", "--only-binary=:all:", "--implementation", "cp",
            "--python-version", wheel_set["python_version"], "--dest", directory,
            "--index-url", wheel_set["index_url"]]
    for platform in platforms(wheel_set["platform"]):
        argv += ["--platform", platform]
    for url in wheel_set.get("extra_index_urls") or []:
        argv += ["--extra-index-url", url]
    for host in wheel_set.get("trusted_hosts") or []:
        argv += ["--trusted-host", host]
    argv += list(wheel_set.get("pip_options") or [])
    argv += ["--no-deps"] + list(wheel_set["no_deps"]) if no_deps else list(wheel_set["requirements"])
    return argv


def download(wheel_set, directory, log_path):
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    names = []
    with open(log_path, "w", encoding="utf-8") as log:
        for no_deps in [False] + ([True] if wheel_set.get("no_deps") else []):
            argv = pip_argv(wheel_set, directory, no_deps)
            log.write("$ %s\n" % " ".join(argv))
            log.flush()
            proc = subprocess.Popen(argv, cwd=directory, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, universal_newlines=True)
            tail = []
            for line in proc.stdout:
                log.write(line)
                log.flush()
                tail = (tail + [line.rstrip()])[-20:]
                match = _LINE.match(line)
                if match:
                    names.append(os.path.basename(match.group(1)))
            rc = proc.wait()
            if rc != 0:
                what = ["--no-deps"] + wheel_set["no_deps"] if no_deps else wheel_set["requirements"]
                raise RuntimeError("pip download failed (rc %d) for %s on Python %s; last lines of %s:\n%s" % (
                    rc, " ".join(what), wheel_set["python_version"], log_path, "\n".join(tail)))
    files = []
    for name in sorted(set(names)):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise RuntimeError("pip reported %s but it is not in %s (see %s)" % (name, directory, log_path))
        before = stat_of(path)
        entry = {"name": name, "size": os.path.getsize(path), "sha256": sha256_of(path)}
        if stat_of(path) == before:  # recorded only for a file that did not change while it was hashed
            entry["stat"] = before
        files.append(entry)
    if not files:
        raise RuntimeError("pip download reported no files (see %s)" % log_path)
    return files


def run(directory, sets, check):
    directory = os.path.abspath(directory)
    state = os.path.join(directory, STATE)
    result = {"changed": False, "sets": [], "bytes": 0, "files": 0, "seconds": 0.0, "dir": directory}
    started = time.time()
    lock = None
    if not check:
        os.makedirs(state, exist_ok=True)
        lock = open(os.path.join(state, "lock"), "w")
        fcntl.flock(lock, fcntl.LOCK_EX)  # two plays filling the same wheelhouse take turns
    try:
        for wheel_set in sets:
            key = key_of(wheel_set)
            stamp = os.path.join(state, key + ".json")
            entry = {"key": key, "python_version": wheel_set["python_version"],
                     "requirements": wheel_set["requirements"], "index_url": wheel_set["index_url"]}
            files = present(directory, stamp)
            if files is not None:
                entry["status"] = "present"
            elif check:
                entry["status"] = "missing"
                result["changed"] = True
            else:
                t0 = time.time()
                files = download(wheel_set, directory, os.path.join(state, key + ".log"))
                entry["status"] = "downloaded"
                entry["seconds"] = round(time.time() - t0, 1)
                record = {"key": key, "set": wheel_set, "files": files, "seconds": entry["seconds"],
                          "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                with open(stamp + ".tmp", "w", encoding="utf-8") as handle:
                    json.dump(record, handle, indent=1, sort_keys=True)
                os.replace(stamp + ".tmp", stamp)
                result["changed"] = True
            entry["names"] = [f["name"] for f in files or []]
            entry["hashes"] = {f["name"]: f["sha256"] for f in files or []}
            entry["files"] = len(files or [])
            entry["bytes"] = sum(f["size"] for f in files or [])
            result["files"] += entry["files"]
            result["bytes"] += entry["bytes"]
            result["sets"].append(entry)
    finally:
        if lock is not None:
            lock.close()
    result["seconds"] = round(time.time() - started, 1)
    return result


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--sets", required=True, help="JSON list of wheel sets")
    parser.add_argument("--check", action="store_true", help="report only, write nothing")
    args = parser.parse_args(argv)
    try:
        sets = json.loads(args.sets)
        if not isinstance(sets, list) or not all(isinstance(s, dict) for s in sets):
            raise ValueError("--sets must be a JSON list of objects")
        for wheel_set in sets:
            missing = [k for k in ("python_version", "platform", "requirements", "index_url") if not wheel_set.get(k)]
            if missing:
                raise ValueError("wheel set lacks %s: %r" % (", ".join(missing), wheel_set))
        print(json.dumps(run(args.dir, sets, args.check), sort_keys=True))
    except (ValueError, RuntimeError, OSError) as exc:
        print(json.dumps({"failed": True, "msg": str(exc)}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Free disk space before the venv installs and the model copy: one sentence per file system that is too full.

No Ansible import; Python 3.8+. The mounts come from ``findmnt --list --bytes --json --output TARGET,AVAIL,FSTYPE``
(read fresh on the host: Ansible's ``ansible_facts['mounts']`` leaves out file systems whose device name does not
begin with ``/`` - overlay roots, tmpfs, ZFS datasets - and may come from a fact cache) or in the shape of
``ansible_facts['mounts']`` (``mount``, ``size_available``). Everything the play will write on one file system is
added up before it is compared with what is free there.
"""

from __future__ import annotations

import json
import math
import posixpath

from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import VENV_SPACE

GIB = 1024 ** 3
MIB = 1024 ** 2


def parse_mounts(mounts):
    """``findmnt --json`` text (or its parsed dict), or a list of ``ansible_facts['mounts']`` entries, as
    ``[{"mount", "size_available", "fstype"}]`` in the order the kernel lists them (the last mount on a path wins)."""
    if isinstance(mounts, str):
        mounts = json.loads(mounts) if mounts.strip() else []
    if isinstance(mounts, dict):
        mounts = mounts.get("filesystems") or []
    result = []
    for entry in mounts or []:
        point = entry.get("mount", entry.get("target"))
        avail = entry.get("size_available", entry.get("avail"))
        if point and avail is not None and str(avail).strip().isdigit():
            result.append({"mount": point, "size_available": int(avail), "fstype": entry.get("fstype", "")})
    return result


def mount_for(path, mounts):
    """The mount holding ``path`` (which need not exist yet): the longest mount point that is the path or one of
    its parents, ``/`` when no other matches; None when ``mounts`` has neither."""
    path = posixpath.normpath("/" + str(path).lstrip("/"))
    best, best_len = None, -1
    for entry in parse_mounts(mounts):
        point = posixpath.normpath(entry["mount"])
        if point == "/" or path == point or path.startswith(point + "/"):
            length = 0 if point == "/" else len(point)
            if length >= best_len:  # equal length: a later mount hides the earlier one
                best, best_len = entry, length
    return best


def gib(count, round_up=False):
    """``count`` bytes in words: GiB with two decimals (up for what is needed, down for what is free, so "enough"
    never reads as too little), and MiB too below 1 GiB."""
    scaled = count * 100.0 / GIB
    text = "%.2f GiB" % ((math.ceil(scaled) if round_up else math.floor(scaled)) / 100.0)
    if count < GIB:
        scaled = count * 10.0 / MIB
        text += " (%.1f MiB)" % ((math.ceil(scaled) if round_up else math.floor(scaled)) / 10.0)
    return text


def venv_bytes(stack, override_gib=0):
    """Bytes a stack adds to a venv: ``override_gib`` (the role's ``<stack>_min_free_gib``) when > 0, else the
    support matrix's estimate (VENV_SPACE, with its source)."""
    given = float(override_gib or 0)
    return int(given * GIB) if given > 0 else int(VENV_SPACE[stack]["gib"] * GIB)


def _tree(files, root):
    root = posixpath.normpath(str(root))
    return dict((posixpath.relpath(posixpath.normpath(item["path"]), root), int(item.get("size") or 0)) for item in files or [])


def copy_bytes(source_files, source_root, dest_files, dest_root):
    """Bytes a directory copy writes: the source files (``ansible.builtin.find`` results) whose copy under
    ``dest_root`` is missing or of another size. A file of the same size is taken as the same copy: the copy module
    replaces one that differs file by file (a temporary file, then a rename), which never needs more than its size."""
    dest = _tree(dest_files, dest_root)
    return sum(size for rel, size in _tree(source_files, source_root).items() if dest.get(rel) != size)


def need_bytes(need):
    """What one need adds: ``bytes``, a ``stack`` estimate (with ``override_gib``; 0 when ``installed``), or a
    ``copy`` {source, source_root, dest, dest_root}."""
    if need.get("installed"):
        return 0
    if need.get("stack"):
        return venv_bytes(need["stack"], need.get("override_gib"))
    if need.get("copy"):
        copy = need["copy"]
        return copy_bytes(copy.get("source"), copy["source_root"], copy.get("dest"), copy["dest_root"])
    return int(need.get("bytes") or 0)


def _unique(texts):
    result = []
    for text in texts:
        if text not in result:
            result.append(text)
    return result


def space_problems(needs, mounts):
    """One sentence per file system on which ``needs`` (a list of {variable, path, what, fix, real?} plus what
    ``need_bytes`` reads) would write more than is free. ``real`` is the path with its symlinks resolved (realpath
    -m); the path itself when absent. A path whose mount is unknown is not judged."""
    groups = {}
    for need in needs or []:
        count = need_bytes(need)
        entry = mount_for(need.get("real") or need["path"], mounts)
        if count <= 0 or entry is None:
            continue
        group = groups.setdefault(entry["mount"], {"entry": entry, "items": []})
        group["items"].append((need, count))
    problems = []
    for point in sorted(groups):
        entry, items = groups[point]["entry"], groups[point]["items"]
        total = sum(count for _need, count in items)
        if total <= entry["size_available"]:
            continue
        names = " and ".join(_unique("%s %s" % (need["variable"], need["path"]) for need, _count in items))
        parts = "; ".join("%s %s" % (need["what"], gib(count, round_up=True)) for need, count in items)
        fixes = "; ".join(_unique(need["fix"] for need, _count in items))
        problems.append(
            "Not enough disk space for %s: the file system at %s%s has %s free, %s is needed (%s). Free space "
            "there, or %s." % (names, point, " (%s)" % entry["fstype"] if entry["fstype"] else "", gib(entry["size_available"]),
                               gib(total, round_up=True), parts, fixes))
    return problems

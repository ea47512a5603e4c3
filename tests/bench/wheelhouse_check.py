# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet wheelhouse's tamper check, with and without the stat recorded at download, in one run.

    python3 tests/bench/wheelhouse_check.py [WHEELHOUSE]      (default: .cache/wheelhouse, filled by make lab/test)

Hard-links every recorded wheel of WHEELHOUSE into a scratch wheelhouse beside it (same inode, same bytes), copies
its stamps without the "stat" of each file (as stamps were written before it existed), times one
`wheelhouse.py --check` of all its sets, adds the stat of each file to the stamps, times the check again, and prints
both times and their ratio. Test infrastructure only; WHEELHOUSE is left as it was.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "roles", "venv_pip", "files", "wheelhouse.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import wheelhouse  # noqa: E402  pylint: disable=wrong-import-position


def scratch_copy(source, work):
    os.makedirs(os.path.join(work, ".radeonlab"))
    sets = []
    for stamp in sorted(glob.glob(os.path.join(source, ".radeonlab", "*.json"))):
        with open(stamp, encoding="utf-8") as handle:
            record = json.load(handle)
        if "set" not in record:
            continue  # the server's state file, not a set
        sets.append(record["set"])
        for entry in record["files"]:
            entry.pop("stat", None)
            target = os.path.join(work, entry["name"])
            if not os.path.exists(target):
                os.link(os.path.join(source, entry["name"]), target)
        with open(os.path.join(work, ".radeonlab", os.path.basename(stamp)), "w", encoding="utf-8") as handle:
            json.dump(record, handle)
    return sets


def timed_check(work, sets):
    start = time.monotonic()
    run = subprocess.run([sys.executable, SCRIPT, "--dir", work, "--sets", json.dumps(sets), "--check"],
                         capture_output=True, text=True, check=True)
    seconds = time.monotonic() - start
    report = json.loads(run.stdout)
    assert all(s["status"] == "present" for s in report["sets"]), report
    return seconds, report


def add_stats(work):
    for stamp in glob.glob(os.path.join(work, ".radeonlab", "*.json")):
        with open(stamp, encoding="utf-8") as handle:
            record = json.load(handle)
        for entry in record["files"]:
            entry["stat"] = wheelhouse.stat_of(os.path.join(work, entry["name"]))
        with open(stamp, "w", encoding="utf-8") as handle:
            json.dump(record, handle)


def main():
    source = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".cache", "wheelhouse"))
    work = tempfile.mkdtemp(prefix="wheelhouse-check-", dir=os.path.dirname(source))  # same file system: hard links
    try:
        sets = scratch_copy(source, work)
        if not sets:
            sys.exit("no recorded wheel set in %s (run make lab or make test first)" % source)
        hashed, report = timed_check(work, sets)
        add_stats(work)
        stat_only = timed_check(work, sets)[0]
    finally:
        shutil.rmtree(work)
    print("| stamps | s for one --check (%d sets, %d files, %.1f GB) |\n|---|---|" % (len(sets), report["files"], report["bytes"] / 1e9))
    print("| without stat (every wheel hashed) | %.2f |\n| with the stat recorded at download | %.2f |" % (hashed, stat_only))
    print("ratio: %.3f" % (stat_only / hashed))


if __name__ == "__main__":
    main()

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Repack a bitsandbytes wheel without the native libraries a GPU machine will not load, so the wheels a device call carries
fit its 64 MiB (bitsandbytes 0.50.2 is 43 MB, 30 MB of it CUDA 11.8-12.8 builds; an H100 with CUDA 13 loads
libbitsandbytes_cuda130). The wheel's RECORD loses the dropped files' lines, so pip installs it as it would the original.

    python3 tests/bench/after/repack_bitsandbytes.py SOURCE.whl OUT_DIR [--drop 'libbitsandbytes_cuda1[12]*.so']
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import zipfile

DEFAULT_DROP = ("libbitsandbytes_cuda11*.so", "libbitsandbytes_cuda12*.so")


def repack(source, out_dir, drop=DEFAULT_DROP):
    target = os.path.join(out_dir, os.path.basename(source))
    dropped = []
    with zipfile.ZipFile(source) as wheel, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        names = [info.filename for info in wheel.infolist()]
        dropped = [name for name in names if any(fnmatch.fnmatch(os.path.basename(name), pattern) for pattern in drop)]
        for info in wheel.infolist():
            if info.filename in dropped:
                continue
            data = wheel.read(info.filename)
            if info.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(True) if line.split(b",", 1)[0].decode() not in dropped)
            out.writestr(info, data)
    return target, dropped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("out_dir")
    parser.add_argument("--drop", action="append", help="a file-name pattern to leave out (repeatable)")
    args = parser.parse_args()
    if os.path.abspath(os.path.dirname(args.source)) == os.path.abspath(args.out_dir):
        parser.error("OUT_DIR must not be the source's folder")
    target, dropped = repack(args.source, args.out_dir, tuple(args.drop or DEFAULT_DROP))
    print("%s: %d file(s) left out (%s), %.1f MB -> %.1f MB" % (
        target, len(dropped), ", ".join(os.path.basename(name) for name in dropped),
        os.path.getsize(args.source) / 1e6, os.path.getsize(target) / 1e6))


if __name__ == "__main__":
    main()

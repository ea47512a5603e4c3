# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora.digest``: one sha256 over this package's files (names and contents).

The lora_job role runs it on the controller and on each host and copies the package only where the two
differ: one command instead of a stat and checksum per file. Byte-code caches are not part of it.
"""

import hashlib
import os
import sys


def package_digest(root: str = os.path.dirname(os.path.abspath(__file__))) -> str:
    digest = hashlib.sha256()
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                content = handle.read()
            digest.update(b"%s\0%d\0" % (os.path.relpath(path, root).encode(), len(content)))
            digest.update(content)
    return digest.hexdigest()


if __name__ == "__main__":
    print(package_digest())
    sys.exit(0)

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the LoRA runner's vocabulary.json from support_matrix.VOCABULARY.

    python tests/tools/gen_runner_vocabulary.py --write    # rewrite roles/lora_job/files/radeonlab_lora/vocabulary.json
    python tests/tools/gen_runner_vocabulary.py --check    # exit 1 when the committed file is stale

tests/unit/lora_job/test_vocabulary.py runs the --check comparison.
"""

import argparse
import importlib.util
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TARGET = os.path.join(ROOT, "roles", "lora_job", "files", "radeonlab_lora", "vocabulary.json")


def _support_matrix():
    spec = importlib.util.spec_from_file_location("support_matrix", os.path.join(ROOT, "plugins", "module_utils", "support_matrix.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render():
    names = {key: list(value) if isinstance(value, tuple) else value for key, value in _support_matrix().VOCABULARY.items()}
    return json.dumps({"_generated_by": "tests/tools/gen_runner_vocabulary.py from plugins/module_utils/support_matrix.py "
                                        "VOCABULARY: do not edit", **names}, indent=2, sort_keys=True) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="rewrite vocabulary.json")
    group.add_argument("--check", action="store_true", help="fail when vocabulary.json is stale")
    args = parser.parse_args(argv)
    wanted = render()
    if args.write:
        with open(TARGET, "w", encoding="utf-8") as handle:
            handle.write(wanted)
        return 0
    with open(TARGET, encoding="utf-8") as handle:
        if handle.read() != wanted:
            sys.stderr.write("%s is stale: run python tests/tools/gen_runner_vocabulary.py --write\n" % TARGET)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two ``BENCH_PROFILE`` lines (tests/bench/site/sitecustomize.py) side by side, per optimizer step: GPU busy time, kernel
launches, operator calls, and the operators whose device time differs most.

    python3 tests/bench/compare_profiles.py A.jsonl:TAG_A B.jsonl:TAG_B
"""

from __future__ import annotations

import json
import sys


def load(arg: str) -> dict:
    path, tag = arg.rsplit(":", 1)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("tag") == tag:
                return row
    raise SystemExit(f"no profile tagged {tag!r} in {path}")


def per_step(row: dict) -> dict:
    n = row["steps"]
    ops = {}
    for op in row["top_device"] + row["top_cpu"]:
        ops[op["name"]] = {k: op[k] / n for k in ("count", "device_ms", "cpu_ms")}
    return {"busy_s": row["device_busy_s"] / n, "launches": row["kernel_launches"] / n, "ops": row["cpu_ops"] / n, "by_op": ops}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__)
        return 2
    a, b = (per_step(load(arg)) for arg in argv)
    print("| per optimizer step | A | B | B / A |\n|---|---|---|---|")
    for key, label in (("busy_s", "GPU busy s (kernel time)"), ("launches", "kernel launches"), ("ops", "operator calls")):
        print(f"| {label} | {a[key]:,.3f} | {b[key]:,.3f} | {b[key] / a[key]:.4f} |")
    print("\n| operator / kernel | calls A | calls B | device ms A | device ms B |\n|---|---|---|---|---|")
    names = set(a["by_op"]) | set(b["by_op"])
    zero = {"count": 0, "device_ms": 0.0, "cpu_ms": 0.0}
    diffs = sorted(names, key=lambda n: -abs(b["by_op"].get(n, zero)["device_ms"] - a["by_op"].get(n, zero)["device_ms"]))
    for name in diffs[:10]:
        x, y = a["by_op"].get(name, zero), b["by_op"].get(name, zero)
        print(f"| `{name[:60]}` | {x['count']:,.0f} | {y['count']:,.0f} | {x['device_ms']:.1f} | {y['device_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

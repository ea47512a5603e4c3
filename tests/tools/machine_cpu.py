"""What the whole machine's CPUs did between two moments, from /proc/stat (issue 16 item 4).

`make test` is CPU-bound on a 2-core machine when its wall time is its busy CPU seconds divided by the cores; idle or
iowait time means it waited, steal time means the hypervisor took the cores. Test tooling only.

    tests/tools/machine_cpu.py snapshot FILE      # write the counters now
    tests/tools/machine_cpu.py since FILE LABEL   # one line: what the cores did since FILE was written
"""

import os
import sys
import time

# /proc/stat's first line: cpu user nice system idle iowait irq softirq steal guest guest_nice (clock ticks)
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY = ("user", "nice", "system", "irq", "softirq")


def counters(stat_text):
    values = stat_text.splitlines()[0].split()[1:1 + len(FIELDS)]
    return dict(zip(FIELDS, (int(v) for v in values)))


def summary(before, after, wall, cores, tick, label):
    delta = {name: (after[name] - before[name]) / tick for name in FIELDS}
    total = sum(delta.values()) or 1.0
    busy = sum(delta[name] for name in BUSY)
    share = {name: 100 * delta[name] / total for name in ("idle", "iowait", "steal")}
    return (
        f"{label}: {wall:.0f}s wall on {cores} cores: {busy:.0f} CPU-s busy ({100 * busy / total:.0f} %), "
        f"idle {share['idle']:.0f} %, iowait {share['iowait']:.0f} %, steal {share['steal']:.0f} %; "
        f"busy CPU-s / cores = {busy / cores:.0f}s"
    )


def main(argv):
    with open("/proc/stat", encoding="ascii") as stat:
        now = counters(stat.read())
    if argv[1:2] == ["snapshot"] and len(argv) == 3:
        with open(argv[2], "w", encoding="ascii") as out:
            out.write(f"{time.time()} " + " ".join(str(now[name]) for name in FIELDS) + "\n")
        return 0
    if argv[1:2] == ["since"] and len(argv) == 4:
        with open(argv[2], encoding="ascii") as snap:
            stamp, *values = snap.read().split()
        before = dict(zip(FIELDS, (int(v) for v in values)))
        print(summary(before, now, time.time() - float(stamp), os.cpu_count(), os.sysconf("SC_CLK_TCK"), argv[3]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

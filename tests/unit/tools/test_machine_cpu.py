"""tests/tools/machine_cpu.py: what a machine's cores did between two /proc/stat readings."""

import importlib.util
import pathlib

import pytest

SPEC = importlib.util.spec_from_file_location(
    "machine_cpu", pathlib.Path(__file__).resolve().parents[3] / "tests" / "tools" / "machine_cpu.py"
)
machine_cpu = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(machine_cpu)

STAT = "cpu  {} 0 {} {} {} 0 {} {} 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"


@pytest.mark.parametrize(
    "before, after, cores, expected",
    [
        # 2 cores, 100 s: both busy throughout
        ((0, 0, 0, 0, 0, 0), (15000, 5000, 0, 0, 0, 0), 2,
         "x: 100s wall on 2 cores: 200 CPU-s busy (100 %), idle 0 %, iowait 0 %, steal 0 %; busy CPU-s / cores = 100s"),
        # half idle, a tenth waiting on the disk, a tenth taken by the hypervisor
        ((100, 100, 100, 100, 0, 0), (5100, 1100, 10100, 2100, 0, 2000), 2,
         "x: 100s wall on 2 cores: 60 CPU-s busy (30 %), idle 50 %, iowait 10 %, steal 10 %; busy CPU-s / cores = 30s"),
    ],
)
def test_summary(before, after, cores, expected):
    # fields in STAT order: user, system, idle, iowait, softirq, steal (nice and irq 0), 100 ticks a second
    def read(values):
        user, system, idle, iowait, softirq, steal = values
        return machine_cpu.counters(STAT.format(user, system, idle, iowait, softirq, steal))

    assert machine_cpu.summary(read(before), read(after), 100.0, cores, 100, "x") == expected


def test_snapshot_then_since_reads_this_machine(tmp_path, capsys):
    snap = tmp_path / "snap"
    assert machine_cpu.main(["machine_cpu.py", "snapshot", str(snap)]) == 0
    assert machine_cpu.main(["machine_cpu.py", "since", str(snap), "here"]) == 0
    assert capsys.readouterr().out.startswith("here: ")


def test_usage_errors_say_how(capsys):
    assert machine_cpu.main(["machine_cpu.py", "bogus"]) == 2
    assert "machine_cpu.py since FILE LABEL" in capsys.readouterr().err

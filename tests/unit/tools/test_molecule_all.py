"""tests/tools/molecule_all.sh reports each scenario by molecule's own exit status.

Its log stamping pipes molecule through perl; a scenario that fails must still fail the run (it once passed on perl's 0).
A stand-in `molecule` on PATH plays a passing and a failing scenario.
"""

import os
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[3] / "tests" / "tools" / "molecule_all.sh"
FAKE_MOLECULE = """#!/bin/sh
echo "molecule $*"
case "$3" in good) exit 0 ;; *) echo "=== 1 failed, 2 passed in 1.0s ==="; exit 3 ;; esac
"""


@pytest.mark.parametrize(
    "scenarios, rc, results",
    [
        (["good"], 0, {"good": "0"}),
        (["bad"], 1, {"bad": "3"}),
        (["good", "bad"], 1, {"good": "0", "bad": "3"}),
    ],
)
def test_the_run_fails_exactly_when_a_scenario_fails(tmp_path, scenarios, rc, results):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "molecule"
    fake.write_text(FAKE_MOLECULE)
    fake.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), MOLECULE_LOG_DIR=str(tmp_path / "logs"))
    run = subprocess.run(["bash", str(SCRIPT)] + scenarios, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == rc, run.stdout + run.stderr
    for scenario, status in results.items():
        name, scenario_rc, _seconds, _skipped, _cpu, _left = (tmp_path / "logs" / (scenario + ".result")).read_text().split()
        assert (name, scenario_rc) == (scenario, status)
        assert ("molecule %-28s %s" % (scenario, "passed" if status == "0" else "FAILED")) in run.stdout


def test_each_scenario_reports_the_cpu_of_what_it_started_and_the_machine_its_totals(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "molecule"
    # two CPU-seconds of work in a grandchild (CPU time, not wall time: CI's cores are busy): counted once molecule
    # has waited for it
    fake.write_text("#!/bin/sh\nsh -c 'python3 -c \"import time\nwhile time.process_time() < 2: pass\"'\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), MOLECULE_LOG_DIR=str(tmp_path / "logs"))
    run = subprocess.run(["bash", str(SCRIPT), "busy"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    cpu = int((tmp_path / "logs" / "busy.result").read_text().split()[4])
    assert 2 <= cpu <= 3, run.stdout
    assert "CPU-s  busy" in run.stdout
    assert "molecule: the machine: " in run.stdout and "CPU-s busy" in run.stdout


CHECKS = """import pytest


def test_quick():
    assert True


@pytest.mark.full_only
def test_slow():
    open(%r, "w").close()
"""


@pytest.mark.parametrize("full, ran_slow, left", [("", False, 1), ("1", True, 0)])
def test_a_full_only_check_is_left_to_make_test_full_by_name_and_counted(tmp_path, full, ran_slow, left):
    """The scenarios' verify loads tests/tools/pytest_full_only.py: make test deselects and names, make test-full runs."""
    (tmp_path / "checks").mkdir()
    ran = tmp_path / "slow-ran"
    (tmp_path / "checks" / "test_checks.py").write_text(CHECKS % str(ran))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "molecule"
    fake.write_text("#!/bin/sh\nexec %s -m pytest -q -p no:cacheprovider %s\n" % (sys.executable, tmp_path / "checks"))
    fake.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), MOLECULE_LOG_DIR=str(tmp_path / "logs"),
               RADEONLAB_TEST_FULL=full)
    run = subprocess.run(["bash", str(SCRIPT), "tiered"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ran.exists() == ran_slow
    assert int((tmp_path / "logs" / "tiered.result").read_text().split()[5]) == left
    assert ("passed, 0 skipped, %d left to make test-full" % left) in run.stdout
    log = (tmp_path / "logs" / "tiered.log").read_text()
    assert ("left to make test-full: 1 check(s): test_slow" in log) == (not ran_slow), log

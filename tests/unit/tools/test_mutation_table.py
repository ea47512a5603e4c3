"""tests/tools/mutation_table.py: per scenario, how many checks fail on an unconverged host, as a merged table.

The fixtures are molecule verify logs as testinfra writes them (`-v` from molecule.yml, `-rA` from mutation_run.sh):
the per-check `-v` lines, pytest's short test summary, its final counts line, and Ansible's lines from prepare before
them. A stand-in `molecule` on PATH then plays mutation_run.sh's scenarios end to end.
"""

import importlib.util
import os
import pathlib
import subprocess

import pytest

TOOLS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "tools"
SPEC = importlib.util.spec_from_file_location("mutation_table", TOOLS / "mutation_table.py")
mutation_table = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mutation_table)

# prepare's Ansible output, which must not be read as checks, then verify of a scenario with two hosts
PREPARE = """\
TASK [Wait for the mirror] *****************************************************
FAILED - RETRYING: [instance]: Wait for the mirror (5 retries left).
ok: [instance]
PLAY RECAP *********************************************************************
instance                   : ok=4    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0
"""

ROCM_REPO = PREPARE + """\
INFO     [rocm_repo > verify] Executing Testinfra tests found in /work/main/molecule/rocm_repo/tests/...
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0 -- /work/main/.venv/bin/python3.11
rootdir: /
plugins: platformdirs-4.14.9, testinfra-10.2.2, anyio-4.16.0
collecting ... collected 4 items

tests/test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi22] FAILED [ 25%]
tests/test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi22] PASSED [ 50%]
tests/test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi31] FAILED [ 75%]
tests/test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi31] PASSED [100%]

=================================== FAILURES ===================================
______ test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi22] ______

host = <testinfra.host.Host ansible://rocm_repo-navi22>

    def test_keyring_holds_only_the_pinned_key(host):
        key = host.file("/etc/apt/keyrings/rocm.gpg")
>       assert key.exists and key.user == "root" and key.mode == 0o644
E       AssertionError: assert (False)

tests/test_rocm_repo.py:31: AssertionError
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED tests/test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi22]
PASSED tests/test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi31]
FAILED tests/test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi22] - AssertionError: assert (False)
FAILED tests/test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi31] - assert...
========================= 2 failed, 2 passed in 17.01s =========================
ERROR    [rocm_repo > verify] \x1b[31mExecuted: Failed\x1b[0m
"""

# the site scenario: a conftest deselects one host's checks on the other (only_on), and one check errors in a fixture
SITE = """\
collecting ... collected 6 items / 2 deselected / 4 selected

tests/test_site.py::test_a[ansible://ws1] PASSED                         [ 25%]
tests/test_site.py::test_a[ansible://ws2] FAILED                         [ 50%]
tests/test_site.py::test_b[ansible://ws1] ERROR                          [ 75%]
tests/test_site.py::test_c[ansible://ws2] PASSED                         [100%]
=========================== short test summary info ============================
PASSED tests/test_site.py::test_a[ansible://ws1]
PASSED tests/test_site.py::test_c[ansible://ws2]
FAILED tests/test_site.py::test_a[ansible://ws2] - assert 1 == 0
ERROR tests/test_site.py::test_b[ansible://ws1] - RuntimeError: the host is down
============ 1 failed, 2 passed, 2 deselected, 1 error in 4.01s ================
"""

# a verify that passes without converge: nothing fails
SMOKE_PASSES = """\
tests/test_smoke.py::test_marker[ansible://instance] PASSED              [100%]
=========================== short test summary info ============================
PASSED tests/test_smoke.py::test_marker[ansible://instance]
============================== 1 passed in 0.50s ===============================
"""


def test_counts_and_names_come_from_the_summary_not_from_ansible_lines():
    result = mutation_table.parse(ROCM_REPO)
    assert (result["checks"], result["failed"], result["passed"], result["deselected"]) == (4, 2, 2, 0)
    assert result["passed_names"] == ["test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi22]",
                                      "test_rocm_repo.py::test_apt_update_is_clean[ansible://rocm_repo-navi31]"]
    assert result["failed_names"] == [
        "test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi22]",
        "test_rocm_repo.py::test_keyring_holds_only_the_pinned_key[ansible://rocm_repo-navi31]",
    ]


def test_deselected_checks_are_neither_failures_nor_passes_and_errors_fail():
    result = mutation_table.parse(SITE)
    assert (result["checks"], result["failed"], result["errors"], result["passed"], result["deselected"]) == (
        4, 1, 1, 2, 2)
    row, verdict, said = mutation_table.cells("site", result, 1, None, "2026-12-06 10:00 UTC", "make mutation")
    assert verdict
    assert row[1:4] == ["4 (2 deselected)", "2 (1 errors)",
                        "2: `test_site.py::test_a` [ws1], `test_site.py::test_c` [ws2]"]
    assert said == "verify failed as it must: 2 of 4 checks fail without converge (2 deselected)"


@pytest.mark.parametrize(
    "text, verify_rc, step_failed, verdict, cells",
    [
        # a check that passes on both hosts is named once, with its hosts
        (ROCM_REPO, 1, None, True, ["4", "2", "2: `test_rocm_repo.py::test_apt_update_is_clean` [rocm_repo-navi22, "
                                    "rocm_repo-navi31]"]),
        (SMOKE_PASSES, 0, None, False, ["1", "0", "1: `test_smoke.py::test_marker` [instance]"]),
        # verify failed, yet no check did: no verdict either
        (SMOKE_PASSES, 1, None, False, ["1", "0", "1: `test_smoke.py::test_marker` [instance]"]),
        # verify failed, but pytest never printed its counts: no verdict, not a pass
        (PREPARE + "ERROR! the testinfra verifier is not installed\n", 1, None, False,
         ["no verdict: no pytest summary in the log (verify exit 1)", "-", "-"]),
        ("", None, "prepare", False, ["no verdict: prepare failed", "-", "-"]),
    ],
)
def test_verdict_and_cells(text, verify_rc, step_failed, verdict, cells):
    result = None if step_failed else mutation_table.parse(text)
    row, got, _said = mutation_table.cells("x", result, verify_rc, step_failed, "d", "c")
    assert (got, row[1:4]) == (verdict, cells)


def test_a_later_run_replaces_its_rows_and_keeps_the_others_with_their_dates(tmp_path):
    doc = tmp_path / "results" / "mutation.md"
    for scenario, text, date in [("rocm_repo", ROCM_REPO, "2026-12-05 09:00 UTC"),
                                 ("site", SITE, "2026-12-05 10:00 UTC"),
                                 ("rocm_repo", SMOKE_PASSES, "2026-12-06 11:00 UTC")]:
        row, _verdict, _said = mutation_table.cells(scenario, mutation_table.parse(text), 1, None, date,
                                                    'make mutation SCENARIOS="%s"' % scenario)
        mutation_table.write_row(str(doc), row, date)
    text = doc.read_text()
    assert "Generated by `make mutation` (tests/tools/mutation_run.sh) on 2026-12-06 11:00 UTC; copied here by " \
           "`make results-to-docs`." in text
    table = text[text.index("| scenario |"):].splitlines()
    assert table == [
        "| scenario | checks | fail without converge | still pass without converge | date (UTC) | command |",
        "|---|---|---|---|---|---|",
        "| rocm_repo | 1 | 0 | 1: `test_smoke.py::test_marker` [instance] | 2026-12-06 11:00 UTC "
        "| make mutation SCENARIOS=\"rocm_repo\" |",
        "| site | 4 (2 deselected) | 2 (1 errors) | 2: `test_site.py::test_a` [ws1], `test_site.py::test_c` [ws2] "
        "| 2026-12-05 10:00 UTC | make mutation SCENARIOS=\"site\" |",
    ]
    assert mutation_table.read_rows(str(doc))["site"][4] == "2026-12-05 10:00 UTC"


FAKE_MOLECULE = """#!/bin/sh
# molecule STEP -s SCENARIO: prepare fails for "broken"; verify prints a recorded log for the others
case "$1 $3" in
  "prepare broken") exit 2 ;;
  "verify passes") printf '%%s' '%s'; exit 0 ;;
  "verify"*) printf '%%s' '%s'; exit 1 ;;
esac
"""


@pytest.mark.parametrize(
    "scenarios, rc",
    [(["rocm_repo"], 0), (["rocm_repo", "passes"], 1), (["broken", "rocm_repo"], 1)],
)
def test_the_run_fails_when_a_verify_passes_or_a_step_before_it_fails(tmp_path, scenarios, rc):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "molecule"
    fake.write_text(FAKE_MOLECULE % (SMOKE_PASSES, ROCM_REPO.replace("'", "")))
    fake.chmod(0o755)
    doc = tmp_path / "mutation.md"
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), MUTATION_LOG_DIR=str(tmp_path / "logs"),
               MUTATION_RESULTS=str(doc))
    env.pop("MUTATION_COMMAND", None)
    run = subprocess.run(["bash", str(TOOLS / "mutation_run.sh")] + scenarios, env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == rc, run.stdout + run.stderr
    rows = mutation_table.read_rows(str(doc))
    assert sorted(rows) == sorted(scenarios)
    assert rows["rocm_repo"][1:3] == ["4", "2"]
    assert rows["rocm_repo"][5] == 'make mutation SCENARIOS="%s"' % " ".join(scenarios)
    assert "mutation rocm_repo: verify failed as it must: 2 of 4 checks fail without converge" in run.stdout
    if "passes" in scenarios:
        assert "mutation passes: VERIFY PASSED WITHOUT CONVERGE (1 checks)" in run.stdout
    if "broken" in scenarios:
        assert rows["broken"][1] == "no verdict: prepare failed"


def test_colored_output_reads_the_same():
    color = SMOKE_PASSES.replace("PASSED ", "\x1b[32mPASSED\x1b[0m ").replace("=====\n", "=====\x1b[0m\n")
    color = color.replace("=== 1 passed", "\x1b[32m=== \x1b[32m\x1b[1m1 passed\x1b[0m\x1b[32m")
    assert mutation_table.parse(color) == mutation_table.parse(SMOKE_PASSES)
    assert mutation_table.parse(color)["passed_names"] == ["test_smoke.py::test_marker[ansible://instance]"]

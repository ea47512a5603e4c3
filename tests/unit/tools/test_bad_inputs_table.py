"""tests/lab/faults/bad_inputs.py: the bad-input table both site_bad_input and the site replay (issue 51).

The lab runs the rows; this reads the table: at least 60 rows with unique ids, each of issue 51's value classes with at
least three rows of the table, and the host snapshot one script for both scenarios (the venv listed, not hashed).
"""

import importlib.util
import pathlib

FAULTS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "lab" / "faults"
SPEC = importlib.util.spec_from_file_location("bad_inputs", FAULTS / "bad_inputs.py")
bad_inputs = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bad_inputs)

ROWS = bad_inputs.table(8890)


def test_at_least_60_rows_with_unique_ids_each_a_bad_input_and_the_text_it_must_show():
    names = [row[0] for row in ROWS]
    assert len(names) >= 60 and len(set(names)) == len(names)
    for name, what, given, expected in ROWS:
        assert what and expected.strip(), name
        assert isinstance(given, (dict, list)) or given == bad_inputs.OS_RELEASE, name
        assert bad_inputs.args(given) or given == bad_inputs.OS_RELEASE, name


def test_each_issue_51_class_has_at_least_three_rows_of_the_table():
    names = {row[0] for row in ROWS}
    for what, rows in bad_inputs.ISSUE_51_CLASSES.items():
        assert len(rows) >= 3 and set(rows) <= names, (what, sorted(set(rows) - names))


def test_the_hub_port_and_the_host_are_filled_in_per_scenario():
    text = repr(bad_inputs.table(8891))
    assert "127.0.0.1:8891" in text and "127.0.0.1:8890" not in text
    warned = [row for row in ROWS if row[3].startswith("WARNING: ")]
    assert warned and all(row[3].startswith("WARNING: %s: " % bad_inputs.HOST) for row in warned)


def test_the_snapshot_hashes_every_tree_unless_listed_and_adds_sections():
    plain = bad_inputs.snapshot_script()
    assert all(tree in plain for tree in bad_inputs.TREES) and "getent passwd" in plain and "== " not in plain
    site = bad_inputs.snapshot_script(listed=("/opt/radeonlab",), venvs=("/opt/radeonlab/venv",), units=("api.service",))
    hashed = site.split("; done;")[0]
    assert "/opt/radeonlab" not in hashed and "/var/lib/radeonlab" in hashed
    assert "echo '== pip freeze /opt/radeonlab/venv'; PYTHONDONTWRITEBYTECODE=1 /opt/radeonlab/venv/bin/python -m pip freeze" in site
    assert "echo '== listed /opt/radeonlab'; find /opt/radeonlab -xdev -printf '%p %y %m %u %g %s %T@\\n'" in site
    assert "echo '== unit api.service'; systemctl show " in site and "-p NRestarts api.service" in site

"""Record one scenario's mutation run (verify without converge) as a row of build/results/mutation.md.

tests/tools/mutation_run.sh calls it once a scenario, after verify (or after the step before verify that failed):

    python3 tests/tools/mutation_table.py --doc DOC --scenario NAME --date DATE --command CMD --log LOG
        (--verify-rc RC | --step-failed STEP)

The counts come from pytest's last lines in the log: the final `== 2 failed, 5 passed, 1 deselected in 3.1s ==`
line, and the names from the short test summary that PYTEST_ADDOPTS=-rA prints above it (`PASSED nodeid`,
`FAILED nodeid - message`, `ERROR nodeid - message`). Only that section is read, so an Ansible line such as
`FAILED - RETRYING: ...` from prepare is never taken for a check. Deselected checks (a conftest's only_on marker)
are neither failures nor passes. The page keeps the rows of scenarios not run this time, each with its own date.
It prints what it found and exits 0 when at least one check failed without converge (the scenario passes the
mutation check), 1 otherwise (verify passed, verify failed with no failing check named, or a step before it failed).
"""

import argparse
import fcntl
import os
import re
import sys

TITLE = "# Mutation runs: checks that fail without converge"
INTRO = (
    "Each scenario was destroyed, created and prepared, then verified with no converge, every check run "
    "(`PYTEST_ADDOPTS=-rA`). A scenario passes when at least one check fails; a check that still passes on an "
    "unconverged host asserts nothing its role does. Deselected checks (a conftest's `only_on` marker: a check about "
    "another host) are neither failures nor passes. A check counts once for each host it runs on; the hosts of a check "
    "that still passes are in brackets. Each row keeps the date of its own run."
)
COLUMNS = ["scenario", "checks", "fail without converge", "still pass without converge", "date (UTC)", "command"]

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# `==== 2 failed, 5 passed, 1 deselected, 3 warnings in 12.34s (0:00:12) ====` or `==== no tests ran in 0.01s ====`
FINAL = re.compile(r"^=+ (?P<body>(?:\d+ \w+(?:, )?)+|no tests ran) in [0-9.]+s(?: \([0-9:.]+\))? =+$")
SUMMARY_START = re.compile(r"^=+ short test summary info =+$")
# a check's node id is a path to a .py file, then ::name[params]; its message (FAILED, ERROR) follows " - "
OUTCOME = re.compile(r"^(?P<outcome>PASSED|FAILED|ERROR) (?P<node>\S+\.py(?:::.+?)?)(?: - .*)?$")
WORDS = {"failed": "failed", "passed": "passed", "error": "errors", "errors": "errors", "skipped": "skipped",
         "deselected": "deselected", "xfailed": "xfailed", "xpassed": "xpassed"}


def parse(text):
    """Counts and names of pytest's outcome in `text` (every pytest session in it summed).

    Returns None when no final pytest line is found (pytest never ran or was killed).
    """
    counts = dict.fromkeys(set(WORDS.values()), 0)
    names = {"PASSED": [], "FAILED": [], "ERROR": []}
    found = False
    in_summary = False
    for raw in text.splitlines():
        line = ANSI.sub("", raw).rstrip()
        final = FINAL.match(line)
        if final:
            found = True
            in_summary = False
            for item in final.group("body").split(", "):
                number, word = (item.split(" ", 1) + [""])[:2]
                if word in WORDS:
                    counts[WORDS[word]] += int(number)
            continue
        if SUMMARY_START.match(line):
            in_summary = True
            continue
        outcome = OUTCOME.match(line) if in_summary else None
        if outcome:
            path, sep, check = outcome.group("node").partition("::")
            names[outcome.group("outcome")].append(os.path.basename(path) + sep + check)
    if not found:
        return None
    counts["checks"] = sum(counts[k] for k in ("failed", "passed", "errors", "skipped", "xfailed", "xpassed"))
    counts["passed_names"] = names["PASSED"]
    counts["failed_names"] = names["FAILED"] + names["ERROR"]
    return counts


def grouped(names):
    """`f.py::check[ansible://a]`, `f.py::check[ansible://b]` as "`f.py::check` [a, b]": one entry a check."""
    params = {}
    for name in names:
        check, param = (name.split("[", 1) + [""])[:2]
        params.setdefault(check, []).append(re.sub(r"^\w+://", "", param.rstrip("]")))
    return ", ".join("`%s`" % check + (" [%s]" % ", ".join(p for p in got if p) if any(got) else "")
                     for check, got in params.items())


def cells(scenario, result, verify_rc, step_failed, date, command):
    """The row's cells and the verdict (True: at least one check failed without converge) and one-line summary."""
    if step_failed:
        return ([scenario, "no verdict: %s failed" % step_failed, "-", "-", date, command], False,
                "%s FAILED, no verdict" % step_failed)
    if result is None:
        return ([scenario, "no verdict: no pytest summary in the log (verify exit %s)" % verify_rc, "-", "-", date,
                 command], False, "no pytest summary in the log (verify exit %s), no verdict" % verify_rc)
    extra = ["%d %s" % (result[k], k) for k in ("deselected", "skipped", "xfailed", "xpassed") if result[k]]
    checks = "%d" % result["checks"] + (" (%s)" % ", ".join(extra) if extra else "")
    failing = result["failed"] + result["errors"]
    fail = "%d" % failing + (" (%d errors)" % result["errors"] if result["errors"] else "")
    passing = grouped(result["passed_names"])
    if result["passed"] and not passing:
        passing = "%d (names need PYTEST_ADDOPTS=-rA)" % result["passed"]
    elif passing:
        passing = "%d: %s" % (result["passed"], passing)
    else:
        passing = "none"
    verdict = failing > 0 and verify_rc != 0
    if verdict:
        said = "verify failed as it must: %d of %d checks fail without converge" % (failing, result["checks"])
    elif failing == 0 and verify_rc == 0:
        said = "VERIFY PASSED WITHOUT CONVERGE (%d checks)" % result["checks"]
    else:
        said = "verify exit %s with %d failing checks, no verdict" % (verify_rc, failing)
    if result["deselected"]:
        said += " (%d deselected)" % result["deselected"]
    return [scenario, checks, fail, passing, date, command], verdict, said


def escape(cell):
    return str(cell).replace("|", "\\|").replace("\n", " ")


def read_rows(path):
    """The table rows of an existing page, by scenario name (cells still escaped)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    for line in open(path, encoding="utf-8").read().splitlines():
        if not line.startswith("| ") or line.startswith("| scenario |"):
            continue
        row = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(row) == len(COLUMNS):
            rows[row[0]] = row
    return rows


def write_row(path, row, date):
    """Put `row` in the page at `path` in place of that scenario's old row; other scenarios' rows stay as they were.

    Two `make mutation` runs side by side each rewrite the page: a lock on its folder keeps both runs' rows.
    """
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        _write_row(path, row, date)
    finally:
        os.close(folder)


def _write_row(path, row, date):
    rows = read_rows(path)
    rows[row[0]] = [escape(c) for c in row]
    table = ["| %s |" % " | ".join(COLUMNS), "|" + "---|" * len(COLUMNS)]
    table += ["| %s |" % " | ".join(rows[name]) for name in sorted(rows)]
    header = ("Generated by `make mutation` (tests/tools/mutation_run.sh) on %s; copied here by "
              "`make results-to-docs`." % date)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("%s\n\n%s\n\n%s\n\n%s\n" % (TITLE, header, INTRO, "\n".join(table)))


def main(argv):
    parser = argparse.ArgumentParser(prog="mutation_table.py", description=__doc__.splitlines()[0])
    parser.add_argument("--doc", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--log", required=True)
    outcome = parser.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--verify-rc", type=int)
    outcome.add_argument("--step-failed")
    args = parser.parse_args(argv[1:])
    result = None
    if args.step_failed is None:
        with open(args.log, encoding="utf-8", errors="replace") as handle:
            result = parse(handle.read())
    row, verdict, said = cells(args.scenario, result, args.verify_rc, args.step_failed, args.date, args.command)
    write_row(args.doc, row, args.date)
    print("mutation %s: %s (see %s)" % (args.scenario, said, args.log))
    for name in (result or {}).get("passed_names", []):
        print("mutation %s: passes without converge: %s" % (args.scenario, name))
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

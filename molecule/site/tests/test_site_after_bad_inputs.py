"""Issue 51 item 3: every row of the bad-input table, refused on a site host whose previous job's API still answers.

molecule/site_bad_input refuses the table's rows on a host that has only the ROCm repository and the stand-in ROCm; here
the same rows (tests/lab/faults/bad_inputs.py, one table) run against site-navi22 after converge and idempotence, a
host that trained the lab job and serves its adapter through the OpenAI-style API (its own port, the planted key). Each
row is one run of this scenario's converge (the whole site.yml, `--limit site-navi22`) with one bad input, and must fail
in playbooks/validate.yml with the message naming the variable, before the site's main play starts. Before the first row
and after each, one `docker exec` reads the host: /etc/apt, /etc/systemd, /etc/radeonlab, /etc/llamafactory,
/var/lib/radeonlab (the job folder), /var/lib/llamafactory file by file with their md5, the accounts, the venv's
`pip freeze` and its files by size and mtime (/opt/radeonlab: gigabytes, not hashed), and the API unit's state, main
pid, start time and restarts; then the controller asks the API a fixed chat question (greedy, 8 tokens). All of it must
be as before every row: refused before any change, and the API still answers, unrestarted, with the same answer.

Two rows are adapted to this host, openly (ADAPTED): the site plants an API key and a WebUI login in molecule.yml, so
the rows "exposed without a key / a login" empty them as part of their bad input. The three save-steps rows are
warnings, not refusals: as in site_bad_input, each adds lora_job_lora_rank 0 so that the run stops before any change,
and the row checks that the warning came first and the API still answers.

The file's name sorts before test_site_after_training.py, whose last check retires the API on every host (checks run
file by file). All rows are make test-full only (the `make test` budget, issue 46). The page
build/results/reliability_api.md is written from the rows that ran (`make results-to-docs` copies it to docs/).
"""

import hashlib
import os
import urllib.error

import pytest

from test_site import CONVERGE, RUN_ENV, _hostname, faultlab
from test_site_after_training import API_PORTS, API_UNIT, VENV_PYTHON, _api, _key

import bad_inputs  # noqa: E402  tests/lab/faults, next to faultlab (test_site puts it on sys.path): shared with site_bad_input

# 80 ansible-playbook runs of the validation, four at a time: make test-full (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

TARGET = "site-navi22"  # 12 GiB discrete card (less than site_bad_input's 24 GiB: the rows that do not fit still do not)
HUB_PORT = 8891  # this scenario's fixture hub (site_bad_input's is 8890: the two scenarios may run side by side)
PAGE = "reliability_api.md"
SOURCE = "molecule/site/tests/test_site_after_bad_inputs.py"
FACT_CACHE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "bad_input_api_facts")
VENV = os.path.dirname(os.path.dirname(VENV_PYTHON))
SNAPSHOT = bad_inputs.snapshot_script(listed=("/opt/radeonlab",), venvs=(VENV,), units=(API_UNIT,))
QUESTION = {"model": "tiny-alpaca", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8, "do_sample": False}
# row: (extra vars added to its bad input, why): the site's own inputs that would otherwise make the row valid
ADAPTED = {
    "api-exposed-no-key": ({"lora_job_serve_api_key": ""}, "the site plants an API key: emptied"),
    "webui-exposed-no-auth": ({"llamafactory_webui_auth_user": "", "llamafactory_webui_auth_password": ""},
                              "the site plants a WebUI login: emptied"),
}
# Rows not replayed here, with the reason (none today): the done-when counts the rows that ran.
EXCLUDED = {}
# The rows' runs: at the default verbosity (this scenario's -vvv would be megabytes a row), not in ANSIBLE_LOG_PATH's
# log, which test_site.py's secret checks have read before this file runs.
ENV = dict({k: v for k, v in RUN_ENV.items() if k != "ANSIBLE_LOG_PATH"}, ANSIBLE_VERBOSITY="0")


def _adapt(case):
    name, what, given, expected = case
    if name not in ADAPTED:
        return case
    extra, why = ADAPTED[name]
    return name, "%s (%s)" % (what, why), dict(given, **extra), expected


CASES = [_adapt(c) for c in bad_inputs.table(HUB_PORT) if c[0] not in EXCLUDED]
RESULTS = {}


def _digest(text):
    return "%d lines, sha256 %s" % (len(text.splitlines()), hashlib.sha256(text.encode()).hexdigest()[:16])


def _answer(host):
    """The API's answer to QUESTION: status, model and each choice's text and finish reason (not its id or time)."""
    try:
        code, reply = _api(host, "/chat/completions", QUESTION, key=_key(host))
    except (urllib.error.URLError, OSError) as failed:
        return {"status": "no answer (%s)" % failed}
    choices = (reply or {}).get("choices") or []
    return {"status": code, "model": (reply or {}).get("model"),
            "choices": [[c.get("message", {}).get("content"), c.get("finish_reason")] for c in choices]}


def _snapshot(host):
    """{"host": {section: digest, or the unit's properties}, "api": _answer}: the host in one docker exec, then the API."""
    parts = bad_inputs.docker(TARGET, SNAPSHOT).split(bad_inputs.SECTION)
    sections = {"trees and accounts": _digest(parts[0])}
    for part in parts[1:]:
        label, _, body = part.partition("\n")
        sections[label] = body.strip() if label.startswith("unit ") else _digest(body)
    return {"host": sections, "api": _answer(host)}


@pytest.fixture(scope="module")
def replayed(host, request):
    assert _hostname(host) == TARGET and TARGET in API_PORTS
    bad_inputs.serve_hub(HUB_PORT)
    selected = bad_inputs.selected(request, "test_bad_input_is_refused_and_the_previous_jobs_api_still_answers")
    _answer(host)  # the first request after converge may load what the next ones reuse: not part of the baseline
    run = bad_inputs.replay(TARGET, [c for c in CASES if c[0] in selected], CONVERGE, lambda: _snapshot(host), FACT_CACHE,
                            extra=["--limit", TARGET], env=ENV)
    baseline = run["baseline"]
    assert baseline["api"]["status"] == 200 and baseline["api"]["choices"], "the API did not answer before the first row: %s" % baseline
    assert "ActiveState=active" in baseline["host"]["unit " + API_UNIT], baseline["host"]
    RESULTS.update(run["rows"])
    return run


def _checks(row, baseline):
    """What held after a row: {check: True/False}."""
    after = row["after"]
    unit = "unit " + API_UNIT
    return {"refused": row["refused"],
            "host unchanged": not row["left"] and {k: v for k, v in after["host"].items() if k != unit}
            == {k: v for k, v in baseline["host"].items() if k != unit},
            "API answered as before": after["api"] == baseline["api"],
            "API not restarted": after["host"].get(unit) == baseline["host"][unit]}


@pytest.mark.only_on(TARGET)
@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_bad_input_is_refused_and_the_previous_jobs_api_still_answers(replayed, case):
    row, baseline = replayed["rows"][case[0]], replayed["baseline"]
    output = row["output"]
    assert row["rc"] != 0, output[-3000:]
    assert " ".join(row["expected"].split()) in " ".join(output.split()), output[-3000:]
    assert bad_inputs.MAIN_PLAY not in output, "the site's main play started: the validation let it through"
    assert "changed: [" not in output, output[-3000:]
    assert not row["left"], "the small disk was written to: %s" % row["left"]
    unit = "unit " + API_UNIT
    assert row["after"]["host"].get(unit) == baseline["host"][unit], "the API restarted: %s, before %s" % (
        row["after"]["host"].get(unit), baseline["host"][unit])
    changed = {k: (baseline["host"].get(k), v) for k, v in row["after"]["host"].items() if baseline["host"].get(k) != v}
    assert not changed, "the host changed: %s" % changed
    assert row["after"]["api"] == baseline["api"], "the API answered otherwise: %s, before %s" % (row["after"]["api"], baseline["api"])


@pytest.mark.only_on(TARGET)
def test_at_least_60_rows_and_3_of_each_issue_51_class_ran_with_the_api_check(replayed):
    ran = set(replayed["rows"])
    assert len(ran) >= 60, "run the whole module: %d rows ran" % len(ran)
    short = {what: sorted(ran & set(rows)) for what, rows in bad_inputs.ISSUE_51_CLASSES.items() if len(ran & set(rows)) < 3}
    assert not short, short


@pytest.mark.only_on(TARGET)
def test_write_results_reliability_api(replayed):
    rows, baseline = replayed["rows"], replayed["baseline"]
    ran = [c[0] for c in CASES if c[0] in rows]
    assert ran, "run the whole module: the page is written from the rows that ran"
    checks = {name: _checks(rows[name], baseline) for name in ran}
    passed = [name for name in ran if all(checks[name].values())]
    lines = [
        "# Reliability: bad inputs refused while the previous job's API answers",
        "",
        faultlab.generated_by("`molecule test -s site` in `make test-full` (%s)" % SOURCE, PAGE),
        "The rows of [reliability.md](reliability.md)'s table (tests/lab/faults/bad_inputs.py, one table for both) against a",
        "site host that trained the lab job and serves it: %s, after converge and idempotence, its API on 127.0.0.1:%d with"
        % (TARGET, API_PORTS[TARGET]),
        "the planted key. Each row runs `ansible-playbook` of the scenario's converge (the whole site.yml, `--limit %s`) with"
        % TARGET,
        "one bad input. Refused: it failed in playbooks/validate.yml with the quoted message, before the main play. Host",
        "unchanged: /etc/apt, /etc/systemd, /etc/radeonlab, /etc/llamafactory, /var/lib/radeonlab, /var/lib/llamafactory",
        "(md5 of every file), the accounts, the venv's `pip freeze` and its files (size, mtime) as before the first row.",
        "API answered as before: the same status and answer to a fixed greedy chat request (%r, %d tokens). Not restarted:"
        % (QUESTION["messages"][0]["content"], QUESTION["max_tokens"]),
        "the API unit's main pid, start time and restart count as before.",
        "",
        "Adapted to this host: %s. Left out: %s." % (
            "; ".join("%s (%s)" % (name, why) for name, (_extra, why) in sorted(ADAPTED.items())),
            "; ".join("%s (%s)" % item for item in sorted(EXCLUDED.items())) or "none"),
        "",
        "| case | refused | host unchanged | API answered as before | API not restarted | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for name in ran:
        lines.append("| %s | %s | %.1f |" % (name, " | ".join("yes" if ok else "NO" for ok in checks[name].values()), rows[name]["seconds"]))
    lines += ["", "**%d of %d bad inputs refused before any change, the previous job's API answering as before.**" % (len(passed), len(ran)),
              "", "Issue 51's classes, rows that passed of rows that ran:", ""]
    for what, names in bad_inputs.ISSUE_51_CLASSES.items():
        lines.append("- %s: %d of %d" % (what, len([n for n in names if n in passed]), len([n for n in names if n in rows])))
    lines.append("")
    with open(faultlab.results_page(PAGE), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    assert len(passed) == len(ran), [name for name in ran if name not in passed]

"""Package faults for pip (issue 13 item 3): the wheelhouse cut mid-download and gone, then back; a pip killed while
it unpacks; a second run while a pip works in the venv. Each case runs faults.yml (the role's preflight and install
tasks) on one host with a small venv of its own; the rows go to build/results/reliability_faults_packages.md
(faultlab.results_page; `make results-to-docs` copies it to docs/).
"""
import functools
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import zipfile

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402
import pytest  # noqa: E402

# the package faults replay the role's install several times each (minutes on CI's 2 cores): make test-full
# (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "llamafactory")  # also the page's section
HOST = SCENARIO + "-navi31"
PLAYBOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "faults.yml")
WHEELHOUSE = os.path.join(PROJECT, ".cache", "wheelhouse")
VENV = "/opt/radeonlab/fault-venv"
SITE = VENV + "/lib/python3.11/site-packages"
WHEEL = "sympy==1.14.0"  # 6.3 MB, ~1,000 files to unpack, needs mpmath: small, yet pip takes seconds over it
MARK = VENV + "/.radeonlab-pip-unfinished-pytorch_rocm"
LOCK = VENV + "/.radeonlab-pip.lock"
PIP_PGREP = "pgrep -u trainer -f '^%s/bin/python -m pip install'" % VENV


def _sh(cmd):
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout.strip()


def _as_trainer(cmd):
    return _sh("runuser -u trainer -- sh -c %s" % shlex.quote(cmd))


def _state():
    """What the fault venv holds now."""
    imported = _as_trainer("%s/bin/python -c 'import sympy; print(sympy.__version__)'" % VENV)
    check = _as_trainer("%s/bin/python -m pip check --disable-pip-version-check" % VENV)
    # every file pip recorded for sympy is there (a half-unpacked wheel fails this, not only the import)
    record = _as_trainer("cd %s && test -f sympy-1.14.0.dist-info/RECORD && cut -d, -f1 sympy-1.14.0.dist-info/RECORD"
                         " | while read -r f; do [ -e \"$f\" ] || echo \"$f\"; done | wc -l" % SITE)
    return {
        "sympy": imported[1] if imported[0] == 0 else None,
        "pip_check": check[0] == 0,
        "record_missing": int(record[1]) if record[0] == 0 and record[1].isdigit() else None,
        "marked": _sh("test -e %s" % MARK)[0] == 0,
        "files": int(_sh("find %s/sympy -type f 2>/dev/null | wc -l" % SITE)[1] or 0),
        # the files unpacked from the wheel: all but the byte code pip compiles after unpacking
        "unpacked": int(_sh("find %s/sympy -type f ! -path '*/__pycache__/*' 2>/dev/null | wc -l" % SITE)[1] or 0),
    }


@functools.lru_cache(maxsize=None)
def _wheel_files():
    """How many files under sympy/ the wheel's own RECORD lists (the wheel in the controller's wheelhouse)."""
    wheels = glob.glob(os.path.join(WHEELHOUSE, "**", "sympy-1.14.0-*.whl"), recursive=True)
    assert wheels, "no sympy 1.14.0 wheel under %s" % WHEELHOUSE
    with zipfile.ZipFile(wheels[0]) as wheel:
        record = wheel.read("sympy-1.14.0.dist-info/RECORD").decode("utf-8")
    return sum(1 for line in record.splitlines() if line.startswith("sympy/"))


@functools.lru_cache(maxsize=None)
def _installed_rocm():
    """The ROCm release converge installed torch for (the role's fact file): the fault runs use the same."""
    rc, text = _sh("cat /etc/ansible/facts.d/pytorch_rocm.fact")
    assert rc == 0, "no pytorch_rocm facts on %s: converge did not install torch" % HOST
    return json.loads(text)["rocm_version"]


class Runs:
    def __init__(self, server):
        self.server = server
        self.vars = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False).name

    def argv(self):
        with open(self.vars, "w", encoding="utf-8") as handle:
            json.dump({"pytorch_rocm_venv": VENV, "pytorch_rocm_wheelhouse_url": self.server.url,
                       "pytorch_rocm_wheelhouse_download": False, "pytorch_rocm_poll_interval": 1,
                       "pytorch_rocm_rocm_version": _installed_rocm(), "_pytorch_rocm_requirements": [WHEEL]}, handle)
        return ["-i", os.environ["MOLECULE_INVENTORY_FILE"], PLAYBOOK, "--limit", HOST,
                "--tags", "pytorch_rocm_preflight,pytorch_rocm_install", "-e", "@" + self.vars, "-v"]

    def run(self):
        return faultlab.playbook(self.argv())

    def background(self):
        started = time.monotonic()
        process = subprocess.Popen(["ansible-playbook"] + self.argv(), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)

        def finish():
            output = process.communicate(timeout=900)[0]
            return process.returncode, output, round(time.monotonic() - started, 1)
        finish.done = lambda: process.poll() is not None
        return finish


def _messages(output):
    return " ".join(faultlab.failure_messages(output))


@faultlab.once
def _faults():
    cases = {}
    _sh("rm -rf %s" % VENV)
    server = faultlab.FaultServer("--dir", WHEELHOUSE)
    runs = Runs(server)
    try:
        # 1. the wheelhouse drops every wheel transfer after 1 MiB (sympy's 6.3 MB never arrives)
        server.start("--cut-after", str(1 << 20))
        rc, out, secs = runs.run()
        cases["cut"] = dict(rc=rc, secs=secs, msg=_messages(out), gets=len(server.requests(r"/sympy-1\.14\.0-.*\.whl$")),
                            state=_state(), out=out[-3000:])

        # 2. the wheelhouse is gone (the server stopped)
        server.stop()
        rc, out, secs = runs.run()
        cases["gone"] = dict(rc=rc, secs=secs, msg=_messages(out), retries=len(set(re.findall(r"Retrying \(Retry\(total=(\d+)", out))),
                             state=_state(), out=out[-3000:])

        # 3. the wheelhouse is back: the re-run converges
        server.start()
        rc, out, secs = runs.run()
        cases["back"] = dict(rc=rc, secs=secs, repaired="reinstalling the whole set" in out, state=_state(),
                             out=out[-3000:])

        # 4. pip killed (SIGKILL, by the pid the role wrote into the venv's lock) while it unpacks sympy
        _as_trainer("%s/bin/python -m pip uninstall -y -q sympy" % VENV)
        before = _state()
        finish = runs.background()
        killer = _sh("for i in $(seq 1 6000); do [ -d %s/sympy ] && break; sleep 0.05; done; pid=$(cat %s); "
                     "tr '\\0' ' ' < /proc/$pid/cmdline | grep -q ' -m pip install ' && kill -KILL $pid && "
                     "echo killed $pid after $(find %s/sympy -type f | wc -l) files" % (SITE, LOCK, SITE))
        rc, out, secs = finish()
        cases["killed"] = dict(rc=rc, secs=secs, msg=_messages(out), killer=killer[1], before=before, state=_state(),
                               out=out[-3000:])

        # 5. the next run repairs the venv
        rc, out, secs = runs.run()
        cases["repair"] = dict(rc=rc, secs=secs, repaired="reinstalling the whole set" in out, state=_state(),
                               out=out[-3000:])

        # 6. a second run while the first one's pip works in the venv (its download held by the server)
        _as_trainer("%s/bin/python -m pip uninstall -y -q sympy" % VENV)
        hold = os.path.join(server.state, "hold")
        open(hold, "w").close()
        server.stop()
        server.start("--hold", hold)
        finish = runs.background()
        pids = ""
        # run A reaches its pip after the preflight and install tasks before it: minutes on CI's loaded cores
        deadline = time.monotonic() + 600
        while not pids and time.monotonic() < deadline and not finish.done():
            pids = _sh(PIP_PGREP)[1]
            time.sleep(0.5)
        try:
            # B only while A's pip holds the venv: without it B's own pip would wait on the held download for good
            rc, out, secs = runs.run() if pids else (None, "run A started no pip (see first_out)", 0)
            pips_after = _sh(PIP_PGREP)[1]
        finally:
            os.unlink(hold)
        first = finish()
        cases["second"] = dict(rc=rc, secs=secs, msg=_messages(out), first_pid=pids, pips_after=pips_after,
                               started_pip="Start pip install" in out, first_rc=first[0], first_secs=first[2],
                               state=_state(), out=out[-3000:], first_out=first[1][-3000:])
    finally:
        server.stop()
        _sh("rm -rf %s" % VENV)
    return cases


def test_cut_mid_download_fails_soon_naming_the_wheelhouse_and_marks_the_venv():
    case = _faults()["cut"]
    assert case["rc"] == 2, case["out"]
    assert "pip install into %s from http://127.0.0.1:" % VENV in case["msg"] and "re-run when" in case["msg"], case["msg"]
    assert case["gets"] >= 1 and case["secs"] < 180, case
    assert case["state"]["marked"] and case["state"]["sympy"] is None, case["state"]


def test_wheelhouse_gone_fails_after_bounded_retries_with_the_message():
    case = _faults()["gone"]
    assert case["rc"] == 2, case["out"]
    assert "re-run when" in case["msg"] and "from http://127.0.0.1:" in case["msg"], case["msg"]
    assert case["retries"] >= 1 and case["secs"] < 180, case


def test_wheelhouse_back_the_rerun_converges_and_the_venv_is_complete():
    case = _faults()["back"]
    assert case["rc"] == 0, case["out"]
    assert case["repaired"], case["out"]
    state = {key: case["state"][key] for key in ("sympy", "pip_check", "record_missing", "marked")}
    assert state == dict(sympy="1.14.0", pip_check=True, record_missing=0, marked=False), case["state"]
    # every file of the wheel unpacked, and nothing more (a torn earlier attempt would leave extra or fewer)
    assert case["state"]["unpacked"] == _wheel_files() > 0, (case["state"], _wheel_files())


def test_pip_killed_mid_install_fails_with_the_message_and_leaves_the_mark():
    case = _faults()["killed"]
    assert case["before"]["sympy"] is None and case["before"]["files"] == 0, case["before"]
    assert case["killer"].startswith("killed "), case
    assert case["rc"] == 2 and "killed by signal 9" in case["msg"], case["out"]
    assert case["state"]["marked"], case["state"]


def test_the_run_after_the_killed_pip_repairs_the_venv():
    case = _faults()["repair"]
    assert case["rc"] == 0 and case["repaired"], case["out"]
    assert case["state"]["sympy"] == "1.14.0" and case["state"]["pip_check"], case["state"]
    assert case["state"]["record_missing"] == 0 and not case["state"]["marked"], case["state"]
    # the half-unpacked tree the kill left is whole again: exactly the wheel's files
    assert case["state"]["unpacked"] == _wheel_files() > 0, (case["state"], _wheel_files())


def test_a_second_run_refuses_while_a_pip_works_in_the_venv():
    case = _faults()["second"]
    assert case["first_pid"] and len(case["first_pid"].split()) == 1, case
    assert case["rc"] == 2 and not case["started_pip"], case["out"]
    assert "A pip is still running in %s (pid %s" % (VENV, case["first_pid"]) in case["msg"], case["msg"]
    assert case["pips_after"] == case["first_pid"], case  # still one pip, the first run's
    assert case["first_rc"] == 0 and case["state"]["sympy"] == "1.14.0" and case["state"]["pip_check"], case


def test_write_results_reliability_faults_packages():
    c = _faults()
    rows = [
        ("wheelhouse cut mid-download", "the server sends 1 MiB of each wheel, then drops the connection",
         "failed (rc %d) after %d GET(s) of the sympy wheel: \"%s\"; venv marked unfinished: %s"
         % (c["cut"]["rc"], c["cut"]["gets"], c["cut"]["msg"][:400], c["cut"]["state"]["marked"]), c["cut"]["secs"]),
        ("wheelhouse gone", "the server stopped (connection refused)",
         "failed (rc %d), pip retried the wheelhouse %d time(s): \"%s\"" % (c["gone"]["rc"], c["gone"]["retries"],
                                                             c["gone"]["msg"][:400]), c["gone"]["secs"]),
        ("wheelhouse back", "the server started again, same run repeated",
         "rc %d, reinstalled the whole set: %s; sympy %s, pip check clean: %s, files missing from RECORD: %s, mark gone: %s"
         % (c["back"]["rc"], c["back"]["repaired"], c["back"]["state"]["sympy"], c["back"]["state"]["pip_check"],
            c["back"]["state"]["record_missing"], not c["back"]["state"]["marked"]), c["back"]["secs"]),
        ("pip killed mid-install", "sympy uninstalled, run started; SIGKILL to the pip pid in the venv's lock once "
         "site-packages/sympy appeared (%s)" % c["killed"]["killer"],
         "failed (rc %d): \"%s\"; %d sympy files left on disk, venv marked unfinished: %s"
         % (c["killed"]["rc"], c["killed"]["msg"][:400], c["killed"]["state"]["files"], c["killed"]["state"]["marked"]),
         c["killed"]["secs"]),
        ("the run after the kill", "same run repeated",
         "rc %d, reinstalled the whole set: %s; sympy %s, pip check clean: %s, files missing from RECORD: %s"
         % (c["repair"]["rc"], c["repair"]["repaired"], c["repair"]["state"]["sympy"], c["repair"]["state"]["pip_check"],
            c["repair"]["state"]["record_missing"]), c["repair"]["secs"]),
        ("second run while pip runs", "sympy uninstalled; run A started with the server trickling the wheel; run B "
         "started while A's pip (pid %s) worked" % c["second"]["first_pid"],
         "B refused (rc %d) without starting pip: \"%s\"; pips in the venv after B: %s; A then finished rc %d in %s s"
         % (c["second"]["rc"], c["second"]["msg"][:400], c["second"]["pips_after"], c["second"]["first_rc"],
            c["second"]["first_secs"]), c["second"]["secs"]),
    ]
    intro = """Host %s, the role's preflight and install tasks (molecule/llamafactory/faults.yml, `--tags
pytorch_rocm_preflight,pytorch_rocm_install`) into a small venv of their own, %s, with one requirement, %s (6.3 MB, about
1,000 files, and its dependency mpmath) instead of the torch set (the test overrides `_pytorch_rocm_requirements`), from
the controller's wheelhouse served by the fault server; pip's bounds are the role's defaults (`pytorch_rocm_pip_retries`
5, `pytorch_rocm_pip_timeout` 30 s).""" % (HOST, VENV, WHEEL)
    faultlab.write_section(SCENARIO, intro, rows)
    # The page on disk has this scenario's six cases, each with the outcome the checks above require.
    written = faultlab.read_section(SCENARIO)
    assert [row[0] for row in written] == [row[0] for row in rows], written
    outcome = {row[0]: row[2] for row in written}
    assert outcome["wheelhouse cut mid-download"].startswith("failed (rc 2) after ") and outcome[
        "wheelhouse cut mid-download"].endswith("venv marked unfinished: True"), outcome
    assert outcome["wheelhouse gone"].startswith("failed (rc 2), pip retried the wheelhouse "), outcome
    assert outcome["wheelhouse back"] == ("rc 0, reinstalled the whole set: True; sympy 1.14.0, pip check clean: True, files "
                                          "missing from RECORD: 0, mark gone: True"), outcome
    assert outcome["pip killed mid-install"].startswith("failed (rc 2): ") and outcome["pip killed mid-install"].endswith(
        "venv marked unfinished: True"), outcome
    assert outcome["the run after the kill"] == ("rc 0, reinstalled the whole set: True; sympy 1.14.0, pip check clean: True, "
                                                 "files missing from RECORD: 0"), outcome
    assert outcome["second run while pip runs"].startswith("B refused (rc 2) without starting pip: ") and outcome[
        "second run while pip runs"].endswith("A then finished rc 0 in %s s" % c["second"]["first_secs"]), outcome
    assert all(float(row[3]) > 0 for row in written), written

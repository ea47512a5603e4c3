"""Package faults for apt (issue 13 item 3): the mirror drops the connection mid-download, then is gone, then back;
a dpkg run cut off between unpack and configure. Each case runs this scenario's converge on one host whose apt
reaches the lab mirror through the test's fault proxy; the rows go to build/results/reliability_faults_packages.md
(faultlab.results_page; `make results-to-docs` copies it to docs/).
"""
import os
import sys

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402
import pytest  # noqa: E402

# the package faults replay the role's install several times each (minutes on CI's 2 cores): make test-full
# (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "rocm_driver")  # also the page's section
HOST = SCENARIO + "-navi31"
CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
# test-side only: apt on HOST reaches 127.0.0.1 (the lab mirror) through the fault proxy; removed at the end
PROXY_CONF = "/etc/apt/apt.conf.d/00radeonlab-lab-fault-proxy"
# removing rocminfo removes rocm-hip-runtime too: the re-install downloads both (5.7 kB and 0.9 kB)
PACKAGES = ("rocminfo", "rocm-hip-runtime")
DEBS = r"/(rocminfo|rocm-hip-runtime)_[^/]*\.deb$"
RETRIES = 3  # rocm_driver_apt_retries' default


def _sh(cmd):
    import subprocess
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout.strip()


def _state():
    installed = _sh("dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' %s 2>/dev/null" % " ".join(PACKAGES))[1]
    return {
        "installed": sorted(line.split()[0] for line in installed.splitlines() if line.split()[1:] == ["ii"]),
        "audit": _sh("dpkg --audit")[1],
    }


def _converge():
    return faultlab.playbook(["-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--limit", HOST])


def _role_message(out):
    """The message the play stopped with (the apt task's own failure comes first; the role's rescue names the mirror)."""
    messages = faultlab.failure_messages(out)
    return messages[-1] if messages else ""


def _gets(server):
    return [r for r in server.requests(DEBS) if r[0] == "GET"]


@faultlab.once
def _faults():
    cases = {}
    server = faultlab.FaultServer("--proxy")
    try:
        server.start("--cut-after", "400")
        _sh("printf 'Acquire::http::Proxy::127.0.0.1 \"%s\";\\n' > %s" % (server.url, PROXY_CONF))
        _sh("DEBIAN_FRONTEND=noninteractive apt-get remove -y -q rocminfo && apt-get clean")
        before = _state()

        # 1. the mirror drops each .deb after 400 bytes
        rc, out, secs = _converge()
        cases["cut"] = dict(rc=rc, secs=secs, msg=_role_message(out), gets=_gets(server),
                            before=before, state=_state(), out=out[-3000:])

        # 2. the mirror is gone (the proxy stopped: connection refused)
        server.stop()
        rc, out, secs = _converge()
        cases["gone"] = dict(rc=rc, secs=secs, msg=_role_message(out), state=_state(),
                             out=out[-3000:])

        # 3. the mirror is back (the proxy passes everything through)
        server.start()
        seen = len(_gets(server))
        rc, out, secs = _converge()
        cases["back"] = dict(rc=rc, secs=secs, gets=_gets(server)[seen:], state=_state(), out=out[-3000:])

        # 4. dpkg cut off between unpack and configure (straight from the mirror again)
        _sh("rm -f %s" % PROXY_CONF)
        _sh("cd /tmp && apt-get download -q rocm-hip-runtime && dpkg -r rocm-hip-runtime && "
            "dpkg --unpack /tmp/rocm-hip-runtime_*.deb; rm -f /tmp/rocm-hip-runtime_*.deb")
        before = _state()
        rc, out, secs = _converge()
        cases["dpkg"] = dict(rc=rc, secs=secs, before=before, state=_state(),
                             configured="changed: [%s]" % HOST in out.split("Finish what an interrupted dpkg run left", 1)[-1][:400],
                             out=out[-3000:])
    finally:
        server.stop()
        _sh("rm -f %s" % PROXY_CONF)
    return cases


def test_cut_mid_download_fails_after_the_retries_naming_the_mirror():
    case = _faults()["cut"]
    assert case["before"]["installed"] == [], case["before"]
    assert case["rc"] == 2, case["out"]
    assert "could not download http://127.0.0.1:8765/" in case["msg"] and "re-run when it is back" in case["msg"], case["msg"]
    # each .deb asked for 1 + Acquire::Retries times, and never more
    per_deb = {path: sum(1 for r in case["gets"] if r[1] == path) for path in {r[1] for r in case["gets"]}}
    assert len(per_deb) == 2 and set(per_deb.values()) == {RETRIES + 1}, case["gets"]
    assert case["secs"] < 300, case
    assert case["state"] == {"installed": [], "audit": ""}, case["state"]


def test_mirror_gone_fails_with_the_message_and_nothing_half_installed():
    case = _faults()["gone"]
    assert case["rc"] == 2, case["out"]
    assert "could not download http://127.0.0.1:8765/" in case["msg"] and "re-run when it is back" in case["msg"], case["msg"]
    assert case["secs"] < 300 and case["state"] == {"installed": [], "audit": ""}, case


def test_mirror_back_the_rerun_converges():
    case = _faults()["back"]
    assert case["rc"] == 0, case["out"]
    assert case["state"] == {"installed": sorted(PACKAGES), "audit": ""}, case["state"]
    assert len(case["gets"]) == 2 and all(r[2] == "200" and r[3] > 400 for r in case["gets"]), case["gets"]


def test_an_interrupted_dpkg_is_finished_by_the_next_run():
    case = _faults()["dpkg"]
    assert "rocm-hip-runtime" in case["before"]["audit"], case["before"]
    assert case["rc"] == 0 and case["configured"], case["out"]
    assert case["state"] == {"installed": sorted(PACKAGES), "audit": ""}, case["state"]


def test_write_results_reliability_faults_packages():
    c = _faults()
    per_deb = sorted({r[1].rsplit("/", 1)[1]: sum(1 for g in c["cut"]["gets"] if g[1] == r[1]) for r in c["cut"]["gets"]}.items())
    rows = [
        ("mirror cut mid-download", "the proxy sends 400 bytes of each .deb, then drops the connection",
         "failed (rc %d); GETs per .deb: %s; \"%s\"; installed after: %s, dpkg --audit: %s"
         % (c["cut"]["rc"], ", ".join("%s %d" % item for item in per_deb), c["cut"]["msg"][:700],
            c["cut"]["state"]["installed"] or "none", c["cut"]["state"]["audit"] or "clean"), c["cut"]["secs"]),
        ("mirror gone", "the proxy stopped (connection refused)",
         "failed (rc %d): \"%s\"; dpkg --audit: %s" % (c["gone"]["rc"], c["gone"]["msg"][:700],
                                                      c["gone"]["state"]["audit"] or "clean"), c["gone"]["secs"]),
        ("mirror back", "the proxy started again, passing everything through; same run repeated",
         "rc %d; downloads: %s; installed: %s, dpkg --audit: %s"
         % (c["back"]["rc"], ", ".join("%s %s B" % (r[1].rsplit("/", 1)[1], r[3]) for r in c["back"]["gets"]),
            ", ".join(c["back"]["state"]["installed"]), c["back"]["state"]["audit"] or "clean"), c["back"]["secs"]),
        ("dpkg cut off after unpack", "rocm-hip-runtime removed and `dpkg --unpack`ed again, not configured",
         "rc %d; the role ran dpkg --configure -a: %s; dpkg --audit after: %s"
         % (c["dpkg"]["rc"], c["dpkg"]["configured"], c["dpkg"]["state"]["audit"] or "clean"), c["dpkg"]["secs"]),
    ]
    intro = """Host %s, this scenario's converge (rocm_repo, then rocm_driver), its apt reaching the lab mirror
(http://127.0.0.1:8765) through the fault proxy (`Acquire::http::Proxy::127.0.0.1`, written by the test only); the
packages re-installed are rocminfo and rocm-hip-runtime (removed first). apt's bounds are the role's defaults
(`rocm_driver_apt_retries` 3, `rocm_driver_apt_timeout` 30 s, in /etc/apt/apt.conf.d/80radeonlab-rocm-driver).""" % HOST
    faultlab.write_section(SCENARIO, intro, rows)
    # The page on disk has this scenario's four cases, each with the outcome the checks above require.
    written = faultlab.read_section(SCENARIO)
    assert [row[0] for row in written] == [row[0] for row in rows], written
    outcome = {row[0]: row[2] for row in written}
    assert outcome["mirror cut mid-download"].startswith("failed (rc 2); GETs per .deb: ") and outcome[
        "mirror cut mid-download"].endswith("installed after: none, dpkg --audit: clean"), outcome
    assert outcome["mirror gone"].startswith("failed (rc 2): \"") and outcome["mirror gone"].endswith("dpkg --audit: clean"), outcome
    assert outcome["mirror back"].startswith("rc 0; downloads: ") and outcome["mirror back"].endswith(
        "installed: %s, dpkg --audit: clean" % ", ".join(sorted(PACKAGES))), outcome
    assert outcome["dpkg cut off after unpack"] == "rc 0; the role ran dpkg --configure -a: True; dpkg --audit after: clean", outcome
    assert all(float(row[3]) > 0 for row in written), written

"""A change of ROCm line moves the user space (issue 48 item 5): navi22 runs ROCm 7.0 (rocm-dev + rocm-smi-lib); a run with
rocm_repo_rocm_version 7.1 must leave every ROCm package at the 7.1 line and /opt/rocm/.info/version saying 7.1.0 (before,
'state: present' kept 7.0). Going back to 7.0 is a downgrade: refused before any package changes (rocm_repo has pointed apt at 7.0 by then), then done with
rocm_driver_allow_downgrade, which also puts the host back as converge left it for the other checks.
"""
import os
import subprocess
import sys

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402

# three converges of navi22 across ROCm lines (138 s of make test): make test-full (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "rocm_driver")
HOST = SCENARIO + "-navi22"
CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
STATE = ("cat /opt/rocm/.info/version; dpkg-query -W -f '${Package} ${Version}\\n' rocm-core rocm-dev rocm-hip-runtime rocminfo "
         "rocm-smi-lib hsa-rocr hip-runtime-amd | sort")


def _sh(cmd):
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.stdout


def _converge(*extra):
    argv = ["-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--limit", HOST]
    for item in extra:
        argv += ["-e", item]
    return faultlab.playbook(argv)


@faultlab.once
def _runs():
    before = _sh(STATE)
    assert before.startswith("7.0.0"), "navi22 is not on ROCm 7.0 before the test: %s" % before
    up_rc, up, _ = _converge("rocm_repo_rocm_version=7.1")
    upgraded = _sh(STATE)
    down_rc, down, _ = _converge("rocm_repo_rocm_version=7.0")
    refused = _sh(STATE)
    back_rc, back, _ = _converge("rocm_repo_rocm_version=7.0", "rocm_driver_allow_downgrade=true")
    return dict(before=before, up_rc=up_rc, up=up, upgraded=upgraded, down_rc=down_rc, down=down, refused=refused,
                back_rc=back_rc, back=back, after=_sh(STATE))


def test_a_line_change_moves_every_rocm_package_and_the_version_file():
    run = _runs()
    assert run["up_rc"] == 0, faultlab.failure_messages(run["up"]) or run["up"][-3000:]
    lines = run["upgraded"].splitlines()
    assert lines[0].startswith("7.1.0"), run["upgraded"]
    assert all(".70100-" in line for line in lines[1:]), "a package stayed on 7.0: %s" % run["upgraded"]
    assert "ROCm user space 7.0.0 -> 7.1.0" in run["up"] and "ROCm 7.1.0 user space installed" in run["up"]


def test_a_downgrade_is_refused_before_any_package_changes():
    run = _runs()
    assert run["down_rc"] != 0
    message = faultlab.failure_messages(run["down"])[-1]
    assert "a downgrade, refused" in message and "rocm_driver_allow_downgrade: true" in message, message
    assert run["refused"] == run["upgraded"], "the refused run changed the ROCm packages"


def test_an_allowed_downgrade_goes_back():
    run = _runs()
    assert run["back_rc"] == 0, faultlab.failure_messages(run["back"]) or run["back"][-3000:]
    assert run["after"] == run["before"], (run["before"], run["after"])

"""A failed amdgpu-dkms build is recovered, not left broken (issue 48 item 4). The test plants what a failed DKMS build
leaves on navi31 (a container, so the role keeps the host's driver): an amdgpu-dkms whose postinst fails as DKMS's does
(dpkg: half-configured, 'iF') and the build's make.log under /var/lib/dkms/amdgpu/<version>/build/. Before the recovery
every run failed in 'dpkg --configure -a', which retried the same build; now preflight names the state and the make.log's
error line, install removes the package, and a second run finds dpkg consistent. On a role without the recovery the first
run fails (the planted postinst always fails), so these checks fail on an untouched host.
"""
import os
import subprocess
import sys

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402

# a planted broken amdgpu-dkms and two converges (104 s of make test): make test-full (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "rocm_driver")
HOST = SCENARIO + "-navi31"
CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
VERSION = "1:6.16.6.30200000-9999999.24.04"
TREE = "/var/lib/dkms/amdgpu/6.16.6-9999999.24.04"  # module_version(VERSION): the directory DKMS names in its message
ERROR = "lab.c:1:1: error: radeonlab-lab-planted-build-error"
PLANT = r"""set -e
d=$(mktemp -d); chmod 0755 "$d"; mkdir -p "$d/DEBIAN" %(tree)s/build
printf 'Package: amdgpu-dkms\nVersion: %(version)s\nArchitecture: all\nMaintainer: radeonlab lab <lab@localhost>\n' > "$d/DEBIAN/control"
printf 'Description: radeonlab lab stand-in, not AMD software: a DKMS build that fails\n' >> "$d/DEBIAN/control"
printf '#!/bin/sh\necho "Error! Bad return status for module build on kernel: $(uname -r) (x86_64)" >&2\n' > "$d/DEBIAN/postinst"
printf 'echo "Consult %(tree)s/build/make.log for more information." >&2\nexit 10\n' >> "$d/DEBIAN/postinst"
chmod 0755 "$d/DEBIAN/postinst"
dpkg-deb --root-owner-group --build "$d" /tmp/radeonlab-broken-amdgpu-dkms.deb >/dev/null
printf 'DKMS make.log for amdgpu-6.16.6-9999999.24.04 for kernel %%s (x86_64)\n' "$(uname -r)" > %(tree)s/build/make.log
printf 'make: Entering directory x\n  CC [M]  amdgpu_drv.o\n%(error)s\nmake[1]: *** [Makefile:1: amdgpu_drv.o] Error 1\n' >> %(tree)s/build/make.log
dpkg -i /tmp/radeonlab-broken-amdgpu-dkms.deb >/dev/null 2>&1 || true
""" % {"tree": TREE, "version": VERSION, "error": ERROR}
DPKG = "dpkg-query --show --showformat='${db:Status-Abbrev}\\n' amdgpu-dkms 2>/dev/null; echo audit:$(dpkg --audit | wc -l)"


def _sh(cmd):
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout + run.stderr


def _converge():
    return faultlab.playbook(["-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--limit", HOST])


@faultlab.once
def _recovery():
    rc, out = _sh("dpkg-query --show amdgpu-dkms 2>/dev/null | grep -c . || true")
    assert out.strip() in ("", "0"), "amdgpu-dkms is on %s before the test planted it" % HOST
    _sh(PLANT)
    try:
        planted = _sh(DPKG)[1]
        first_rc, first, _ = _converge()
        after_first = _sh(DPKG)[1]
        second_rc, second, _ = _converge()
        after_second = _sh(DPKG)[1]
    finally:
        _sh("dpkg --remove --force-remove-reinstreq amdgpu-dkms >/dev/null 2>&1; rm -rf %s /tmp/radeonlab-broken-amdgpu-dkms.deb" % TREE)
    return dict(planted=planted, first_rc=first_rc, first=first, after_first=after_first, second_rc=second_rc, second=second,
                after_second=after_second)


def test_the_lab_plants_a_half_configured_amdgpu_dkms():
    run = _recovery()
    assert run["planted"].startswith("iF") and "audit:0" not in run["planted"], run["planted"]


def test_preflight_names_the_broken_package_and_the_make_log_error_line():
    run = _recovery()
    assert "RECOVERING amdgpu-dkms: amdgpu-dkms %s is half-configured (dpkg iF)" % VERSION in run["first"], run["first"][-3000:]
    assert ERROR in run["first"] and TREE + "/build/make.log says" in run["first"], run["first"][-3000:]
    assert "CC [M]" not in run["first"].split("RECOVERING", 1)[1].split("\n", 1)[0], "only the relevant make.log lines"


def test_a_rerun_recovers_the_host_and_dpkg_is_consistent():
    run = _recovery()
    assert run["first_rc"] == 0, faultlab.failure_messages(run["first"]) or run["first"][-3000:]
    assert "dpkg --configure -a" not in " ".join(faultlab.failure_messages(run["first"]))
    assert run["after_first"].strip().splitlines()[-1] == "audit:0", run["after_first"]
    assert not run["after_first"].startswith(("iF", "iU", "iH")), "amdgpu-dkms is still broken: %s" % run["after_first"]


def test_the_run_after_the_recovery_has_nothing_to_recover():
    run = _recovery()
    assert run["second_rc"] == 0, faultlab.failure_messages(run["second"]) or run["second"][-3000:]
    assert "RECOVERING amdgpu-dkms" not in run["second"]
    assert run["after_second"] == run["after_first"]

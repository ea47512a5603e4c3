"""Where the amdgpu kernel driver comes from (issue 48): in a container the host's (inbox), said and kept in
rocm_driver_facts; with rocm_driver_kernel_module: dkms, a driver line known not to build on the next boot's kernel is
refused before anything changes. navi22 runs ROCm 7.0, whose amdgpu-dkms 30.10 fails to build on 6.17 kernels
(support_matrix AMDGPU_DKMS_KERNELS, source dkms_5553): the test plants a 6.17 kernel in /boot, as a host that installed
a new kernel and has not rebooted yet, and removes it after.
"""
import json
import os
import sys

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "rocm_driver")
HOST = SCENARIO + "-navi22"
CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
NEXT_BOOT = "/boot/vmlinuz-6.17.0-19-generic"
# what a refused run must leave as it was: apt's sources, pins and configuration, the installed packages, /boot
STATE = ("find /etc/apt /boot -type f -exec sha256sum {} + | sort; "
         "dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\\n' | sort")


def _sh(cmd):
    import subprocess
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout


@faultlab.once
def _dkms_run():
    rc, _ = _sh("test -e %s" % NEXT_BOOT)
    assert rc != 0, "%s exists before the test planted it" % NEXT_BOOT
    _sh("touch %s" % NEXT_BOOT)
    try:
        before = _sh(STATE)[1]
        rc, out, secs = faultlab.playbook(["-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--limit", HOST,
                                           "-e", "rocm_driver_kernel_module=dkms"])
        after = _sh(STATE)[1]
    finally:
        _sh("rm -f %s" % NEXT_BOOT)
    messages = faultlab.failure_messages(out)
    return dict(rc=rc, secs=secs, before=before, after=after, msg=messages[-1] if messages else "", out=out[-3000:])


def test_in_a_container_the_kernel_driver_is_the_hosts(host):
    record = host.file("/etc/radeonlab-lab/rocm_driver.json")
    assert record.exists, "converge recorded no rocm_driver_facts"
    facts = json.loads(record.content_string)
    assert facts["kernel_driver"] == "inbox" and facts["reason"] == "the host is a container (its host has the driver)", facts
    assert not host.package("amdgpu-dkms").is_installed


def test_a_driver_known_not_to_build_on_the_next_boot_kernel_is_refused_before_any_change():
    run = _dkms_run()
    assert run["rc"] != 0, run["out"]
    assert "(driver line 30.10." in run["msg"] and "is known not to build on kernel 6.17.0-19-generic (next boot)" in run["msg"], run["msg"]
    assert "__dma_fence_is_later" in run["msg"] and "rocm_driver_kernel_module: inbox" in run["msg"], run["msg"]
    assert "Nothing was changed." in run["msg"]
    assert run["after"] == run["before"], "the refused run changed the host"

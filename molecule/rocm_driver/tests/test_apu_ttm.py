"""The TTM page limit of a Ryzen AI Max APU's GPU (issue 47): reported everywhere, set only when asked for on the APU.

The lab's hosts are containers, where the limit is the host kernel's: converge records the report (rocm_driver.json).
The opt-in path is played on one host as a bare-metal Strix Halo: the test plants a sysfs tree (the APU's PCI ids
1002:1586, a ttm module whose live pages_limit is 1 GiB) and runs converge with extra vars that take the host for bare
metal (_rocm_driver_in_container: false), keep the kernel's own driver and read sysfs from the planted tree. A request
the RAM cannot give is refused before any change; a valid one writes AMD's line and ends the host with REBOOT REQUIRED
(rocm_driver_reboot is false here); once the live limit is the new one (as after the reboot) the play goes on.
Everything the runs wrote is removed after.
"""
import json
import os
import shlex
import sys

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "rocm_driver")
HOST = SCENARIO + "-navi31"
CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "converge.yml")
SYS = "/tmp/radeonlab-lab-apu/sys"
DEVICE = SYS + "/devices/pci0000:00/0000:c5:00.0"
LIVE = SYS + "/module/ttm/parameters/pages_limit"
CONF = "/etc/modprobe.d/ttm.conf"
MARKER = "/run/reboot-required"
RECORD = "/etc/radeonlab-lab/rocm_driver.json"
LIVE_PAGES = 262144  # 1 GiB
ASK_GIB = 2  # 524288 pages
RESERVE_GIB = 7.2  # plugins/module_utils/ttm_limit.py OS_RESERVE_GIB
# what a refused run must leave as it was
STATE = "ls -la /etc/modprobe.d; test -e %s && echo marker; cat %s 2>/dev/null" % (MARKER, CONF)


def _sh(cmd):
    import subprocess
    run = subprocess.run(["docker", "exec", HOST, "sh", "-c", cmd], capture_output=True, text=True, check=False)
    return run.returncode, run.stdout


def _ram_gib():
    kib = int(_sh("awk '/^MemTotal:/ {print $2}' /proc/meminfo")[1].strip())
    return (kib // 1024) / 1024.0  # Ansible's memtotal_mb, in GiB


def _plant(live_pages):
    _sh("mkdir -p %s %s/bus/pci/devices %s && echo 0x1002 > %s/vendor && echo 0x1586 > %s/device && "
        "ln -sfn ../../../devices/pci0000:00/0000:c5:00.0 %s/bus/pci/devices/0000:c5:00.0 && echo %d > %s"
        % (DEVICE, SYS, os.path.dirname(LIVE), DEVICE, DEVICE, SYS, live_pages, LIVE))


def _converge(gib):
    extra = {"_rocm_driver_in_container": False, "_rocm_driver_sysfs": SYS, "rocm_driver_kernel_module": "inbox",
             "rocm_driver_apu_gtt_gib": gib}
    return faultlab.playbook(["-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE, "--limit", HOST, "-e", json.dumps(extra)])


def _run(gib, live_pages=LIVE_PAGES, keep_conf=False):
    """Converge as a bare-metal Strix Halo asking for ``gib``; everything it wrote is removed after (the record restored)."""
    marker_before = _sh("test -e %s" % MARKER)[0] == 0
    record = _sh("cat %s" % RECORD)[1]
    assert _sh("test -e %s" % CONF)[0] != 0, "%s exists before the test wrote it" % CONF
    _plant(live_pages)
    if keep_conf:  # as a run before the reboot left it
        _sh("printf 'options ttm pages_limit=%d\\n' > %s" % (live_pages, CONF))
    try:
        before = _sh(STATE)[1]
        rc, out, secs = _converge(gib)
        after = _sh(STATE)[1]
        conf = _sh("stat -c '%%a %%U:%%G' %s && cat %s" % (CONF, CONF))[1]
        marker = _sh("test -e %s" % MARKER)[0] == 0
    finally:
        _sh("rm -rf %s %s" % (os.path.dirname(SYS), CONF))
        if not marker_before:
            _sh("rm -f %s" % MARKER)
        if record:
            _sh("printf '%%s' %s > %s" % (shlex.quote(record), RECORD))
    messages = faultlab.failure_messages(out)
    # the callback folds long messages over lines and doubles a quote in a quoted scalar: one line, as written
    flat = " ".join(out.split()).replace("''", "'")
    return dict(rc=rc, secs=secs, before=before, after=after, conf=conf, marker=marker, out=flat,
                msg=messages[-1] if messages else "")


@faultlab.once
def _refused():
    return _run(int(_ram_gib()) + 1)


@faultlab.once
def _asked():
    return _run(ASK_GIB)


@faultlab.once
def _booted():
    return _run(ASK_GIB, live_pages=ASK_GIB * 262144, keep_conf=True)


def test_in_a_container_the_limit_is_only_reported(host):
    record = host.file(RECORD)
    assert record.exists, "converge recorded no rocm_driver_facts"
    ttm = json.loads(record.content_string)["ttm"]
    assert not ttm["applies"] and ttm["verdict"] == "leave" and ttm["requested_gib"] == 0, ttm
    assert ttm["summary"].startswith("a container: the TTM limit is its host kernel's"), ttm["summary"]
    if ttm["current_pages"] is None:  # the container's host has no ttm module loaded
        assert "no TTM here (/sys/module/ttm/parameters/pages_limit does not exist" in ttm["summary"], ttm["summary"]
    else:
        assert "TTM limit %s GiB (%d pages)" % (ttm["current_gib"], ttm["current_pages"]) in ttm["summary"], ttm["summary"]
    assert not host.file(CONF).exists


def test_a_share_larger_than_the_ram_is_refused_before_any_change():
    run = _refused()
    assert run["rc"] != 0, run["out"][-3000:]
    assert "rocm_driver_apu_gtt_gib=%d" % (int(_ram_gib()) + 1) in run["msg"], run["msg"]
    assert "RAM the OS sees (MemTotal)" in run["msg"] and run["msg"].endswith("Nothing was changed."), run["msg"]
    assert run["after"] == run["before"], "the refused run changed the host"


def test_a_share_the_host_can_give_is_written_and_waits_for_the_reboot():
    run = _asked()
    if _ram_gib() - ASK_GIB < RESERVE_GIB:  # a lab machine this small refuses even 2 GiB, before any change
        assert run["rc"] != 0 and "less than the %s GiB it keeps" % RESERVE_GIB in run["msg"], run["msg"]
        return
    assert run["rc"] == 0, run["out"][-3000:]
    assert run["conf"].splitlines()[0] == "644 root:root", run["conf"]
    assert run["conf"].splitlines()[-1] == "options ttm pages_limit=524288", run["conf"]
    assert run["marker"], "no %s after the limit changed" % MARKER
    assert "REBOOT REQUIRED on %s: the TTM limit" % HOST in run["out"], run["out"][-3000:]
    assert "set to 2.0 GiB (524288 pages) in /etc/modprobe.d/ttm.conf but the kernel still runs with 262144 pages" in run["out"]
    assert "rocm_driver_reboot: false" in run["out"]


@pytest.mark.full_only
def test_once_booted_into_the_new_limit_the_play_goes_on():
    if _ram_gib() - ASK_GIB < RESERVE_GIB:
        pytest.skip("the lab machine has less than %s GiB of RAM: 2 GiB for the GPU is refused" % (ASK_GIB + RESERVE_GIB))
    run = _booted()
    assert run["rc"] == 0, run["out"][-3000:]
    assert "REBOOT REQUIRED" not in run["out"]
    assert "a Ryzen AI Max APU: TTM limit 2.0 GiB (524288 pages" in run["out"] and "the 2 GiB asked for is in effect" in run["out"]
    assert run["conf"].splitlines()[-1] == "options ttm pages_limit=524288", run["conf"]  # left as it was

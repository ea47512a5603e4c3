"""Verify the smoke scenario on real container state."""

import functools
import os
import subprocess
import tempfile


def test_systemd_is_pid_1(host):
    assert host.file("/proc/1/comm").content_string.strip() == "systemd"


def test_system_is_running(host):
    state = host.run("systemctl is-system-running").stdout.strip()
    assert state in ("running", "degraded"), host.run("systemctl --failed --no-legend").stdout


def test_marker_written_with_host_identity(host):
    conf = host.file("/etc/radeonlab-smoke/host.conf")
    assert conf.exists
    assert conf.mode == 0o644
    assert conf.user == "root"
    text = conf.content_string
    assert "hostname=%s" % host.backend.get_hostname() in text
    assert "distribution=Debian 12" in text
    expected = "06_rx7900xtx" if host.backend.get_hostname().endswith("navi31") else "31_rx6750gre"
    assert "capture=" + expected in text


def test_marker_names_the_capture_prepare_chose(host):
    # converge copied the host's capture name into its marker; the stand-in rocminfo reads the same name
    # from the file the shared prepare wrote, so the two must agree
    chosen = host.file("/etc/radeonlab-lab/rocminfo-capture").content_string.strip()
    marker = host.file("/etc/radeonlab-smoke/host.conf")
    assert marker.exists, "converge wrote no marker"
    assert "capture=%s\n" % chosen in marker.content_string


# Issue 20 item 3: the whole site in check mode on these fresh hosts (nothing of the site on them yet), through the
# site scenario's converge (the lab fleet's variables; this scenario's own wheelhouse port, molecule.yml).
SITE_CONVERGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "site", "converge.yml")
SNAPSHOT = (
    "for d in /etc/apt /etc/systemd /etc/radeonlab /opt /var/lib/radeonlab /usr/local; do [ -e $d ] || { echo absent $d; continue; }; "
    "find $d -xdev -printf '%p %y %m %u %g %s\\n' | sort; find $d -xdev -type f -exec md5sum {} + | sort; done; getent passwd; getent group"
)


def _snapshot(name):
    return subprocess.run(["docker", "exec", name, "sh", "-c", SNAPSHOT], capture_output=True, text=True, check=True, timeout=120).stdout


@functools.lru_cache(maxsize=None)
def _site_check_mode(names):
    before = {name: _snapshot(name) for name in names}
    with tempfile.TemporaryDirectory() as results:
        argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], SITE_CONVERGE, "--check", "--diff"]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False,
                             env=dict(os.environ, RADEONLAB_SITE_RESULTS=results))
        left = os.listdir(results)
    after = {name: _snapshot(name) for name in names}
    return run.returncode, run.stdout + run.stderr, {name: before[name] == after[name] for name in names}, left


def test_the_site_in_check_mode_on_a_fresh_host_fails_nowhere_changes_nothing_and_says_what_it_would_do(host):
    name = host.backend.get_hostname()
    rc, output, unchanged, left = _site_check_mode(tuple(sorted(["smoke-navi31", "smoke-navi22"])))
    recap = [line for line in output.splitlines() if line.startswith(name + " ") and "ok=" in line][-1]
    assert rc == 0 and " failed=0 " in recap and " unreachable=0 " in recap, output[-3000:]
    assert unchanged[name], "check mode changed the host"
    assert left == [], "check mode wrote results on the controller: %s" % left
    # what a real run would do, and where check mode had to stop (nothing after ROCm's packages can be predicted)
    assert "Check mode: a real run installs" in output and "[%s]" % name in output
    stop = output.split("End the check of this host where nothing further can be predicted", 1)
    assert "Check mode: apt knows no candidate for" in stop[0] and "rocm-hip-runtime" in stop[0], output[-3000:]
    assert "TASK [radeonlab.llm.venv_pip : Start pip install" not in output

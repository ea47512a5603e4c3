"""Verify the smoke scenario on real container state."""


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

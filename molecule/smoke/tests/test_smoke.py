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


def test_host_network_namespace_is_shared(host):
    # network_mode: host - the container sees the machine's loopback, no private bridge address
    addrs = host.run("ip -o -4 addr show").stdout
    assert "docker0" not in addrs
    assert "127.0.0.1" in addrs


def test_shared_prepare_chose_a_capture(host):
    conf = host.file("/etc/radeonlab-lab/rocminfo-capture")
    assert conf.exists
    assert conf.content_string.strip().endswith(".txt")

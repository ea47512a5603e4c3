"""Verify radeonlab.llm.rocm_driver on real container state (see ../molecule.yml)."""
import re

import pytest

EXPECTED = {
    "navi31": {"meta": "rocm-hip-runtime", "extra": [], "rocm": "7.1.0", "build": "70100"},
    "navi22": {"meta": "rocm-dev", "extra": ["rocm-smi-lib"], "rocm": "7.0.0", "build": "70000"},
}


@pytest.fixture()
def expected(host):
    return EXPECTED[host.backend.get_hostname().rsplit("-", 1)[1]]


def test_userspace_packages_installed(host, expected):
    for name in [expected["meta"], "rocminfo", "rocm-core", "python3-setuptools", "python3-wheel"] + expected["extra"]:
        pkg = host.package(name)
        assert pkg.is_installed, name
    assert host.package("rocm-core").version.startswith(expected["rocm"])


def test_kernel_module_skipped_in_container(host, expected):
    # as 'amdgpu-install --no-dkms': the user space went in, but no headers, no DKMS driver, no
    # firmware, no pin, no reboot flag (the absences mean something only once the role has run)
    assert host.package(expected["meta"]).is_installed, "the role installed no user space"
    for name in ["amdgpu-dkms", "amdgpu-dkms-firmware", "dkms"]:
        assert not host.package(name).is_installed, name
    assert host.run("dpkg-query -W 'linux-headers-*'").rc != 0
    assert not host.file("/etc/apt/preferences.d/amdgpu-pin-1001").exists
    assert not host.file("/run/reboot-required").exists


def test_ld_so_conf(host):
    conf = host.file("/etc/ld.so.conf.d/rocm.conf")
    assert conf.exists and conf.user == "root" and conf.mode == 0o644
    lines = [l for l in conf.content_string.splitlines() if l and not l.startswith("#")]
    assert lines == ["/opt/rocm/lib", "/opt/rocm/lib64"]
    # the handler ran ldconfig after the file was written, and ldconfig reads it
    assert host.file("/etc/ld.so.cache").mtime >= conf.mtime
    scanned = host.run("ldconfig -v 2>/dev/null").stdout
    assert "/opt/rocm/lib:" in scanned and "/opt/rocm/lib64:" in scanned


def test_profile_snippet_puts_rocm_on_path(host):
    snippet = host.file("/etc/profile.d/rocm.sh")
    assert snippet.exists and snippet.mode == 0o644
    out = host.run("env -i HOME=/root PATH=/usr/bin:/bin bash -lc 'command -v rocminfo; echo $PATH'")
    assert out.rc == 0, out.stderr
    found, path = out.stdout.splitlines()[-2:]
    assert found == "/opt/rocm/bin/rocminfo"
    assert path.split(":").count("/opt/rocm/bin") == 1
    # idempotent for nested login shells
    twice = host.run("env -i HOME=/root PATH=/usr/bin:/bin bash -lc '. /etc/profile.d/rocm.sh; echo $PATH'")
    assert twice.stdout.strip().split(":").count("/opt/rocm/bin") == 1


def test_rocminfo_is_the_configured_rocm_line(host, expected):
    # the rocminfo that the role's verify ran (and a login shell finds) is the package of the ROCm line
    # this host is configured for, from the lab mirror at the role's pin; what it prints is the
    # stand-in's capture, not the role's doing, so it is not checked here
    real = host.check_output("readlink -f /opt/rocm/bin/rocminfo")  # /opt/rocm links to /opt/rocm-<version>
    assert real == "/opt/rocm-%s/bin/rocminfo" % expected["rocm"]
    owner = host.check_output("dpkg-query -S %s", real)
    assert owner.split(":")[0] == "rocminfo", owner
    assert ".%s-" % expected["build"] in host.package("rocminfo").version
    policy = host.check_output("apt-cache policy rocminfo")
    assert re.search(r"^\s+\*\*\* %s 600$" % re.escape(host.package("rocminfo").version), policy, re.M), policy

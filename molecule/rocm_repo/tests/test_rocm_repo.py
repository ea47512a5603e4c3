"""Verify radeonlab.llm.rocm_repo on the lab hosts (real container state, lab mirror)."""
import os
import pathlib

import pytest

PROJECT = pathlib.Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", pathlib.Path(__file__).resolve().parents[3]))
LAB_FPR = (PROJECT / ".cache/lab/rocm/rocm.gpg.fingerprint").read_text().strip()
MIRROR = os.environ.get("LAB_MIRROR_URL", "http://127.0.0.1:8765").rstrip("/")

# host -> (ROCm path version, amdgpu path version, suite, ROCm full version of the lab's stand-in)
EXPECT = {
    "navi31": ("7.1", "30.20", "jammy", "7.1.0"),
    "navi22": ("6.4", "6.4", "jammy", "6.4.0"),
}


@pytest.fixture()
def expect(host):
    return EXPECT[host.backend.get_hostname().rsplit("-", 1)[1]]


def _fingerprints(host, path):
    out = host.check_output("h=$(mktemp -d) && gpg --batch --homedir $h --with-colons --show-keys %s; rm -rf $h", path)
    lines = out.splitlines()
    return [lines[i + 1].split(":")[9] for i, line in enumerate(lines) if line.startswith("pub:")]


def test_keyring_holds_only_the_pinned_key(host):
    key = host.file("/etc/apt/keyrings/rocm.asc")
    assert key.exists and key.user == "root" and key.mode == 0o644
    assert key.content_string.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    assert _fingerprints(host, "/etc/apt/keyrings/rocm.asc") == [LAB_FPR]


def test_legacy_setup_is_gone(host):
    assert not host.file("/etc/apt/sources.list.d/rocm.list").exists
    assert not host.file("/etc/apt/sources.list.d/amdgpu.list").exists
    assert host.run("ls /etc/apt/trusted.gpg.d/ | grep -i rocm").rc == 1


def test_deb822_sources(host, expect):
    rocm_ver, amdgpu_ver, suite, _ = expect
    for name, uri in (("rocm", "%s/rocm/apt/%s" % (MIRROR, rocm_ver)),
                      ("amdgpu", "%s/amdgpu/%s/ubuntu" % (MIRROR, amdgpu_ver))):
        src = host.file("/etc/apt/sources.list.d/%s.sources" % name)
        assert src.exists and src.mode == 0o644
        fields = dict(line.split(": ", 1) for line in src.content_string.splitlines() if ": " in line)
        assert fields["Types"] == "deb"
        assert fields["URIs"] == uri
        assert fields["Suites"] == suite
        assert fields["Components"] == "main"
        assert fields["Architectures"] == "amd64"
        assert fields["Signed-By"] == "/etc/apt/keyrings/rocm.asc"
    # nothing else in sources.list.d points at the mirror
    others = host.check_output("grep -l -r %s /etc/apt/sources.list.d/ || true", MIRROR).split()
    assert sorted(others) == ["/etc/apt/sources.list.d/amdgpu.sources", "/etc/apt/sources.list.d/rocm.sources"]


def test_pin(host):
    pin = host.file("/etc/apt/preferences.d/rocm-pin-600")
    assert pin.exists and pin.mode == 0o644
    body = [line for line in pin.content_string.splitlines() if line and not line.startswith("#")]
    assert body == ["Package: *", "Pin: release o=repo.radeon.com", "Pin-Priority: 600"]


def test_rocm_candidate_comes_from_the_mirror_at_600(host, expect):
    rocm_ver, _, suite, full = expect
    policy = host.check_output("apt-cache policy rocm")
    assert "Candidate: %s." % full in policy, policy
    assert " 600 %s/rocm/apt/%s %s/main amd64 Packages" % (MIRROR, rocm_ver, suite) in policy, policy


def test_amdgpu_candidate_comes_from_the_mirror_at_600(host, expect):
    _, amdgpu_ver, suite, _ = expect
    policy = host.check_output("apt-cache policy amdgpu-dkms")
    assert "Candidate: (none)" not in policy, policy
    assert " 600 %s/amdgpu/%s/ubuntu %s/main amd64 Packages" % (MIRROR, amdgpu_ver, suite) in policy, policy


def test_apt_update_is_clean(host):
    # the cache refresh the role triggered left no warnings behind (signature, conflicting Signed-By)
    out = host.run("apt-get update 2>&1")
    assert out.rc == 0, out.stdout
    assert "W:" not in out.stdout and "E:" not in out.stdout, out.stdout

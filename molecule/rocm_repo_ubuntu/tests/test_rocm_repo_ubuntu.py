"""Verify radeonlab.llm.rocm_repo on hosts presenting Ubuntu 22.04 (navi31) and 24.04 (navi22)."""
import os
import pathlib

import pytest

PROJECT = pathlib.Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", pathlib.Path(__file__).resolve().parents[3]))
LAB_FPR = (PROJECT / ".cache/lab/rocm/rocm.gpg.fingerprint").read_text().strip()
MIRROR = os.environ.get("LAB_MIRROR_URL", "http://127.0.0.1:8765").rstrip("/")

# host -> (os-release VERSION_ID, suite); both on the default ROCm 7.1
EXPECT = {"navi31": ("22.04", "jammy"), "navi22": ("24.04", "noble")}


@pytest.fixture()
def expect(host):
    return EXPECT[host.backend.get_hostname().rsplit("-", 1)[1]]


def test_sources_use_the_ubuntu_suite(host, expect):
    suite = expect[1]
    for name, path in (("rocm", "rocm/apt/7.1"), ("amdgpu", "amdgpu/30.20/ubuntu")):
        text = host.file("/etc/apt/sources.list.d/%s.sources" % name).content_string
        assert "URIs: %s/%s\n" % (MIRROR, path) in text
        assert "Suites: %s\n" % suite in text
        assert "Signed-By: /etc/apt/keyrings/rocm.asc\n" in text


def test_keyring_fingerprint(host):
    out = host.check_output("h=$(mktemp -d) && gpg --batch --homedir $h --with-colons --show-keys "
                            "/etc/apt/keyrings/rocm.asc; rm -rf $h")
    assert [line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:")][0] == LAB_FPR


def test_candidates_come_from_the_ubuntu_suite_at_600(host, expect):
    version_id, suite = expect
    rocm = host.check_output("apt-cache policy rocm")
    # the lab builds one package set per suite, versioned ~<Ubuntu release> like AMD's
    assert "Candidate: 7.1.0." in rocm and "~%s" % version_id in rocm, rocm
    assert " 600 %s/rocm/apt/7.1 %s/main amd64 Packages" % (MIRROR, suite) in rocm, rocm
    dkms = host.check_output("apt-cache policy amdgpu-dkms")
    assert " 600 %s/amdgpu/30.20/ubuntu %s/main amd64 Packages" % (MIRROR, suite) in dkms, dkms


def test_pin(host):
    assert "Pin: release o=repo.radeon.com\nPin-Priority: 600" in host.file("/etc/apt/preferences.d/rocm-pin-600").content_string

"""The role refused the lab key (pinned: AMD's fingerprint) and wrote nothing.

"Wrote nothing" holds on a host where the role never ran as well: every check first reads the failure record
converge.yml writes in its rescue, and asserts that the role stopped at the fingerprint check (after fetching the key
into a scratch GnuPG home, before writing anything).
"""
import json
import os
import pathlib

PROJECT = pathlib.Path(os.environ.get("MOLECULE_PROJECT_DIRECTORY", pathlib.Path(__file__).resolve().parents[3]))
LAB_FPR = (PROJECT / ".cache/lab/rocm/rocm.gpg.fingerprint").read_text().strip()
AMD_FPR = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"


def _refused_at_the_fingerprint_check(host):
    """The failure record converge.yml wrote: the role ran and stopped at the fingerprint check."""
    record = host.file("/root/rocm_repo_failure.json")
    assert record.exists, "converge did not record a failure: the role did not run, or did not fail"
    failure = json.loads(record.content_string)
    assert failure["task"] == "Check the key against rocm_repo_key_fingerprint before anything is written", failure
    return failure


def test_failure_was_the_fingerprint_check(host):
    failure = _refused_at_the_fingerprint_check(host)
    assert "its fingerprint is %s but rocm_repo_key_fingerprint pins %s" % (LAB_FPR, AMD_FPR) in failure["msg"]
    assert "Nothing was changed" in failure["msg"]


def test_no_keyring_source_or_pin(host):
    _refused_at_the_fingerprint_check(host)
    assert not host.file("/etc/apt/keyrings/rocm.asc").exists
    assert host.run("ls /etc/apt/keyrings/ | grep -i rocm").rc == 1
    assert not host.file("/etc/apt/sources.list.d/rocm.sources").exists
    assert not host.file("/etc/apt/sources.list.d/amdgpu.sources").exists
    assert not host.file("/etc/apt/preferences.d/rocm-pin-600").exists
    listing = host.check_output("ls -A /etc/apt/sources.list.d/").split()
    assert sorted(listing) == ["amdgpu.list", "rocm.list"], listing


def test_legacy_setup_untouched(host):
    _refused_at_the_fingerprint_check(host)
    # the seeded legacy files are still there, unchanged: the failure came before any change
    assert host.file("/etc/apt/trusted.gpg.d/rocm.gpg").exists
    assert "/rocm/apt/6.0 jammy main" in host.file("/etc/apt/sources.list.d/rocm.list").content_string
    assert "/amdgpu/6.0/ubuntu jammy main" in host.file("/etc/apt/sources.list.d/amdgpu.list").content_string


def test_no_scratch_gnupg_home_left(host):
    _refused_at_the_fingerprint_check(host)  # the check ran gpg in a scratch home: it was made, and removed
    assert host.run("ls -d /tmp/rocm_repo_gnupg.*").rc != 0

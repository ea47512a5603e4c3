"""The role's final check fails with rocm_facts' hint (see ../molecule.yml)."""


def test_failure_names_the_cause_and_the_fix(host):
    msg = host.file("/etc/radeonlab-lab/rocm_driver-failure.txt").content_string
    assert "rocminfo lists 0 GPU(s)" in msg
    assert "1 required" in msg
    assert "kfd_permission_denied" in msg
    assert "Unable to open /dev/kfd read-write: Permission denied" in msg
    assert "render" in msg and "usermod" in msg


def test_everything_was_installed_before_the_check(host):
    # the check is the last step: packages and configuration are complete, nothing half-applied
    assert host.package("rocm-hip-runtime").is_installed
    assert host.file("/etc/ld.so.conf.d/rocm.conf").exists
    assert host.file("/etc/profile.d/rocm.sh").exists

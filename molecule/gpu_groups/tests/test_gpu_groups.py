"""Verify radeonlab.llm.gpu_groups on the lab hosts."""
import pytest


def _short(host):
    return host.backend.get_hostname().rsplit("-", 1)[1]


@pytest.mark.parametrize("group", ["render", "video"])
def test_access_groups_exist_as_system_groups(host, group):
    line = host.check_output("getent group %s", group)
    assert int(line.split(":")[2]) < 1000, line


def test_trainer_is_in_the_access_groups(host):
    groups = host.check_output("id -nG trainer").split()
    assert "render" in groups and "video" in groups
    assert "trainer" in groups  # primary group kept


def test_alice_only_where_named(host):
    groups = host.check_output("id -nG alice").split()
    if _short(host) == "navi22":
        assert "render" in groups and "video" in groups
    else:  # navi31 used the default: only the connecting user (trainer)
        assert "render" not in groups and "video" not in groups


def test_root_was_not_added(host):
    assert "render" not in host.check_output("id -nG root").split()


def test_adduser_defaults(host):
    conf = host.file("/etc/adduser.conf").content_string.splitlines()
    assert "ADD_EXTRA_GROUPS=1" in conf
    extra = [line for line in conf if line.startswith("EXTRA_GROUPS=")]
    if _short(host) == "navi22":
        assert extra == ['EXTRA_GROUPS="users video render"']
    else:
        assert extra == ['EXTRA_GROUPS="video render"']


def test_new_adduser_account_gets_the_groups(host):
    groups = host.check_output("id -nG newcomer").split()
    assert "render" in groups and "video" in groups


def test_udev_rule(host):
    rule = host.file("/etc/udev/rules.d/70-amdgpu.rules")
    if _short(host) == "navi22":
        assert rule.exists and rule.mode == 0o644
        text = rule.content_string
        assert 'KERNEL=="kfd", GROUP="render", MODE="0660"' in text
        assert 'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0660"' in text
    else:
        assert not rule.exists

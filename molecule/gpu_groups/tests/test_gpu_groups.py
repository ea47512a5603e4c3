"""Verify radeonlab.llm.gpu_groups on the lab hosts.

Each check rests on something converge did (a membership the role added, adduser's defaults, the udev rule written or
removed), so that none passes on a host where the role never ran: the base image has the video group already, no one
in it, and prepare.yml plants on navi31 a udev rule an earlier run of the role would have written.
"""
import pytest

# Who the render and video groups hold after converge: the users the role added (navi31: the connecting user,
# trainer; navi22: gpu_groups_users) and newcomer, whom converge.yml creates with adduser (adduser's defaults).
MEMBERS = {"navi31": ["newcomer", "trainer"], "navi22": ["alice", "newcomer", "trainer"]}


def _short(host):
    return host.backend.get_hostname().rsplit("-", 1)[1]


def _members(host, group):
    line = host.check_output("getent group %s", group)
    return sorted(name for name in line.split(":")[3].split(",") if name)


@pytest.mark.parametrize("group", ["render", "video"])
def test_access_groups_exist_as_system_groups(host, group):
    line = host.check_output("getent group %s", group)
    assert int(line.split(":")[2]) < 1000, line
    assert "trainer" in _members(host, group), line  # the group the role made sure of holds the user it added


def test_trainer_is_in_the_access_groups(host):
    groups = host.check_output("id -nG trainer").split()
    assert "render" in groups and "video" in groups
    assert "trainer" in groups  # primary group kept


def test_alice_only_where_named(host):
    groups = host.check_output("id -nG alice").split()
    if _short(host) == "navi22":
        assert "render" in groups and "video" in groups
    else:  # navi31 used the default: only the connecting user (trainer), not alice
        assert "render" not in groups and "video" not in groups
        assert "render" in host.check_output("id -nG trainer").split(), "the role did not add the connecting user"


@pytest.mark.parametrize("group", ["render", "video"])
def test_root_was_not_added(host, group):
    # exactly the users the role was to add (and newcomer): not root, not anyone else
    assert _members(host, group) == MEMBERS[_short(host)]


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
        assert "Managed by radeonlab.llm.gpu_groups" in text
        assert 'KERNEL=="kfd", GROUP="render", MODE="0660"' in text
        assert 'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0660"' in text
    else:  # gpu_groups_udev_rule false: the rule prepare.yml planted as an earlier run's is removed
        assert not rule.exists

"""The 6.4 -> 30.20 upgrade lands the 30.20 firmware despite the epoch (see ../molecule.yml)."""
import re

FIRMWARE_6_4 = "1:6.12.12.60400-2147987.22.04"
FIRMWARE_30_20 = "30.20.0.0.30200000-2238411.22.04"


def _version(host, name):
    out = host.run("dpkg-query -W -f='${Version}' %s", name)
    assert out.rc == 0, out.stderr
    return out.stdout.strip()


def test_converge_replaced_the_epoch_firmware(host):
    # dpkg's log holds the change converge made: the 6.4 line's firmware (installed by prepare)
    # replaced by the 30.20 line's, which by dpkg's ordering is OLDER (the epoch), so apt's default
    # policy (highest version at equal pin 600) would never have made it
    log = host.file("/var/log/dpkg.log").content_string
    change = re.search(r" upgrade amdgpu-dkms-firmware:all (\S+) (\S+)$", log, re.M)
    assert change, "dpkg never replaced amdgpu-dkms-firmware"
    assert change.groups() == (FIRMWARE_6_4, FIRMWARE_30_20)
    assert host.run("dpkg --compare-versions %s gt %s", *change.groups()).rc == 0


def test_firmware_is_the_configured_lines(host):
    assert _version(host, "amdgpu-dkms-firmware") == FIRMWARE_30_20
    assert host.file("/lib/firmware/updates/amdgpu/RADEONLAB-LAB-STANDIN.txt").contains(FIRMWARE_30_20)
    # the firmware changed, yet in a container the module is still not installed and no reboot flagged
    assert not host.package("amdgpu-dkms").is_installed
    assert not host.file("/run/reboot-required").exists


def test_pin_keeps_the_driver_on_the_configured_line(host):
    pin = host.file("/etc/apt/preferences.d/amdgpu-pin-1001")
    assert pin.exists and pin.user == "root" and pin.mode == 0o644
    text = pin.content_string
    assert "Package: amdgpu-dkms-firmware amdgpu-dkms\n" in text
    assert "Pin: release o=repo.radeon.com\n" in text
    assert "Pin-Priority: 1001\n" in text
    policy = host.run("apt-cache policy amdgpu-dkms-firmware").stdout
    assert "Installed: %s" % FIRMWARE_30_20 in policy
    assert "Candidate: %s" % FIRMWARE_30_20 in policy
    # a later 'apt upgrade' by hand does not bring the old line back either
    assert "amdgpu" not in host.run("apt-get -s -o Debug::NoLocking=1 full-upgrade").stdout


def test_only_the_30_20_driver_line_is_configured(host):
    sources = host.run("apt-cache madison amdgpu-dkms-firmware").stdout
    assert "/amdgpu/30.20/ubuntu" in sources
    assert "/amdgpu/6.4/" not in sources

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tables for the free-space check before the venv installs and the model copy (plugins/module_utils/free_space.py)."""

import json

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import free_space as fs
from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs as si
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import VENV_SPACE

GIB, MIB = 1024 ** 3, 1024 ** 2
MOUNTS = [{"mount": "/", "size_available": 50 * GIB, "fstype": "ext4"},
          {"mount": "/opt", "size_available": 3 * GIB, "fstype": "xfs"},
          {"mount": "/opt/radeonlab", "size_available": 64 * MIB, "fstype": "tmpfs"},
          {"mount": "/optional", "size_available": 1 * GIB, "fstype": "ext4"}]
# findmnt --list --bytes --json --output TARGET,AVAIL,FSTYPE on a lab container (util-linux 2.38.1), shortened
FINDMNT = json.dumps({"filesystems": [{"target": "/", "avail": 56405803008, "fstype": "overlay"},
                                      {"target": "/proc", "avail": 0, "fstype": "proc"},
                                      {"target": "/srv/radeonlab-full", "avail": 67108864, "fstype": "tmpfs"}]})


@pytest.mark.parametrize("path, mount", [
    ("/opt/radeonlab/venv", "/opt/radeonlab"),             # exists or not: the prefix decides
    ("/opt/radeonlab/not/there/yet", "/opt/radeonlab"),
    ("/opt/radeonlab", "/opt/radeonlab"),                  # the mount point itself
    ("/opt/other/venv", "/opt"),
    ("/optional/venv", "/optional"),                       # /opt is no parent of /optional
    ("/opt/radeonlabx/venv", "/opt"),                      # nor /opt/radeonlab of /opt/radeonlabx
    ("/srv/venv", "/"),                                    # '/' as the fallback
    ("/opt/radeonlab//venv/", "/opt/radeonlab"),           # normalised
])
def test_mount_for(path, mount):
    assert fs.mount_for(path, MOUNTS)["mount"] == mount


def test_mount_for_takes_the_last_of_two_mounts_on_one_path_and_none_without_root():
    over = MOUNTS + [{"mount": "/opt", "size_available": 7, "fstype": "tmpfs"}]
    assert fs.mount_for("/opt/x", over)["size_available"] == 7
    assert fs.mount_for("/srv/x", [{"mount": "/opt", "size_available": 1}]) is None
    assert fs.mount_for("/srv/x", []) is None


def test_parse_mounts_reads_findmnt_and_ansible_facts_alike():
    parsed = fs.parse_mounts(FINDMNT)
    assert [m["mount"] for m in parsed] == ["/", "/proc", "/srv/radeonlab-full"] and parsed[2]["size_available"] == 64 * MIB
    assert fs.mount_for("/srv/radeonlab-full/venv", FINDMNT)["fstype"] == "tmpfs"
    assert fs.parse_mounts([{"mount": "/", "size_available": 5, "device": "/dev/sda1"}, {"mount": "/x"}]) == [
        {"mount": "/", "size_available": 5, "fstype": ""}]
    assert fs.parse_mounts("") == [] and fs.parse_mounts({"filesystems": [{"target": "/", "avail": "12"}]})[0]["size_available"] == 12


@pytest.mark.parametrize("count, up, text", [
    (64 * MIB, False, "0.06 GiB (64.0 MiB)"),
    (64 * MIB, True, "0.07 GiB (64.0 MiB)"),
    (14 * GIB, True, "14.00 GiB"),
    (14 * GIB + 1, True, "14.01 GiB"),                   # needed rounds up ...
    (14 * GIB - 1, False, "13.99 GiB"),                  # ... free rounds down: "enough" never reads as too little
    (581991, True, "0.01 GiB (0.6 MiB)"), (262144, False, "0.00 GiB (0.2 MiB)"),
    (0, False, "0.00 GiB (0.0 MiB)"),
])
def test_gib_wording(count, up, text):
    assert fs.gib(count, round_up=up) == text


def _venv(path, stack="pytorch_rocm", **extra):
    need = {"variable": "%s_venv" % stack, "path": path, "what": stack, "stack": stack, "fix": "point %s_venv elsewhere" % stack}
    need.update(extra)
    return need


@pytest.mark.parametrize("needs, mounts, expected", [
    ([_venv("/opt/radeonlab/venv")], MOUNTS,
     ["Not enough disk space for pytorch_rocm_venv /opt/radeonlab/venv: the file system at /opt/radeonlab (tmpfs) has "
      "0.06 GiB (64.0 MiB) free, 14.00 GiB is needed (pytorch_rocm 14.00 GiB). Free space there, or point pytorch_rocm_venv elsewhere."]),
    ([_venv("/srv/venv")], MOUNTS, []),                                               # 50 GiB on /
    ([_venv("/opt/venv", override_gib=3)], MOUNTS, []),                               # exactly enough
    ([_venv("/opt/venv", override_gib=3.01)], MOUNTS, ["3.00 GiB free, 3.01 GiB is needed"]),  # too little
    ([_venv("/opt/radeonlab/venv", installed=True)], MOUNTS, []),                     # a converged venv asks for nothing
    ([_venv("/opt/venv", override_gib=2), _venv("/opt/venv", "llamafactory")], MOUNTS,  # 2 + 2 on one file system
     ["pytorch_rocm_venv /opt/venv and llamafactory_venv /opt/venv", "4.00 GiB is needed (pytorch_rocm 2.00 GiB; llamafactory 2.00 GiB)",
      "point pytorch_rocm_venv elsewhere; point llamafactory_venv elsewhere"]),
    ([_venv("/opt/venv", override_gib=2), _venv("/srv/venv", "llamafactory")], MOUNTS, []),  # two file systems, each fits
    ([_venv("/opt/radeonlab/venv", real="/srv/big/venv")], MOUNTS, []),              # a symlink to a larger disk
    ([_venv("/srv/venv")], [], []),                                                   # no mount known: not judged
    ([{"variable": "lora_job_root", "path": "/opt/radeonlab/jobs", "what": "the model", "fix": "f", "bytes": 64 * MIB}], MOUNTS, []),
    ([{"variable": "lora_job_root", "path": "/opt/radeonlab/jobs", "what": "the model", "fix": "f", "bytes": 64 * MIB - 9},
      {"variable": "lora_job_root", "path": "/opt/radeonlab/jobs", "what": "the data set", "fix": "f", "bytes": 10}], MOUNTS,
     ["for lora_job_root /opt/radeonlab/jobs: the file system at /opt/radeonlab (tmpfs) has 0.06 GiB (64.0 MiB) free, "
      "0.07 GiB (64.1 MiB) is needed (the model 0.07 GiB (64.0 MiB); the data set 0.01 GiB (0.1 MiB)). Free space there, or f."]),
    ([{"variable": "v", "path": "/x/y", "what": "w", "fix": "f", "bytes": 9}], [{"mount": "/", "size_available": 8}],
     ["the file system at / has"]),                                                   # no file system type known
])
def test_space_problems(needs, mounts, expected):
    text = " ".join(fs.space_problems(needs, mounts))
    assert all(part in text for part in expected) and bool(text) == bool(expected), text


def test_the_estimates_come_from_the_support_matrix_and_the_override_wins():
    assert fs.venv_bytes("pytorch_rocm") == VENV_SPACE["pytorch_rocm"]["gib"] * GIB and VENV_SPACE["pytorch_rocm"]["source"]
    assert fs.venv_bytes("llamafactory", "0") == VENV_SPACE["llamafactory"]["gib"] * GIB
    assert fs.venv_bytes("pytorch_rocm", 1.5) == int(1.5 * GIB)


@pytest.mark.parametrize("dest, expected", [
    ([], 300),                                                                       # first copy: everything
    ([{"path": "/h/model/a", "size": 100}, {"path": "/h/model/sub/b", "size": 200}], 0),  # same sizes: a re-run
    ([{"path": "/h/model/a", "size": 100}, {"path": "/h/model/sub/b", "size": 7}], 200),  # one file differs
    ([{"path": "/h/model/a", "size": 100}, {"path": "/h/model/stale", "size": 9}], 200),  # one missing
])
def test_copy_bytes(dest, expected):
    source = [{"path": "/c/model/a", "size": 100}, {"path": "/c/model/sub/b", "size": 200}]
    assert fs.copy_bytes(source, "/c/model/", dest, "/h/model") == expected


def test_site_problems_reports_the_space_check():
    checks = {"space": {"needs": [_venv("/opt/radeonlab/venv")], "mounts": MOUNTS}}
    assert si.site_problems(checks)[0].startswith("Not enough disk space for pytorch_rocm_venv")

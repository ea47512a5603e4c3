# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which wheels the push delivery copies (roles/venv_pip/vars/main.yml ``_venv_pip_push_missing``, templated by Ansible
over what the role's sha256sum of the host's copy registers): those the host lacks or holds with other bytes than the
sha256 recorded at download, and none on a re-run."""

from __future__ import annotations

import hashlib
import os
import subprocess

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "venv_pip"))
NAMES = ["a-1.0-py3-none-any.whl", "b-2.0-py3-none-any.whl", "c-3.0-cp311-cp311-manylinux_2_17_x86_64.whl"]


def _missing(host, hashes, hostname="ws 01"):
    """The role's sha256sum task as it runs on the host (rc 1 and names on stderr when some are absent), then the vars."""
    done = subprocess.run(["sha256sum", "--"] + NAMES, cwd=str(host), capture_output=True, text=True, check=False)
    variables = dict(DataLoader().load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    variables.update(venv_pip_push_names=NAMES, venv_pip_push_hashes=hashes, venv_pip_push_dir="/srv/wheelhouse",
                     inventory_hostname=hostname, __venv_pip_push_held={"rc": done.returncode, "stdout_lines": done.stdout.splitlines()})
    templar = Templar(loader=DataLoader(), variables=variables)
    return (templar.template(trust_as_template("{{ _venv_pip_push_missing }}")),
            templar.template(trust_as_template("{{ _venv_pip_push_archive }}")))


@pytest.fixture
def recorded(tmp_path):
    source = tmp_path / "controller"
    source.mkdir()
    for name in NAMES:
        (source / name).write_bytes(name.encode() * 100)
    return source, {name: hashlib.sha256((source / name).read_bytes()).hexdigest() for name in NAMES}


@pytest.mark.parametrize("on_host, expected", [
    ([], NAMES),  # a fresh host: the whole set
    (NAMES, []),  # a re-run: nothing
    (NAMES[:1], NAMES[1:]),  # an interrupted copy
])
def test_the_wheels_the_host_lacks(tmp_path, recorded, on_host, expected):
    source, hashes = recorded
    host = tmp_path / "host"
    host.mkdir()
    for name in on_host:
        (host / name).write_bytes((source / name).read_bytes())
    missing, archive = _missing(host, hashes)
    assert missing == expected
    assert archive.startswith("/srv/wheelhouse/.radeonlab-push-") and archive.endswith(".tar") and len(archive) == 52


def test_hosts_that_lack_the_same_wheels_share_one_archive(tmp_path, recorded):
    """One archive per distinct missing set: a fresh fleet packs the set once, whatever its size."""
    source, hashes = recorded
    fresh, partial = tmp_path / "fresh", tmp_path / "partial"
    fresh.mkdir()
    partial.mkdir()
    (partial / NAMES[0]).write_bytes((source / NAMES[0]).read_bytes())
    one, two = _missing(fresh, hashes, "ws01")[1], _missing(fresh, hashes, "ws02")[1]
    assert one == two != _missing(partial, hashes, "ws03")[1]
    assert _missing(fresh, dict(hashes, **{NAMES[1]: "0" * 64}), "ws04")[1] != one, "the archive is named by the wheels' bytes too"


def test_a_wheel_changed_on_the_host_is_copied_again(tmp_path, recorded):
    source, hashes = recorded
    host = tmp_path / "host"
    host.mkdir()
    for name in NAMES:
        (host / name).write_bytes((source / name).read_bytes())
    (host / NAMES[2]).write_bytes(b"truncated")
    assert _missing(host, hashes)[0] == [NAMES[2]]

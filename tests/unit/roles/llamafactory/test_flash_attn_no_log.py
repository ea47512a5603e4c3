# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""flash_attn.yml's pips (outside venv_pip) are no_log when a URL in their arguments carries a credential."""

from __future__ import annotations

import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "llamafactory"))


def _render(**given):
    loader = DataLoader()
    variables = {}
    for part in ("defaults", "vars"):
        variables.update(loader.load_from_file(os.path.join(ROLE, part, "main.yml"), trusted_as_template=True))
    variables.update(given)
    return Templar(loader=loader, variables=variables).template(trust_as_template("{{ _llamafactory_flash_attn_has_credentials }}"))


@pytest.mark.parametrize("given, secret", [
    ({"llamafactory_wheelhouse": True, "llamafactory_wheelhouse_url": "http://u:pw@127.0.0.1:8767/"}, True),
    ({"llamafactory_wheelhouse": True, "llamafactory_wheelhouse_url": "http://127.0.0.1:8767/"}, False),
    ({"llamafactory_flash_attn_git_url": "https://user:token@git.example/flash-attention.git"}, True),
    ({}, False),
])
def test_a_credential_in_the_flash_attn_pips_arguments_turns_their_log_off(given, secret):
    assert _render(**given) is secret

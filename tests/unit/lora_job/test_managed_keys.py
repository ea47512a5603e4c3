# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The LLaMA-Factory arguments the runner writes are the ones support_matrix.VOCABULARY lists (playbooks/validate.yml refuses
them in lora_job_extra_args before any change, from that list), and the runner still refuses them itself."""

from __future__ import annotations

import pytest
from lora_cases import matching_view

from ansible_collections.radeonlab.llm.plugins.module_utils import site_inputs
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import VOCABULARY
from radeonlab_lora import runner, spec as jobspec
from radeonlab_lora.render import RenderError

# vocabulary.json carries the same lists to the hosts (test_vocabulary.py keeps it generated from VOCABULARY)
ALWAYS = set(VOCABULARY["runner_managed_keys"])
WHEN = VOCABULARY["runner_managed_keys_when"]
BY_PLAN = set(VOCABULARY["runner_managed_keys_by_plan"])


def _config(job):
    return runner.prepare(jobspec.normalize(job), job.get("gpu"), matching_view(job.get("gpu"))).train_config()


@pytest.mark.parametrize("extra, settings", [
    ({}, {}),
    ({"max_samples": 4}, {"max_samples": 4}),
    ({"val_size": 0.25}, {"val_size": 0.25}),
])
def test_the_rendered_keys_are_the_listed_ones(tiny_job, extra, settings):
    cfg = _config({**tiny_job, **extra})
    expected = site_inputs.managed_extra_args(settings)
    assert ALWAYS <= set(cfg)
    assert set(cfg) - BY_PLAN == expected, sorted(set(cfg) ^ expected)


def test_the_conditions_name_their_keys():
    assert site_inputs.managed_extra_args({"model_revision": "v1.0"}) - ALWAYS == set(WHEN["model_revision"])
    assert site_inputs.managed_extra_args({"distributed": True}) - ALWAYS == set(WHEN["distributed"])
    assert not ALWAYS & BY_PLAN


@pytest.mark.parametrize("key", sorted(ALWAYS))
def test_the_runner_refuses_every_listed_key(tiny_job, key):
    with pytest.raises(RenderError, match="extra_args may not override"):
        _config({**tiny_job, "extra_args": {key: 1}})

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A hub model pinned to a revision: validated (40-hex commit or tag, hub models only), passed to LLaMA-Factory
as model_revision, and part of the config hash."""

from __future__ import annotations

import pytest
from lora_cases import QWEN25_7B, RX7900XTX_24G, matching_view

from radeonlab_lora import runner, spec as jobspec

COMMIT = "aa8e72537993ba99e69dfaafa59ed015b17504d1"


def _hub_job(tiny_job, **extra):
    return {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "cutoff_len": 2048, **extra}


def _prepared(job):
    facts = {"vram_kb": RX7900XTX_24G}
    return runner.prepare(jobspec.normalize(job), facts, matching_view(facts))


@pytest.mark.parametrize("revision", [COMMIT, "v1.0", "main"])
def test_a_hub_model_revision_reaches_llamafactory(tiny_job, revision):
    cfg = _prepared(_hub_job(tiny_job, model_revision=revision)).train_config()
    assert cfg["model_name_or_path"] == "Qwen/Qwen2.5-7B-Instruct"
    assert cfg["model_revision"] == revision


def test_no_revision_renders_no_key_and_a_new_revision_trains_again(tiny_job):
    unpinned = _prepared(_hub_job(tiny_job))
    assert "model_revision" not in unpinned.train_config()
    pinned = _prepared(_hub_job(tiny_job, model_revision=COMMIT))
    assert pinned.config_hash != unpinned.config_hash
    assert pinned.config_hash != _prepared(_hub_job(tiny_job, model_revision="v1.0")).config_hash


@pytest.mark.parametrize("revision, message", [
    ("main; rm -rf /", "model_revision must be a 40-hex commit or a tag, got 'main; rm -rf /'"),
    ("../x", "model_revision must be a 40-hex commit or a tag"),
    ("", "model_revision must be a 40-hex commit or a tag"),
    (1234, "model_revision must be a 40-hex commit or a tag, got 1234"),
], ids=["shell", "path", "empty", "number"])
def test_a_bad_revision_is_refused(tiny_job, revision, message):
    with pytest.raises(jobspec.SpecError, match="model_revision must be"):
        jobspec.normalize(_hub_job(tiny_job, model_revision=revision))
    try:
        jobspec.normalize(_hub_job(tiny_job, model_revision=revision))
    except jobspec.SpecError as exc:
        assert message in str(exc)


def test_a_revision_for_a_local_model_is_refused(tiny_job):
    with pytest.raises(jobspec.SpecError, match="model_revision pins a hub model; .* is a local directory"):
        jobspec.normalize({**tiny_job, "model_revision": COMMIT})

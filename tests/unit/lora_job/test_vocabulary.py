# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner's names come from the collection's data module (support_matrix.VOCABULARY) through vocabulary.json."""

from __future__ import annotations

import importlib.util
import os

import yaml

from ansible_collections.radeonlab.llm.plugins.module_utils import attention, job_datasets
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import VOCABULARY
from radeonlab_lora import failures, sizing, spec, vocabulary

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_vocabulary_json_is_generated_from_the_data_module():
    path = os.path.join(ROOT, "tests", "tools", "gen_runner_vocabulary.py")
    loaded = importlib.util.spec_from_file_location("gen_runner_vocabulary", path)
    gen = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(gen)
    with open(gen.TARGET, encoding="utf-8") as handle:
        assert handle.read() == gen.render(), "vocabulary.json is stale: run python tests/tools/gen_runner_vocabulary.py --write"


def test_the_runner_and_the_controller_use_the_same_names():
    assert vocabulary.ATTENTION_REQUESTS == spec.ATTENTION_CHOICES == attention.REQUESTS == VOCABULARY["attention_requests"]
    assert vocabulary.SDPA_KERNELS == spec.SDPA_KERNEL_CHOICES == sizing.SDPA_KERNELS == attention.SDPA_KERNELS
    assert failures.ATTENTION_FALLBACKS == VOCABULARY["attention_fallbacks"]
    assert tuple(sizing.ATTENTION_MEMORY) == VOCABULARY["attention_requests"]
    assert spec.DATASET_FORMATS == job_datasets.FORMATS == VOCABULARY["dataset_formats"]


def _choices(role, option):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        return tuple(yaml.safe_load(handle)["argument_specs"]["main"]["options"][option]["choices"])


def test_the_argument_specs_offer_the_same_choices():
    assert _choices("llamafactory", "llamafactory_attention") == VOCABULARY["attention_requests"]
    assert _choices("lora_job", "lora_job_attention") == VOCABULARY["attention_requests"]
    assert _choices("lora_job", "lora_job_sdpa_kernel") == VOCABULARY["sdpa_kernels"]
    with open(os.path.join(ROOT, "plugins", "filter", "attention_backend.yml"), encoding="utf-8") as handle:
        doc = yaml.safe_load(handle)
    assert tuple(doc["DOCUMENTATION"]["options"]["requested"]["choices"]) == VOCABULARY["attention_requests"]

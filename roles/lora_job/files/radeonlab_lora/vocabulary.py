# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Names the runner shares with the controller: vocabulary.json beside this file, generated from the collection's
support_matrix.VOCABULARY by tests/tools/gen_runner_vocabulary.py (the runner cannot import the collection)."""

import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary.json"), encoding="utf-8") as _handle:
    _NAMES = json.load(_handle)

ATTENTION_REQUESTS = tuple(_NAMES["attention_requests"])
ATTENTION_FALLBACKS = tuple(_NAMES["attention_fallbacks"])
SDPA_KERNELS = tuple(_NAMES["sdpa_kernels"])
DATASET_FORMATS = tuple(_NAMES["dataset_formats"])
CONFIG_SUFFIX = _NAMES["llamafactory_config_suffix"]  # of the JSON configs LLaMA-Factory reads (see the data module)
FUSED_KERNELS = tuple(_NAMES["fused_kernels"])  # what a job may ask for: auto | liger | off
LIGER_MODEL_TYPES = frozenset(_NAMES["liger_model_types"])  # the model_type values LLaMA-Factory patches with Liger-Kernel

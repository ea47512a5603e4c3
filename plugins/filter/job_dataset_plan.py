# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The data set plan filter of lora_job (documentation in job_dataset_plan.yml)."""

from __future__ import annotations

from ansible_collections.radeonlab.llm.plugins.module_utils.job_datasets import plan


def job_dataset_plan(dataset, dataset_src, job_dir):
    """The job spec's data set(s), the controller files to copy and the files the preflight reads."""
    return plan(dataset, dataset_src or "", job_dir)


class FilterModule(object):
    """radeonlab.llm data set plan filter."""

    def filters(self):
        return {"job_dataset_plan": job_dataset_plan}

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The hub snapshot filter of lora_job's model cache (documentation in hub_snapshot.yml)."""

from __future__ import annotations

from ansible_collections.radeonlab.llm.plugins.module_utils.hub_snapshot import directories, snapshot


def hub_snapshot_filter(info):
    """The files of a hub model to download, with the commit and the sub-directories they need."""
    result = snapshot(info)
    result["directories"] = directories(result["files"])
    return result


class FilterModule(object):
    """radeonlab.llm hub snapshot filter."""

    def filters(self):
        return {"hub_snapshot": hub_snapshot_filter}

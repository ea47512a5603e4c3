# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure checks of lora_job_dataset: one data set (a mapping) or several (a list of mappings) in one job.

No Ansible import; Python 3.8+. ``problems`` returns one sentence per problem, each naming lora_job_dataset and
the entry, so the role's preflight (and playbooks/validate.yml, which runs it) refuses them all at once.

A single mapping keeps the rules it always had (a name, and a file, a hub URL or lora_job_dataset_src: a file on
the host wins over a hub source). An entry of a list has a name and exactly one source: ``file`` (on the host),
``hf_hub_url``, ``ms_hub_url`` or ``src`` (a controller file the role copies into the job's data directory).
"""

from __future__ import annotations

import json
import os

from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import VOCABULARY

VARIABLE = "lora_job_dataset"
SOURCES = ("file", "hf_hub_url", "ms_hub_url", "src")
FORMATS = VOCABULARY["dataset_formats"]


def label(index, entry):
    """``lora_job_dataset[1] (chats)``: how a message names an entry of the list."""
    name = entry.get("name") if isinstance(entry, dict) else None
    return "%s[%d]%s" % (VARIABLE, index, " (%s)" % name if name else "")


def _kind(value):
    if isinstance(value, str):
        return "the string %s" % json.dumps(value)
    return "a %s" % type(value).__name__


def problems(value, dataset_src="", is_file=os.path.isfile):
    """Every problem of ``value`` (lora_job_dataset) with ``dataset_src`` (lora_job_dataset_src); ``is_file`` answers
    for controller paths (the filter runs on the controller)."""
    if isinstance(value, dict):
        return _mapping_problems(value, dataset_src)
    if not isinstance(value, (list, tuple)):
        return ["%s must be a dict (a YAML mapping: name and file, hf_hub_url, ms_hub_url or lora_job_dataset_src) or a "
                "list of such dicts (each with its own src instead of lora_job_dataset_src), got %s." % (VARIABLE, _kind(value))]
    if not value:
        return ["%s is an empty list: name at least one data set." % VARIABLE]
    found = []
    if dataset_src:
        found.append("lora_job_dataset_src (%s) goes with a single %s mapping; with a list, give the entry its own src."
                     % (dataset_src, VARIABLE))
    for index, entry in enumerate(value):
        found += _entry_problems(index, entry, is_file)
    return found + _duplicates(value)


def _mapping_problems(dataset, dataset_src):
    found = []
    name = dataset.get("name")
    if not name:
        found.append("%s needs a name (its entry in dataset_info.json)." % VARIABLE)
    elif "," in str(name):
        found.append("%s name %s contains ',', which LLaMA-Factory reads as two data sets: choose a name without one."
                     % (VARIABLE, json.dumps(str(name))))
    if dataset.get("src"):
        found.append("%s: src names a controller file in an entry of a list of data sets; for a single mapping set "
                     "lora_job_dataset_src instead." % VARIABLE)
    elif not (dataset_src or any(dataset.get(key) for key in SOURCES[:3])):
        found.append("%s needs one of file / hf_hub_url / ms_hub_url, or lora_job_dataset_src." % VARIABLE)
    return found + _format_problems(VARIABLE, dataset)


def _entry_problems(index, entry, is_file):
    where = label(index, entry)
    if not isinstance(entry, dict):
        return ["%s must be a mapping (name and one of %s), got %s." % (where, ", ".join(SOURCES), _kind(entry))]
    found = []
    name = entry.get("name")
    if not name or not isinstance(name, str):
        found.append("%s needs a name (its entry in dataset_info.json)." % where)
    elif "," in name:
        found.append("%s: the name contains ',', which LLaMA-Factory reads as two data sets: choose a name without one." % where)
    sources = [key for key in SOURCES if entry.get(key)]
    if len(sources) != 1:
        found.append("%s needs exactly one of %s, got %s." % (where, ", ".join(SOURCES), " and ".join(sources) or "none"))
    elif sources == ["file"] and not str(entry["file"]).startswith("/"):
        found.append("%s: file %s must be an absolute path on the host (a controller file goes in src)."
                     % (where, json.dumps(str(entry["file"]))))
    elif sources == ["src"] and not is_file(str(entry["src"])):
        found.append("%s: src %s is not a file on the controller: name an existing file." % (where, json.dumps(str(entry["src"]))))
    return found + _format_problems(where, entry)


def _format_problems(where, entry):
    formatting = entry.get("formatting") or "alpaca"
    if formatting not in FORMATS:
        return ["%s: formatting must be one of %s, got %s." % (where, ", ".join(FORMATS), json.dumps(str(formatting)))]
    return []


def _duplicates(entries):
    """Two entries of one name (one dataset_info.json key), or two src files the copy would write to one path."""
    found = []
    for key, what in (("name", "the name"), ("src", "a src file named")):
        seen = {}
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not entry.get(key):
                continue
            value = str(entry[key]) if key == "name" else os.path.basename(str(entry[key]))
            if value in seen:
                found.append("%s and %s have %s %s: %s." % (
                    label(seen[value], entries[seen[value]]), label(index, entry), what, json.dumps(value),
                    "each data set needs a name of its own" if key == "name" else
                    "both would be copied to the job's data/%s; rename one" % value))
            else:
                seen[value] = index
    return found


def plan(value, dataset_src, job_dir):
    """What lora_job does with a valid ``value`` (lora_job_dataset) and ``dataset_src`` in the job directory ``job_dir``.

    Returns ``file`` (a single mapping's file on the host, else ''), ``spec`` ({'dataset': ...} for a mapping, written
    as it always was, or {'datasets': [...]}, each entry's src replaced by its file in the job's data directory),
    ``copies`` [{variable, src, dest, dataset}] (the controller files to copy, each read as ``dataset`` says),
    ``src_files`` and ``host_files`` ({variable: {path, dataset, kind}}: what the preflight reads of a list).
    Anything ``problems`` refuses (a string, an entry that is no mapping) plans nothing, so a report can still name it.
    """
    data_dir = job_dir.rstrip("/") + "/data/"
    if isinstance(value, dict):
        host_file = (data_dir + os.path.basename(str(dataset_src))) if dataset_src else str(value.get("file") or "")
        dataset = value
        if host_file:  # a file on the host replaces any hub source; formatting, columns, tags, split... go with it
            dataset = {key: item for key, item in value.items() if key not in ("file", "hf_hub_url", "ms_hub_url")}
            dataset["file"] = host_file
        copies = [{"variable": VARIABLE + "_src", "src": dataset_src, "dest": host_file, "dataset": value}] if dataset_src else []
        return _with_files({"file": host_file, "spec": {"dataset": dataset}, "copies": copies, "host_files": {}})
    entries, copies, host_files = [], [], {}
    for index, entry in enumerate(value if isinstance(value, (list, tuple)) else []):
        if not isinstance(entry, dict):
            continue
        written = {key: item for key, item in entry.items() if key != "src"}
        if entry.get("src"):
            written["file"] = data_dir + os.path.basename(str(entry["src"]))
            copies.append({"variable": label(index, entry) + ".src", "src": entry["src"], "dest": written["file"],
                           "dataset": entry})
        if entry.get("file"):
            host_files[label(index, entry) + ".file"] = {"path": entry["file"], "dataset": entry, "kind": "file"}
        entries.append(written)
    return _with_files({"file": "", "spec": {"datasets": entries}, "copies": copies, "host_files": host_files})


def _with_files(found):
    found["src_files"] = {copy["variable"]: {"path": copy["src"], "dataset": copy["dataset"], "kind": "file"}
                          for copy in found["copies"]}
    return found

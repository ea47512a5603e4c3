# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Training progress from LLaMA-Factory's ``trainer_log.jsonl`` (its LogCallback, one JSON object per log step).

Lines carry ``current_steps``, ``total_steps``, ``loss``, ``lr``, ``epoch``, ``percentage``,
``elapsed_time`` and ``remaining_time`` ("H:MM:SS"); evaluation lines lack ``loss``. After a resume the
file continues (steps may repeat from the checkpoint on): the last line is the current state, the
losses are read in file order. A half-written last line (the trainer killed mid-write) is skipped.
"""

from __future__ import annotations

import json
import os

TRAINER_LOG = "trainer_log.jsonl"


def read_records(path: str) -> list[dict]:
    if not os.path.isfile(path):
        return []
    records = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


def summarize(records: list[dict]) -> dict:
    """step/total/percentage/loss/first_loss/eta/elapsed/epoch from the records (all None when empty)."""
    summary = {"step": None, "total_steps": None, "percentage": None, "loss": None, "first_loss": None,
               "lr": None, "epoch": None, "elapsed": None, "eta": None}
    losses = [r["loss"] for r in records if isinstance(r.get("loss"), (int, float))]
    if losses:
        summary["first_loss"] = losses[0]
        summary["loss"] = losses[-1]
    if records:
        last = records[-1]
        summary.update({
            "step": last.get("current_steps"),
            "total_steps": last.get("total_steps"),
            "percentage": last.get("percentage"),
            "lr": last.get("lr"),
            "epoch": last.get("epoch"),
            "elapsed": last.get("elapsed_time"),
            "eta": last.get("remaining_time"),
        })
    return summary


def progress_line(summary: dict) -> str:
    """``step 12/40 (30%), loss 2.31, ETA 0:01:10``; "no progress yet" before the first log line."""
    if summary.get("step") is None:
        return "no progress yet"
    total = summary.get("total_steps")
    text = f"step {summary['step']}/{total if total is not None else '?'}"
    if summary.get("percentage") is not None:
        text += f" ({summary['percentage']:.0f}%)"
    if summary.get("loss") is not None:
        text += f", loss {summary['loss']:.2f}"
    if summary.get("eta"):
        text += f", ETA {summary['eta']}"
    return text


def read_progress(output_dir: str) -> dict:
    return summarize(read_records(os.path.join(output_dir, TRAINER_LOG)))

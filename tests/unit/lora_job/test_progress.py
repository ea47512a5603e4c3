# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""trainer_log.jsonl -> one-line progress."""

from __future__ import annotations

import json

from radeonlab_lora.progress import progress_line, read_progress, summarize

LINES = [
    {"current_steps": 4, "total_steps": 40, "loss": 2.9, "lr": 1e-4, "epoch": 0.3, "percentage": 10.0,
     "elapsed_time": "0:00:08", "remaining_time": "0:01:12"},
    {"current_steps": 12, "total_steps": 40, "loss": 2.3141, "lr": 9e-5, "epoch": 0.9, "percentage": 30.0,
     "elapsed_time": "0:00:30", "remaining_time": "0:01:10"},
]


def test_line_format(tmp_path):
    (tmp_path / "trainer_log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in LINES))
    summary = read_progress(str(tmp_path))
    assert progress_line(summary) == "step 12/40 (30%), loss 2.31, ETA 0:01:10"
    assert (summary["first_loss"], summary["loss"], summary["step"], summary["total_steps"]) == (2.9, 2.3141, 12, 40)


def test_eval_line_without_loss_keeps_last_loss():
    summary = summarize(LINES + [{"current_steps": 13, "total_steps": 40, "eval_loss": 2.5, "percentage": 32.5, "remaining_time": "0:01:05"}])
    assert progress_line(summary) == "step 13/40 (32%), loss 2.31, ETA 0:01:05"


def test_torn_last_line_and_blank_lines_are_skipped(tmp_path):
    (tmp_path / "trainer_log.jsonl").write_text(json.dumps(LINES[0]) + "\n\n" + '{"current_steps": 5, "tot')
    assert progress_line(read_progress(str(tmp_path))) == "step 4/40 (10%), loss 2.90, ETA 0:01:12"


def test_missing_log():
    assert progress_line(read_progress("/nonexistent")) == "no progress yet"


def test_minimal_line():
    assert progress_line(summarize([{"current_steps": 1}])) == "step 1/?"

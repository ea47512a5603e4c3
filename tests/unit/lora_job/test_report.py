# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report over fetched per-host folders."""

from __future__ import annotations

import json
import os

from radeonlab_lora import report

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _host(root, name, info, status, plot=True):
    folder = root / name
    folder.mkdir()
    (folder / "host.json").write_text(json.dumps(info))
    (folder / "status.json").write_text(json.dumps(status))
    if plot:
        (folder / "training_loss.png").write_bytes(PNG)


def test_report_lists_every_host_with_override_loss_and_embedded_plot(tmp_path):
    _host(tmp_path, "navi31", {"gpu": "Radeon RX 7900 XTX", "gfx": "gfx1100", "rocm": "6.4.0", "torch": "2.9.1", "hip": "6.4.43482"},
          {"state": "succeeded", "final_loss": 1.29, "first_loss": 7.84, "duration_s": 17.2, "attention": "sdpa", "global_step": 96, "max_steps": 96})
    _host(tmp_path, "navi22", {"gpu": "AMD Radeon Graphics", "gfx": "gfx1031", "override": "HSA_OVERRIDE_GFX_VERSION=10.3.0", "torch": "2.9.1"},
          {"state": "succeeded", "final_loss": 1.31, "retry_reasons": ["HIP error -> sdpa"]}, plot=False)
    result = report.write_report(str(tmp_path))
    assert result["changed"] and result["hosts"] == ["navi22", "navi31"]
    markdown = (tmp_path / "report.md").read_text()
    assert "| navi31 | Radeon RX 7900 XTX | gfx1100 | none | 6.4.0 | 2.9.1 / HIP 6.4.43482 | sdpa | succeeded | 1.2900 | 7.8400 | 0:00:17 |" in markdown
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in markdown and "2.9.1 / no HIP (CPU build)" in markdown
    assert "![loss of navi31](navi31/training_loss.png)" in markdown and "retried: HIP error -> sdpa" in markdown
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "<td>gfx1031</td>" in page


def test_second_report_of_unchanged_results_changes_nothing(tmp_path):
    _host(tmp_path, "a", {"gpu": "x"}, {"state": "succeeded", "final_loss": 1.0})
    assert report.write_report(str(tmp_path))["changed"]
    mtime = os.stat(tmp_path / "report.html").st_mtime_ns
    assert not report.write_report(str(tmp_path))["changed"]
    assert os.stat(tmp_path / "report.html").st_mtime_ns == mtime


def test_missing_files_give_dashes_not_errors(tmp_path):
    (tmp_path / "empty-host").mkdir()
    result = report.write_report(str(tmp_path))
    assert "| empty-host | - | - | none | - | - | - | not run | - | - | - |" in (tmp_path / "report.md").read_text()
    assert result["hosts"] == ["empty-host"]
    assert report.main([str(tmp_path / "nope")]) == 2

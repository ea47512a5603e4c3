# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each role task file stays about one screen: a longer one is split into task files it imports."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TASK_FILES = sorted(ROOT.glob("roles/*/tasks/*.yml"))
LIMIT = 110


def test_task_files_are_found():
    assert len(TASK_FILES) > 40


@pytest.mark.parametrize("path", TASK_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_task_file_fits_one_screen(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= LIMIT, "%s has %d lines (limit %d): move a section into a task file of its own" % (path.name, lines, LIMIT)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The user-facing pages stay short (issue 53): README a first screen for users, performance.md the current results."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("page", "most"), [("README.md", 200), ("docs/performance.md", 300)])
def test_page_within_its_length(page, most):
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= most, f"{page} has {len(lines)} lines, at most {most}: move detail to docs/ or git history"

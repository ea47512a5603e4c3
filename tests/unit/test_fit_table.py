# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""README.md's "what fits which card" table is tests/tools/gen_fit_table.py's output, and it agrees with what ran on the
H200 under caps that emulate those cards (docs/performance/*.jsonl): same plan, estimate never under the measured peak."""

from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_SPEC = importlib.util.spec_from_file_location("gen_fit_table", os.path.join(ROOT, "tests", "tools", "gen_fit_table.py"))
gen = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gen)
RUNS = gen.measured()


def test_readme_section_is_generated():
    assert gen.main(["--check"]) == 0, "run: python tests/tools/gen_fit_table.py --write"


def test_the_measured_runs_are_all_there():
    kinds = {(r["model"], r["settings"][0] if r["decision"] == "train" else "refused") for r in RUNS}
    assert len(RUNS) == 32 and {("7B", "qlora4"), ("14B", "qlora4"), ("7B", "bf16"), ("7B", "refused"), ("0.5B", "bf16")} <= kinds


@pytest.mark.parametrize("run", RUNS, ids=lambda r: "%s-%s-s%d-%dKiB" % (r["run"].split(".")[0][-11:], r["model"], r["seq"], r["vram_kib"]))
def test_each_run_agrees_with_the_model(run):
    """The model plans what ran (QLoRA only where the call ran the bitsandbytes probe), and its estimate covers the peak."""
    p = gen.plan(run["model"], run["seq"], run["vram_kib"], qlora=run["qlora"])
    if run["decision"] == "refuse" and p.decision == "train":  # an older model refused it: a later call must have trained it
        later = [r for r in RUNS if (r["model"], r["seq"], r["vram_kib"], r["qlora"], r["decision"]) ==
                 (run["model"], run["seq"], run["vram_kib"], run["qlora"], "train") and r["peak_gib"]]
        assert later and all(r["settings"] == gen.settings(p) for r in later), "a plan the model now accepts was never run"
        return
    assert p.decision == run["decision"]
    if p.decision == "train":
        assert gen.settings(p) == run["settings"]
    if run["peak_gib"]:
        over = p.estimate_gib["total"] / run["peak_gib"] - 1
        assert 0.0 <= over <= 0.10, (p.estimate_gib["total"], run["peak_gib"])
        assert p.needed_gib <= run["vram_kib"] / 2**20  # the cap it ran under was the card's (no OOM there)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Peak memory from launch's files and tokens/s from what LLaMA-Factory / transformers wrote."""

from __future__ import annotations

import json

import pytest

from radeonlab_lora import measurements


@pytest.mark.parametrize("peak, expected", [
    ({"gpu_max_allocated_bytes": 5 << 30, "cpu_max_rss_kib": 3 << 20, "device": "gpu"}, {"kind": "gpu_allocated", "gib": 5.0}),
    ({"gpu_max_allocated_bytes": None, "cpu_max_rss_kib": 3 << 20, "device": "cpu"}, {"kind": "cpu_rss", "gib": 3.0}),
    ({"gpu_max_allocated_bytes": 0, "cpu_max_rss_kib": 1 << 19, "device": "cpu"}, {"kind": "cpu_rss", "gib": 0.5}),
    ({}, None),
    (None, None),
])
def test_attempt_peak(tmp_path, peak, expected):
    path = tmp_path / "peak-attempt-1.json"
    if peak is not None:
        path.write_text(json.dumps(peak))
    assert measurements.attempt_peak(str(path)) == expected


def test_a_process_planned_on_the_cpu_is_measured_by_its_rss(tmp_path):
    """The merged export on the H100 (2026-12-07): LLaMA-Factory touched the GPU (0.08 GiB) while it merged 14 GiB on the CPU."""
    path = tmp_path / "peak-export.json"
    path.write_text(json.dumps({"gpu_max_allocated_bytes": 85899346, "cpu_max_rss_kib": 16 << 20, "device": "gpu"}))
    assert measurements.attempt_peak(str(path), where="cpu") == {"kind": "cpu_rss", "gib": 16.0}
    assert measurements.attempt_peak(str(path))["kind"] == "gpu_allocated"


def test_run_peak_prefers_gpu_measurements_and_takes_the_largest():
    gpu_small, gpu_big, cpu = {"kind": "gpu_allocated", "gib": 4.0}, {"kind": "gpu_allocated", "gib": 9.5}, {"kind": "cpu_rss", "gib": 30.0}
    attempts = [{"peak_memory": gpu_small}, {"peak_memory": None}, {"peak_memory": cpu}, {"peak_memory": gpu_big}, {}]
    assert measurements.run_peak(attempts) == gpu_big
    assert measurements.run_peak([{"peak_memory": cpu}, {}]) == cpu
    assert measurements.run_peak([{}]) is None


STATE_PLAIN = {"num_input_tokens_seen": 0, "log_history": [{"loss": 2.0, "step": 1}, {"train_runtime": 10.0, "train_samples_per_second": 3.0}]}
STATE_TOKENS = {**STATE_PLAIN, "num_input_tokens_seen": 20000}


@pytest.mark.parametrize("trainer_state, results, resumed, expected", [
    (STATE_PLAIN, {"train_runtime": 10.0, "train_samples_per_second": 2.5}, False, (2560.0, "samples x cutoff_len (upper bound)")),
    (STATE_PLAIN, None, False, (3072.0, "samples x cutoff_len (upper bound)")),  # from the last log_history entry
    (STATE_TOKENS, {"train_runtime": 8.0, "train_samples_per_second": 2.5}, False, (2500.0, "num_input_tokens_seen / train_runtime")),
    (STATE_TOKENS, {"train_runtime": 8.0, "effective_tokens_per_second": 1234.56}, False, (1234.6, "effective tokens (LLaMA-Factory)")),
    (STATE_TOKENS, None, True, (2000.0, "num_input_tokens_seen / train_runtime (resumed run: overstated, steps before the resume count)")),
    ({"log_history": [{"loss": 1.0}]}, None, False, (None, None)),
    (None, None, False, (None, None)),
])
def test_tokens_per_second(tmp_path, trainer_state, results, resumed, expected):
    if trainer_state is not None:
        (tmp_path / "trainer_state.json").write_text(json.dumps(trainer_state))
    if results is not None:
        (tmp_path / "all_results.json").write_text(json.dumps(results))
    assert measurements.tokens_per_second(str(tmp_path), 1024, resumed) == expected

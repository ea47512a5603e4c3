# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a run measured: peak memory per attempt (``launch``'s peak files) and training throughput (tokens/s).

Peak memory: ``{"kind": "gpu_allocated" | "cpu_rss", "gib": 5.12}`` -- torch's peak allocated GPU memory when
the trainer initialised the GPU, else the trainer process's peak resident set size. A run's peak is the
largest over its attempts, GPU measurements before CPU ones.

Tokens per second, from what LLaMA-Factory / transformers wrote into the output directory, best basis first:

1. ``effective_tokens_per_second`` in ``all_results.json`` (LLaMA-Factory's
   ``include_effective_tokens_per_second``: non-padding tokens of the data set over the train runtime);
2. ``num_input_tokens_seen`` of ``trainer_state.json`` over ``train_runtime`` (transformers counts them only
   with ``include_num_input_tokens_seen``; the field is 0 otherwise);
3. ``train_samples_per_second`` x ``cutoff_len`` (``all_results.json``, else the last ``log_history`` entry):
   an upper bound, as samples are at most cutoff_len tokens long.

A run that resumed from a checkpoint counts the steps before the resume in 1 and 2 (and transformers counts
all samples in 3) against the runtime of the last session only: the basis says so.
"""

from __future__ import annotations

import os

from .state import read_json

GIB = float(1 << 30)
BASIS_EFFECTIVE = "effective tokens (LLaMA-Factory)"
BASIS_SEEN = "num_input_tokens_seen / train_runtime"
BASIS_UPPER = "samples x cutoff_len (upper bound)"
RESUMED_NOTE = " (resumed run: overstated, steps before the resume count)"


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def attempt_peak(path: str, where: str = "gpu") -> dict | None:
    """The peak of one attempt from its ``peak-attempt-N.json``; None when the attempt left none (killed)."""
    return peak_of(read_json(path) or {}, where)


def peak_of(data: dict, where: str = "gpu") -> dict | None:
    """A ``launch.peak_record`` as a peak: GPU allocated when the process used the GPU, else its RSS. A process planned
    on the CPU (``where="cpu"``: the merged export) is measured by its RSS, though its libraries may touch the GPU."""
    if where == "gpu" and _positive(data.get("gpu_max_allocated_bytes")):
        return {"kind": "gpu_allocated", "gib": round(data["gpu_max_allocated_bytes"] / GIB, 2)}
    if _positive(data.get("cpu_max_rss_kib")):
        return {"kind": "cpu_rss", "gib": round(data["cpu_max_rss_kib"] / (1 << 20), 2)}
    return None


def run_peak(attempts: list[dict]) -> dict | None:
    peaks = [attempt["peak_memory"] for attempt in attempts if attempt.get("peak_memory")]
    gpu = [peak for peak in peaks if peak["kind"] == "gpu_allocated"]
    return max(gpu or peaks, key=lambda peak: peak["gib"]) if peaks else None


def tokens_per_second(output_dir: str, cutoff_len: int, resumed: bool = False) -> tuple[float | None, str | None]:
    """(tokens/s, basis) after a successful run; (None, None) when nothing was written to compute it from."""
    results = read_json(os.path.join(output_dir, "all_results.json")) or {}
    trainer = read_json(os.path.join(output_dir, "trainer_state.json")) or {}
    final = next((entry for entry in reversed(trainer.get("log_history") or []) if isinstance(entry, dict) and "train_runtime" in entry), {})
    metrics = {**final, **results}
    runtime = metrics.get("train_runtime")
    note = RESUMED_NOTE if resumed else ""
    if _positive(metrics.get("effective_tokens_per_second")):
        return round(float(metrics["effective_tokens_per_second"]), 1), BASIS_EFFECTIVE + note
    if _positive(trainer.get("num_input_tokens_seen")) and _positive(runtime):
        return round(trainer["num_input_tokens_seen"] / runtime, 1), BASIS_SEEN + note
    if _positive(metrics.get("train_samples_per_second")):
        return round(metrics["train_samples_per_second"] * cutoff_len, 1), BASIS_UPPER + note
    return None, None

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After training, on the host that trained: the sample answers, the merged export and the API service, each sized with
the training plan's memory model and checked (``check``) before anything trains.

Inference (the sample answers and the API: LLaMA-Factory's ``huggingface`` engine, one request at a time, its
``MAX_CONCURRENT`` default of 1, llamafactory/chat/hf_engine.py) loads the base model in the form the job trained it
(``precision``): bf16, or NF4 with double quantisation for a ``qlora4`` job (the adapter was trained against those
weights), fp32 on the CPU. Its peak allocated memory::

    weights                                         as for training (sizing.weights_bytes)
  + adapter       4 P_lora                          fp32 LoRA weights (merged into bf16 weights, kept beside NF4 ones)
  + kv cache      2 L kv_heads head_dim 2 B x t     K and V of every layer, bf16, t = cutoff_len + sample_max_new_tokens
  + prefill       t (a h + b i)                     one layer's transient tensors while the prompt is read
  + projection    2 h i (qlora4), 4 h i (merged)    qlora4: the largest projection dequantised to bf16 for a matmul;
                                                    bf16/fp32: the adapter's fp32 B.A of that projection while it is merged
                                                    into the weights (LLaMA-Factory 0.9.5 merges the adapter of an
                                                    unquantised base at load, llamafactory/model/adapter.py: merge_and_unload)

Those go through the same margin and runtime reserve as a training step, on the same device (an APU's unified share).

The merged export (``export: merged``) runs on the CPU (``export_device: cpu``): LLaMA-Factory loads the base in bf16,
folds the adapter in and writes the shards. Its peak RSS is the bf16 weights plus the process's own
(EXPORT_PROCESS_GIB), checked against the share of host RAM a CPU job may use. A 4-bit job's export is the same: the
base is read in bf16 from its own files and the adapter merged into it, so nothing is dequantised from NF4.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from . import sizing
from .modelshape import ModelShape

GIB = sizing.GIB
ADAPTER_BYTES_PER_PARAM = 4.0
KV_BYTES = 2.0
PREFILL_BYTES_PER_HIDDEN = 16.0
PREFILL_BYTES_PER_INTERMEDIATE = 6.0
# Peak RSS of `llamafactory-cli export` beyond the bf16 weights: 15.27 GiB for a 7.62 B model (14.18 GiB of weights), on
# the CPU, LLaMA-Factory 0.9.5 (docs/performance.md, "After training", tests/bench/after/run.sh, H200, 2026-12-02), and 15.31
# GiB in the job's own export (tests/bench/after/run_stages.sh, H100, 2026-12-07), which 1.1 put 0.02 GiB under.
EXPORT_PROCESS_GIB = 1.2
INFERENCE_PRECISION = {"bf16": "bf16", "qlora4": "qlora4", "fp32": "fp32"}


@dataclass
class Stage:
    name: str  # samples | export | api
    where: str  # gpu | cpu
    precision: str  # bf16 | qlora4 | fp32
    needed_gib: float
    available_gib: float | None  # the GPU's memory (needed_gib holds the runtime reserve) or host RAM's share; None: unknown
    estimate_gib: dict

    @property
    def fits(self) -> bool:
        return self.available_gib is None or self.needed_gib <= self.available_gib

    def as_dict(self) -> dict:
        return {**asdict(self), "fits": self.fits}


def context_tokens(spec: dict) -> int:
    """The longest sequence an answer holds: a prompt as long as the training samples, then the new tokens."""
    return int(spec["cutoff_len"]) + int(spec["sample_max_new_tokens"])


def inference_estimate(shape: ModelShape, precision: str, tokens: int, lora_rank: int) -> sizing.Estimate:
    """Peak allocated memory of generating ``tokens`` tokens with the base model and the adapter (module docstring)."""
    if tokens <= 0:
        raise sizing.SizingError("the context of an answer must be positive")
    weights = sizing.weights_bytes(shape, precision)
    adapter = shape.lora_params(lora_rank) * ADAPTER_BYTES_PER_PARAM
    kv_cache = 2 * shape.layers * shape.kv_heads * shape.head_dim * KV_BYTES * tokens
    prefill = tokens * (PREFILL_BYTES_PER_HIDDEN * shape.hidden + PREFILL_BYTES_PER_INTERMEDIATE * shape.intermediate)
    projection = (2.0 if precision == "qlora4" else 4.0) * shape.hidden * shape.intermediate
    factor = 2 if precision == "fp32" else 1  # fp32 activations and cache on the CPU
    return sizing.Estimate(weights / GIB, adapter / GIB, (factor * (kv_cache + prefill) + projection) / GIB)


def export_estimate(shape: ModelShape) -> sizing.Estimate:
    """Peak RSS of the merged export on the CPU: the bf16 weights and the process."""
    return sizing.Estimate(shape.params * 2.0 / GIB, 0.0, EXPORT_PROCESS_GIB)


def _inference_stage(name: str, plan: sizing.Plan, shape: ModelShape, device: sizing.Device, tokens: int, rank: int) -> Stage:
    precision = INFERENCE_PRECISION[plan.precision]
    est = inference_estimate(shape, precision, tokens, rank)
    if plan.device == "gpu":  # as for training: the estimate with margin and reserve against the GPU's memory (its unified share)
        reserve = device.reserve_gib
        available = plan.vram_gib or 0.0
    else:
        reserve = 0.0
        available = None if not device.ram_kib else device.ram_kib / (1 << 20) * sizing.CPU_RAM_FRACTION
    return Stage(name, plan.device, precision, round(est.needed_gib(reserve), 2), None if available is None else round(available, 2),
                 est.as_dict(reserve))


def _export_stage(shape: ModelShape, device: sizing.Device) -> Stage:
    est = export_estimate(shape)
    available = None if not device.ram_kib else device.ram_kib / (1 << 20) * sizing.CPU_RAM_FRACTION
    return Stage("export", "cpu", "bf16", round(est.needed_gib(0.0), 2), None if available is None else round(available, 2), est.as_dict(0.0))


def plan_stages(plan: sizing.Plan, shape: ModelShape, device: sizing.Device, spec: dict) -> list[Stage]:
    """The stages this job runs after training (rank 0), each with its estimate; empty for a refused plan."""
    if plan.refused:
        return []
    tokens, rank = context_tokens(spec), int(spec["lora"]["rank"])
    stages = []
    if spec["sample_prompts"]:
        stages.append(_inference_stage("samples", plan, shape, device, tokens, rank))
    if spec["export"] == "merged":
        stages.append(_export_stage(shape, device))
    if spec.get("serve"):
        stages.append(_inference_stage("api", plan, shape, device, tokens, rank))
    return stages


WHAT = {"samples": "answering the sample prompts", "export": "the merged export (export: merged)", "api": "serving the adapter (lora_job_serve)"}
FIX = {
    "samples": "fewer new tokens (sample_max_new_tokens), a shorter cutoff_len, or no sample prompts",
    "export": "a host with more RAM, or export: adapter (the adapter alone)",
    "api": "a shorter cutoff_len or sample_max_new_tokens, or serve the adapter elsewhere",
}


def refusal(stages: list[Stage]) -> str | None:
    """Why a stage after training would not fit, or None: said before anything trains."""
    for stage in stages:
        if not stage.fits:
            place = "GPU" if stage.where == "gpu" else "host RAM"
            reserve = stage.estimate_gib["reserve"]
            need = f"{stage.needed_gib:.1f} GiB of {place} ({stage.precision}" + (f", {reserve:.1f} GiB runtime reserve included)" if reserve else ")")
            return f"refused: {WHAT[stage.name]} needs {need} but the {place} has {stage.available_gib:.1f} GiB after training: {FIX[stage.name]}"
    return None


def summary(stages: list[Stage]) -> str:
    """One line for the plan's message: each stage's need."""
    return "; ".join(f"{stage.name} {stage.needed_gib:.1f} GiB ({stage.where}, {stage.precision})" for stage in stages)

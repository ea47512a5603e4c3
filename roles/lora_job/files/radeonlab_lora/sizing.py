# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How much GPU memory a LoRA step needs, and the plan (batch, accumulation, checkpointing, QLoRA) or a refusal.

The memory model
================
Peak allocated memory (``torch.cuda.max_memory_allocated``) of a LoRA training step: Qwen2.5-shaped
models, LoRA r=8 on all linear layers, AdamW, bf16. All sizes in GiB (2^30 bytes); ``b`` = per-device
batch, ``s`` = cutoff_len (sequence length), ``h`` hidden, ``i`` intermediate, ``L`` layers, ``V``
vocabulary, ``H`` attention heads, ``N`` parameters, ``P_lora`` trainable LoRA parameters::

    fixed        = weights + 16 * P_lora                        (fp32 LoRA weight + grad + Adam m, v;
                                                                 8 with a paged optimiser: m, v in host-backed pages)
    weights      = 2 N                                          bf16
                 = 0.5159 Q + 2 (N - Q)                         4-bit QLoRA: Q = the decoder layers' linear weights,
                                                                 NF4 (0.5 B) + double-quantised absmax (blocks of 64:
                                                                 1/64 B + 4/(64*256) B); embeddings, lm_head, norms bf16
    logits       = 13.0 V  bytes per token                      (bf16 logits 2, fp32 upcast 4, log-softmax 4, grad 4,
                                                                 less what LLaMA-Factory's loss frees in between)
    layer_act    = 24 h + 8.1 i  bytes per token per layer      (everything one layer saves for backward)
    scores       = 6.5 H s^2  bytes per sample per layer        eager attention
                 = 5.0 H s^2                                    sdpa served by PyTorch's math kernel (ROCm without
                                                                 AOTriton kernels for the GPU); flash sdpa/fa2: none

    no checkpointing:  fixed + b s (logits + L layer_act) + b L scores
    checkpointing:     fixed + b s 2 h L + max(b s logits, b s layer_act + b scores)

With fused kernels (Liger-Kernel through LLaMA-Factory's ``enable_liger_kernel``: ``fused`` below) the logits are never
materialised and RMSNorm and SwiGLU keep less per layer::

    logits       = 10 h  bytes per token                        the fused linear + cross-entropy works in chunks of
                                                                 ~ b s h / V rows (Liger sizes them so), so its logits
                                                                 chunk, their gradient and the input's gradient are a
                                                                 few h per token, not V (derived, not fitted)
    layer_act    = 24 h + 6.0 i  bytes per token per layer      (the SwiGLU kernel keeps gate and up only)
    recompute    = 2.0 (b s layer_act + b scores)               checkpointing: the backward of one recomputed layer,
                                                                 its activations and their gradients

    no checkpointing:  fixed + b s (logits + L layer_act) + b L scores
    checkpointing:     fixed + b s 2 h L + max(b s logits, recompute)

Calibration: LLaMA-Factory 0.9.5 run by this package (``run``: the peak its launch wrapper records) and
``llamafactory-cli train`` on the same rendered YAML, on an NVIDIA H200 (torch 2.11.0+cu130, transformers
5.6.0, peft 0.18.1, accelerate 1.11.0: the versions LLaMA-Factory 0.9.5 pins), sdpa, 2026-12-01; random-weight
Qwen2.5-0.5B/-1.5B/-7B shapes; commands in docs/performance.md, raw rows in docs/performance/. Estimate against that
peak (``test_model_reproduces_llamafactory_h200`` pins every row)::

    7.62 B  sdpa   s 2048 b1 ckpt 18.44 (+1.1 %)   s 1024 b2 ckpt 18.44 (+1.1 %)   s 2048 b1 ckpt 18.37 (+1.5 %)
            sdpa   s 2048 b1 30.80 (+0.8 %)        s 2048 b4 79.75 (+1.2 %)        s 1024 b8 79.67 (+1.3 %)
            eager  s 2048 b1 49.45 (+3.0 %)        s 2048 b1 ckpt 18.38 (+1.4 %)
            math   s 2048 b1 44.47 (+4.2 %)        s 2048 b1 ckpt 18.37 (+1.5 %)   s 1024 b1 26.55 (+0.2 %)
                   s 2048 b4 ckpt 30.12 (+3.3 %)
                   (sdpa forced onto PyTorch's math kernel, as on a GPU AOTriton has no kernels for)
    QLoRA (bitsandbytes 0.50.2, NF4, double quantisation; issue 19, same stack):
    7.62 B  s 1024 b2 ckpt 9.43 (+2.0 %)   s 2048 b1 ckpt 9.44 (+1.9 %)   s 1024 b1 ckpt 7.49 (+0.7 %)
            s 1792 b1 ckpt 8.95 (+1.7 %)   s 1024 b1 12.97 (+6.0 %)      s 1024 b2 ckpt paged 9.34 (+1.4 %)
            s 2048 b1 ckpt paged 9.34 (+1.4 %, the 12 GB card's plan)
            s 2048 b1 eager 39.29 (+6.7 %)   sdpa 20.27 (+8.7 %)   math 34.31 (+8.8 %)
    Fused kernels (liger-kernel 0.8.5, issue 52; NVIDIA H100, torch 2.11.0+cu130, transformers 5.17.0, peft 0.21.0,
    LLaMA-Factory 0.9.5, sdpa, 2026-12-07; docs/performance/h100_2026-12-07_liger.jsonl):
    7.62 B  s 2048 b1 ckpt 15.49 (+0.9 %)   s 2048 b2 ckpt 16.50 (+1.7 %)   s 2048 b1 25.07 / 24.81 (+1.7 %)
            (the same job without them: s 2048 b1 ckpt 18.37, +1.5 %, the row above)
    3.61 B  Llama-3.2-3B shape (vocab 128 256, untied): s 2048 b1 ckpt 7.61 (+1.2 %); without them 10.21 (+1.9 %)
    Checked, not fitted: the plans a 24 GB card gets, each run capped to 24 GiB (h100_2026-12-07_liger_plans.jsonl):
    7.62 B  with them s 2048 b4 ckpt 18.53 (+2.9 %), without them b1 ckpt 18.37 (+1.5 %)
    3.61 B  with them s 2048 b2 19.50 (+3.3 %), without them b1 17.55 (+0.1 %)
    14.8 B  s 1024 b1 ckpt 12.09 (+0.2 %)
    1.54 B  sdpa   s 2048 b1 12.51 (+0.9 %)   s 2048 b1 ckpt 6.74 (+3.0 %)
    0.49 B  sdpa   s 1024 b2 / s 2048 b1 7.40 (+1.9 %)     b4 / b2 13.61 (+3.6 %)
                   s 1024 b8 26.14 (+4.1 %)   s 2048 b8 51.24 (+4.3 %)   s 2048 b1 ckpt 4.62 (+4.7 %)
                   s 1024 b1 4.23 (+0.8 %)
            math   s 2048 b1 12.91 (+9.2 %)   s 2048 b2 ckpt 8.19 (+6.0 %)

Two refits. First ``layer_act``'s intermediate constant (12.4 -> 8.1 bytes): with 12.4 every run without
checkpointing was over-estimated by 16-25 % (LLaMA-Factory saves less per layer than the bare loop the
first calibration used). Then the logits constant (14.25 -> 13.0) and, with it, the math kernel's (4.75 -> 5.0):
with 14.25 the checkpointed 0.5 B rows, where the logits term is nearly all the activations, were +12.5 ..
+14.9 % over their peaks (the logits term is the same for every Qwen2.5 size: 152 k vocabulary). The pair was
chosen on a grid (logits 12.5 .. 14.5, math 4.75 .. 5.25) as the one whose every measured LLaMA-Factory row is at
or over its peak with the smallest worst case: +0.2 .. +9.2 % over all 35 rows above (issue 18, calls 1-8).

The fused constants (issue 52) were fitted on the four Liger rows above, two shapes: ``layer_act``'s intermediate
constant 6.0 on the only row without checkpointing (7 B: +1.7 %; anything in 5.6 .. 8.0 keeps it in +0 .. +10 %), the
recompute factor 2.0 on the checkpointed rows, whose peak is no longer the loss but the backward of one recomputed layer
(measured 1.62 .. 1.64 x layer_act; 2.0 puts all three at +0.9 .. +1.7 %). The logits constant (10 h) is Liger's
chunking, not a fit: it bounds no measured row. The fused per-hidden constant stays 24 (the fused RMSNorm's saving is
not separable in these rows).

Second reference, the first calibration: a bare transformers + PEFT loop on the same H200
(``shared/reference/lora_memory_h200.md``, 7.64 B, 3 + 8 steps): checkpointed batch 1 16.75 / 19.0 GiB at
s = 1024 / 2048 (the model: 16.56 / 18.64, -1.1 / -1.9 %; b2 / b4 -2.8 / -4.0 %: that loop's logits need more than
LLaMA-Factory's, and the decision's 10 % margin covers it), no checkpointing 25.1 / 35.7 (sdpa) and 29.9 / 54.4
(eager) GiB at 1024 / 2048, batch rows at 2048: 23.5 / 32.4 (b2 / b4 checkpointed), 56.9 / 99.3 (b2 / b4
not). Without checkpointing the bare loop needs ~5 GiB more than LLaMA-Factory at b1 (35.7 vs 30.8), so the
refitted model under-estimates it (35.7 -> 31.4, -12 %): it sizes LLaMA-Factory, not that loop.
The logits term dominates checkpointed runs: it does not shrink with the model, so small models with
Qwen's 152 k vocabulary need ~2 GiB per 1024 tokens of batch x sequence regardless of their size.

Decision: ``needed = estimate * 1.10 + reserve`` must not exceed the GPU's VRAM (rocminfo's pool size,
e.g. 16 760 832 KiB = 15.98 GiB for an RX 6800 XT, 25 149 440 KiB = 23.98 GiB for an RX 7900 XTX).
The 10 % margin covers allocator fragmentation (torch's peak reserved memory was 1.05-1.15x the allocated
peak in the runs above, never above estimate x 1.10) and what the table did not measure (newer library
versions, other shapes); ``reserve`` (default 1.5 GiB, ``reserve_gib`` in the GPU facts) covers the HIP
context, rocBLAS/hipBLASLt workspaces and a desktop session on the same card. Candidates are tried
fastest first, and the first that fits wins:

1. bf16, no checkpointing, largest batch (power of two, at most the effective batch target),
2. bf16 with gradient checkpointing, largest batch,
The fused kernels are not a candidate of their own: they are on for every candidate where the job allows them
(``fused_kernels``: ``auto`` or ``liger``), the host's Liger-Kernel probe passed on its GPUs (a real kernel call, the
llamafactory role's) and LLaMA-Factory patches the model's ``model_type`` (vocabulary ``liger_model_types``); the
saving then buys the larger batch or no checkpointing. ``liger`` that cannot be honoured is a refusal, ``auto`` plans
without them and says why (``fused_kernels_reason``). With them the 7 B model at s = 2048 on a 24 GB card plans batch 4
with checkpointing (needed 22.5 GiB) instead of batch 1 (22.0 GiB); the card cannot go without checkpointing (29.2 GiB).

3. 4-bit QLoRA (only when allowed *and* the bitsandbytes probe passed on the host), without then with
   checkpointing, always with double quantisation (it saves 0.047 B per quantised weight, 0.29 GiB for 7 B,
   at no measurable speed cost); last, checkpointed with a paged optimiser (``paged_adamw_32bit``), which
   moves Adam's m and v (8 B per LoRA parameter, 0.15 GiB for 7 B at r 8) out of the allocator: it helps
   only in that narrow band, so the plan uses it only when nothing else fits.

The order follows the measured throughput: at s = 2048 no checkpointing at batch 1 (8901 tokens/s)
beats checkpointing at batch 4 (7033), and within a mode a bigger batch is faster (5450 -> 6835 -> 7033).
``gradient_accumulation_steps = ceil(target / batch)`` keeps the effective batch. When nothing fits the
plan is a refusal carrying the numbers and what would fit (QLoRA, the largest cutoff_len, the largest
model of the same vocabulary).

Limits
------
- Three Qwen2.5 shapes (0.5 / 1.5 / 7.6 B), r = 8, one software stack, an NVIDIA GPU. Other shapes are
  scaled by the shape terms above, not measured. QLoRA: the weights term is bitsandbytes' byte count
  (NF4 + double-quantised absmax); the measured 7 B peak is the bf16 peak minus exactly the weights saved
  (9.43 = 18.44 - 14.18 + 5.17 GiB), so activations are sized as for bf16; CDNA's default block of 128
  needs a little less (sized as 64). The paged optimiser is derived, not measured on ROCm.
- Fused kernels: two shapes (Qwen2.5-7B, Llama-3.2-3B), one stack, an NVIDIA GPU; batch 4 and other families
  (Gemma's GeGLU, MoE, vision models) are scaled by the terms above, not measured; eager and math attention with them
  are not measured (their scores are doubled in the recompute, on the safe side). Which Radeon targets run the
  Triton kernels is the probe's finding on each host, not the model's.
- ``sdpa`` is sized by the kernel that serves it (``sdpa_kernel``, the llamafactory role's decision from
  support_matrix.SDPA_KERNELS): ``flash`` (AOTriton flash / memory-efficient, the default, no score matrix)
  or ``math``. The math constant (5.0 B per score, between flash's 0 and eager's 6.5) was fitted first on
  one row (7 B, s = 2048, b 1: 44.47 GiB, where flash sizing would say 31.4, -29 %) as 4.5, then raised to 4.75
  when the runner's own math-kernel jobs (docs/performance.md, call 5) found 7 B at s = 1024 b 1 0.6 % under
  its peak with 4.5, and to 5.0 with the logits refit; every measured math row is at or over its peak. With checkpointing all three
  kernels peaked at 18.4 GiB.
- The ``auto`` attention backend is sized as eager (it is whatever transformers picks); ``fa2``/``fa3``
  as sdpa. Checkpointing makes the difference negligible up to s = 2048.
- Dense decoder-only models; MoE is rough (see ``modelshape``). Vision towers, packing and very long
  sequences (> 8 k) are not modelled. LoRA ranks other than 8 scale only the (small) LoRA state, which is
  counted for all seven projections whatever ``lora_target`` says; ``lora_dropout > 0`` (a copy of each LoRA
  input) is not modelled - the margin absorbs it at 7 B, small models with dropout are less covered.
- Multi-GPU (torchrun DDP) needs the plan per GPU: hand in the smallest visible card.
- Integrated GPUs (APUs): the pool the KFD reports, less what the CPU side needs when the pool is the OS's RAM
  (``unified``); the step's peak is sized as on a card.
- CPU (no VRAM): fp32, no checkpointing; checked against host RAM only when ``ram_kb`` is given
  (activations counted twice for fp32).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from . import devices
from .modelshape import ModelShape
from .unified import UnifiedMemory
from .vocabulary import ATTENTION_REQUESTS, FUSED_KERNELS, LIGER_MODEL_TYPES, SDPA_KERNELS

GIB = float(1 << 30)

LOGITS_BYTES_PER_VOCAB = 13.0
CKPT_BYTES_PER_HIDDEN = 2.0
LAYER_BYTES_PER_HIDDEN = 24.0
LAYER_BYTES_PER_INTERMEDIATE = 8.1
EAGER_BYTES_PER_SCORE = 6.5
FUSED_LOGITS_BYTES_PER_HIDDEN = 10.0  # Liger's fused linear + cross-entropy: logits in chunks of ~b s h / V rows (derived)
FUSED_LAYER_BYTES_PER_INTERMEDIATE = 6.0  # Liger's SwiGLU keeps gate and up: fitted on 7 B without checkpointing, +1.7 %
FUSED_RECOMPUTE_FACTOR = 2.0  # checkpointed with fused kernels: one recomputed layer and its gradients, +0.9 .. +1.7 %
MATH_BYTES_PER_SCORE = 5.0  # SDPA math kernel, refitted with the logits constant: every measured row +0.2 .. +9.2 % (see above)
LORA_STATE_BYTES_PER_PARAM = 16.0
PAGED_LORA_STATE_BYTES_PER_PARAM = 8.0  # fp32 LoRA weight + grad; Adam m, v paged
QLORA_BLOCKSIZE = 64  # bitsandbytes' 4-bit block on CUDA and RDNA (warp 32); CDNA defaults to 128 (smaller absmax)
QLORA_BYTES_PER_PARAM = 0.5 + 1.0 / QLORA_BLOCKSIZE + 4.0 / (QLORA_BLOCKSIZE * 256)  # NF4 + uint8 absmax + fp32 per 256 blocks
SAFETY_MARGIN = 0.10
DEFAULT_RESERVE_GIB = 1.5
CPU_RAM_FRACTION = 0.75
MAX_BATCH = 32

# Which memory behaviour an LLaMA-Factory ``flash_attn`` value has.
_MEMORY_OF = {"sdpa": "sdpa", "fa2": "sdpa", "auto": "eager", "disabled": "eager"}
ATTENTION_MEMORY = {backend: _MEMORY_OF[backend] for backend in ATTENTION_REQUESTS}  # a new request name fails here first
# Bytes per attention score an activation keeps, per memory kind (SDPA_KERNELS: which kernel serves ``sdpa``, the
# llamafactory role's ``sdpa_kernel``; ``flash`` when a job spec does not say).
SCORE_BYTES = {"sdpa": 0.0, "math": MATH_BYTES_PER_SCORE, "eager": EAGER_BYTES_PER_SCORE}


class SizingError(ValueError):
    """Bad sizing input (unknown attention, non-positive numbers)."""


@dataclass(frozen=True)
class Device:
    """What the plan needs to know about the training device."""

    vram_kib: int | None  # None or 0: no GPU, train on the CPU
    reserve_gib: float = DEFAULT_RESERVE_GIB
    ram_kib: int | None = None
    bitsandbytes_ok: bool = False
    name: str = ""
    bitsandbytes_reason: str = ""  # the probe's reason (why 4-bit does not work here), when it failed
    unified: UnifiedMemory | None = None  # an integrated GPU: vram_kib is its pool, shared with the CPU side
    liger_ok: bool = False  # the llamafactory role's Liger-Kernel probe passed on every visible GPU
    liger_reason: str = ""  # the probe's reason (what ran, or why the kernels do not work here)

    @property
    def is_gpu(self) -> bool:
        return bool(self.vram_kib)

    @property
    def vram_gib(self) -> float:
        return (self.vram_kib or 0) / (1 << 20)


@dataclass(frozen=True)
class Setting:
    precision: str  # bf16 | qlora4 | fp32
    gradient_checkpointing: bool
    batch: int
    paged_optimizer: bool = False  # qlora4 only: paged_adamw_32bit


@dataclass
class Estimate:
    weights_gib: float
    lora_state_gib: float
    activations_gib: float

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.lora_state_gib + self.activations_gib

    def needed_gib(self, reserve_gib: float) -> float:
        return self.total_gib * (1 + SAFETY_MARGIN) + reserve_gib

    def as_dict(self, reserve_gib: float) -> dict:
        return {
            "weights": round(self.weights_gib, 2),
            "lora_state": round(self.lora_state_gib, 2),
            "activations": round(self.activations_gib, 2),
            "total": round(self.total_gib, 2),
            "margin": round(self.total_gib * SAFETY_MARGIN, 2),
            "reserve": round(reserve_gib, 2),
            "needed": round(self.needed_gib(reserve_gib), 2),
        }


@dataclass
class Plan:
    decision: str  # train | refuse
    device: str  # gpu | cpu
    model_params_b: float
    shape_source: str
    cutoff_len: int
    attention: str
    attention_memory: str
    effective_batch_target: int
    world_size: int = 1  # data-parallel processes (GPUs x nodes; 1 per node on the CPU): each trains its share of the batch
    precision: str | None = None
    per_device_train_batch_size: int | None = None
    gradient_accumulation_steps: int | None = None
    gradient_checkpointing: bool | None = None
    double_quantization: bool | None = None  # qlora4 plans: bitsandbytes double quantisation
    paged_optimizer: bool | None = None  # qlora4 plans: paged_adamw_32bit
    vram_gib: float | None = None
    available_gib: float | None = None
    needed_gib: float | None = None
    estimate_gib: dict | None = None
    alternatives: dict = field(default_factory=dict)
    unified_memory: dict | None = None  # an integrated GPU: pool, RAM, what the CPU side needs, what the GPU gets
    fused_kernels: str = "off"  # liger: LLaMA-Factory's enable_liger_kernel, sized with the fused terms | off
    fused_kernels_reason: str = ""  # why (the probe, the model's family, the request)
    stages: list = field(default_factory=list)  # after training (stages.plan_stages): samples, export, api, each sized
    message: str = ""

    @property
    def refused(self) -> bool:
        return self.decision == "refuse"

    def as_dict(self) -> dict:
        return asdict(self)


def memory_kind(attention: str, sdpa_kernel: str = "flash") -> str:
    """sdpa (no score matrix), math (sdpa on PyTorch's math kernel) or eager."""
    if sdpa_kernel not in SDPA_KERNELS:
        raise SizingError(f"unknown sdpa_kernel {sdpa_kernel!r}; expected one of {list(SDPA_KERNELS)}")
    try:
        kind = ATTENTION_MEMORY[attention]
    except KeyError:
        raise SizingError(f"unknown attention backend {attention!r}; expected one of {sorted(ATTENTION_MEMORY)}") from None
    return "math" if attention == "sdpa" and sdpa_kernel == "math" else kind


def estimate(shape: ModelShape, seq: int, setting: Setting, attention: str, lora_rank: int = 8,
             sdpa_kernel: str = "flash", fused: bool = False) -> Estimate:
    """Peak memory of one LoRA training step (see the module docstring for the formula); ``fused``: Liger-Kernel on."""
    if seq <= 0 or setting.batch <= 0:
        raise SizingError("cutoff_len and batch must be positive")
    score_bytes = SCORE_BYTES[memory_kind(attention, sdpa_kernel)]
    weights = weights_bytes(shape, setting.precision)
    state_bytes = PAGED_LORA_STATE_BYTES_PER_PARAM if setting.paged_optimizer else LORA_STATE_BYTES_PER_PARAM
    lora_state = shape.lora_params(lora_rank) * state_bytes

    tokens = setting.batch * seq
    logits = FUSED_LOGITS_BYTES_PER_HIDDEN * shape.hidden if fused else LOGITS_BYTES_PER_VOCAB * shape.vocab
    intermediate = FUSED_LAYER_BYTES_PER_INTERMEDIATE if fused else LAYER_BYTES_PER_INTERMEDIATE
    layer_act = LAYER_BYTES_PER_HIDDEN * shape.hidden + intermediate * shape.intermediate
    scores_per_layer = score_bytes * shape.heads * seq * seq * setting.batch
    if setting.gradient_checkpointing:
        stored = tokens * CKPT_BYTES_PER_HIDDEN * shape.hidden * shape.layers
        recompute = (tokens * layer_act + scores_per_layer) * (FUSED_RECOMPUTE_FACTOR if fused else 1.0)
        activations = stored + max(tokens * logits, recompute)
    else:
        activations = tokens * (logits + shape.layers * layer_act) + shape.layers * scores_per_layer
    if setting.precision == "fp32":
        activations *= 2
    return Estimate(weights / GIB, lora_state / GIB, activations / GIB)


def weights_bytes(shape: ModelShape, precision: str) -> float:
    """The base model's weights in memory: bf16, fp32, or NF4 with double quantisation for the decoder's linear layers."""
    if precision == "qlora4":
        quantised = quantised_params(shape)
        return quantised * QLORA_BYTES_PER_PARAM + (shape.params - quantised) * 2.0
    return shape.params * (4.0 if precision == "fp32" else 2.0)


def quantised_params(shape: ModelShape) -> int:
    """Weights bitsandbytes stores in 4 bit: every linear layer of the decoder (not embeddings, lm_head, norms)."""
    return shape.params - shape.embedding_params - shape.layers * 2 * shape.hidden - shape.hidden


def _batches(target: int) -> list[int]:
    sizes = [b for b in (32, 16, 8, 4, 2, 1) if b <= min(target, MAX_BATCH)]
    return sizes or [1]


def _capacity_gib(device: Device) -> float | None:
    """Memory the estimate (with margin) may use: VRAM minus reserve, or a share of host RAM; None = unchecked."""
    if device.is_gpu:
        return device.vram_gib
    if device.ram_kib:
        return device.ram_kib / (1 << 20) * CPU_RAM_FRACTION
    return None


def _fits(est: Estimate, device: Device) -> bool:
    capacity = _capacity_gib(device)
    reserve = device.reserve_gib if device.is_gpu else 0.0
    return capacity is None or est.needed_gib(reserve) <= capacity


def candidate_settings(device: Device, target: int, allow_qlora: bool) -> list[Setting]:
    """Settings in order of preference (fastest first)."""
    if not device.is_gpu:
        return [Setting("fp32", False, b) for b in _batches(target)]
    precisions = ["bf16"] + (["qlora4"] if allow_qlora else [])
    settings = [Setting(p, ckpt, b) for p in precisions for ckpt in (False, True) for b in _batches(target)]
    if allow_qlora:
        settings += [Setting("qlora4", True, b, paged_optimizer=True) for b in _batches(target)]
    return settings


def _largest_fitting(low: int, high: int, fits) -> int | None:
    """Largest integer in [low, high] for which the monotone predicate ``fits`` holds, else None."""
    if not fits(low):
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _alternatives(shape: ModelShape, seq: int, attention: str, rank: int, device: Device, allow_qlora: bool,
                  sdpa_kernel: str = "flash", fused: bool = False) -> dict:
    """What would fit this GPU when the job as asked does not (QLoRA in its smallest setting, shorter cutoff, smaller model)."""
    reserve = device.reserve_gib
    alternatives: dict = {}
    qlora = estimate(shape, seq, Setting("qlora4", True, 1, paged_optimizer=True), attention, rank, sdpa_kernel, fused)
    alternatives["qlora4"] = {
        "needed_gib": round(qlora.needed_gib(reserve), 2),
        "fits": _fits(qlora, device),
        "enabled": allow_qlora,
        "available": device.bitsandbytes_ok,
        "reason": "" if device.bitsandbytes_ok else (device.bitsandbytes_reason or "no bitsandbytes probe passed on this host"),
    }
    qlora_ok = allow_qlora and device.bitsandbytes_ok
    smallest = Setting("qlora4", True, 1, paged_optimizer=True) if qlora_ok else Setting("bf16", True, 1)
    longest = _largest_fitting(1, max(1, seq // 128),
                               lambda k: _fits(estimate(shape, k * 128, smallest, attention, rank, sdpa_kernel, fused), device))
    alternatives["max_cutoff_len"] = longest * 128 if longest else None
    bf16_ckpt = Setting("bf16", True, 1)

    def model_fits(tenths: int) -> bool:
        return _fits(estimate(ModelShape.from_params(tenths / 10, shape.vocab), seq, bf16_ckpt, attention, rank, sdpa_kernel, fused),
                     device)

    largest = _largest_fitting(1, max(1, int(shape.params_b * 10)), model_fits)
    alternatives["max_model_params_b_bf16"] = largest / 10 if largest else None
    return alternatives


def qlora_note(qlora: dict) -> str:
    """What the refusal says about QLoRA: it would fit but is off or unavailable (and why), or it would not fit either."""
    if not qlora["fits"]:
        return f"not even 4-bit QLoRA ({qlora['needed_gib']:.1f} GiB)"
    if qlora["enabled"] and not qlora["available"]:
        return f"4-bit QLoRA ({qlora['needed_gib']:.1f} GiB), but bitsandbytes is unavailable on this host: {qlora['reason']}"
    if not qlora["available"]:
        return (f"4-bit QLoRA ({qlora['needed_gib']:.1f} GiB; the job has allow_qlora false, and bitsandbytes is unavailable "
                f"on this host: {qlora['reason']})")
    return f"4-bit QLoRA ({qlora['needed_gib']:.1f} GiB; the job has allow_qlora false)"


def _refusal_message(shape, seq, device, smallest: Estimate, alternatives: dict) -> str:
    reserve = device.reserve_gib
    parts = [
        f"refused: a {shape.params_b:.2f} B-parameter model at cutoff_len {seq} needs {smallest.needed_gib(reserve):.1f} GiB "
        f"even in its smallest bf16 setting (gradient checkpointing, batch 1: estimate {smallest.total_gib:.1f} GiB "
        f"+ {SAFETY_MARGIN:.0%} margin + {reserve:.1f} GiB runtime reserve), but the GPU "
        + (f"gets {device.vram_gib:.2f} GiB ({device.unified.describe(device.vram_gib)})" if device.unified else f"has {device.vram_gib:.2f} GiB")
    ]
    options = [qlora_note(alternatives["qlora4"])]
    if alternatives["max_cutoff_len"]:
        options.append(f"cutoff_len <= {alternatives['max_cutoff_len']}")
    if alternatives["max_model_params_b_bf16"]:
        options.append(f"a bf16 model of at most ~{alternatives['max_model_params_b_bf16']:.1f} B parameters at this cutoff_len")
    parts.append("would fit: " + "; ".join(options))
    return ". ".join(parts)


def fused_kernels_for(request: str, device: Device, shape: ModelShape) -> tuple[bool, str]:
    """Whether a job's ``fused_kernels`` request (auto | liger | off) gets Liger-Kernel on this device, and why."""
    if request not in FUSED_KERNELS:
        raise SizingError(f"unknown fused_kernels {request!r}; expected one of {list(FUSED_KERNELS)}")
    if request == "off":
        return False, "fused_kernels is off"
    if not device.is_gpu:
        return False, "training on the CPU, where no Triton kernel runs"
    if not device.liger_ok:
        return False, "the Liger-Kernel probe did not pass on this host: " + (device.liger_reason or "no probe ran (radeonlab.llm.llamafactory records it)")
    if shape.model_type not in LIGER_MODEL_TYPES:
        what = f"model_type {shape.model_type!r}" if shape.model_type else "a model without config.json (its model_type is unknown)"
        return False, f"LLaMA-Factory patches no Liger-Kernel into {what}"
    return True, f"Liger-Kernel on ({shape.model_type}; {device.liger_reason or 'the probe passed'})"


def plan_job(shape: ModelShape, *, cutoff_len: int, attention: str, device: Device, effective_batch: int = 8,
             lora_rank: int = 8, allow_qlora: bool = False, sdpa_kernel: str = "flash", world_size: int = 1,
             fused_kernels: str = "off") -> Plan:
    """Choose the fastest setting that fits, or refuse with the numbers. Never plans a run the model says will OOM.

    ``sdpa_kernel`` (flash | math) says which kernel serves ``attention="sdpa"``; other backends ignore it.
    ``fused_kernels`` (auto | liger | off): see :func:`fused_kernels_for`; ``liger`` that cannot be honoured is refused.
    ``world_size`` data-parallel processes share the effective batch: each is sized (``device`` is one of them,
    the smallest card) for ``ceil(effective_batch / world_size)`` samples a step.
    """
    if effective_batch <= 0:
        raise SizingError("effective_batch must be positive")
    if world_size <= 0:
        raise SizingError("world_size must be positive")
    fused, fused_reason = fused_kernels_for(fused_kernels, device, shape)
    per_rank = math.ceil(effective_batch / world_size)
    qlora_ok = allow_qlora and device.bitsandbytes_ok
    plan = Plan(
        decision="refuse",
        device="gpu" if device.is_gpu else "cpu",
        model_params_b=round(shape.params_b, 3),
        shape_source=shape.source,
        cutoff_len=cutoff_len,
        attention=attention,
        attention_memory=memory_kind(attention, sdpa_kernel),
        effective_batch_target=effective_batch,
        world_size=world_size,
        fused_kernels="liger" if fused else "off",
        fused_kernels_reason=fused_reason,
    )
    if fused_kernels == "liger" and not fused:
        plan.message = f"refused: fused_kernels is liger, but {fused_reason}; set fused_kernels auto or off"
        return plan
    where = f"{device.vram_gib:.2f} GiB GPU"
    if device.unified:
        plan.unified_memory = device.unified.as_dict()
        if device.unified.host_shortfall:
            plan.message = f"refused: {device.unified.host_shortfall}"
            return plan
        device = replace(device, vram_kib=int(device.unified.gpu_gib * (1 << 20)))
        where = device.unified.describe(device.vram_gib)
    reserve = device.reserve_gib if device.is_gpu else 0.0
    capacity = _capacity_gib(device)
    if device.is_gpu:
        plan.vram_gib = round(device.vram_gib, 2)
    if capacity is not None:
        plan.available_gib = round(capacity - reserve, 2)

    for setting in candidate_settings(device, per_rank, qlora_ok):
        est = estimate(shape, cutoff_len, setting, attention, lora_rank, sdpa_kernel, fused)
        if _fits(est, device):
            plan.decision = "train"
            plan.precision = setting.precision
            plan.per_device_train_batch_size = setting.batch
            plan.gradient_accumulation_steps = math.ceil(per_rank / setting.batch)
            plan.gradient_checkpointing = setting.gradient_checkpointing
            if setting.precision == "qlora4":
                plan.double_quantization = True
                plan.paged_optimizer = setting.paged_optimizer
            plan.estimate_gib = est.as_dict(reserve)
            plan.needed_gib = plan.estimate_gib["needed"]
            if not device.is_gpu:
                where = "CPU" + (f" ({capacity:.1f} GiB usable RAM)" if capacity else " (RAM not checked)")
            precision = "qlora4 (NF4, double quantisation" + (", paged AdamW)" if setting.paged_optimizer else ")") \
                if setting.precision == "qlora4" else setting.precision
            plan.message = (
                f"{precision}, batch {setting.batch} x accumulation {plan.gradient_accumulation_steps}, "
                f"gradient checkpointing {'on' if setting.gradient_checkpointing else 'off'}: needs {plan.needed_gib:.1f} GiB on the {where}"
            ) + (f", on each of {world_size} data-parallel processes" if world_size > 1 else "") + (
                ", Liger-Kernel fused kernels on" if fused else "")
            return plan

    if not device.is_gpu:
        smallest = estimate(shape, cutoff_len, Setting("fp32", False, 1), attention, lora_rank, sdpa_kernel)
        plan.needed_gib = round(smallest.needed_gib(0.0), 2)
        plan.estimate_gib = smallest.as_dict(0.0)
        plan.message = (
            f"refused: a {shape.params_b:.2f} B-parameter model trains on the CPU in fp32 and needs {plan.needed_gib:.1f} GiB, "
            f"more than {CPU_RAM_FRACTION:.0%} of the host's {device.ram_kib / (1 << 20):.1f} GiB RAM"
        )
        return plan

    smallest = estimate(shape, cutoff_len, Setting("bf16", True, 1), attention, lora_rank, sdpa_kernel, fused)
    plan.needed_gib = round(smallest.needed_gib(reserve), 2)
    plan.estimate_gib = smallest.as_dict(reserve)
    plan.alternatives = _alternatives(shape, cutoff_len, attention, lora_rank, device, allow_qlora, sdpa_kernel, fused)
    plan.message = _refusal_message(shape, cutoff_len, device, smallest, plan.alternatives)
    return plan


# -----------------------------------------------------------------------------------------------
def _kib(value) -> int | None:
    if value in (None, "", 0, "0"):
        return None
    return int(value)


def device_from_facts(facts: dict | None) -> Device:
    """Read a GPU facts dict: flat ``vram_kb`` or a list of GPUs (``gpus``/``agents``, rocm_facts style).

    The GPUs trained on are ``devices.trainable``'s. Several: LLaMA-Factory trains data-parallel on all of them, so the
    smallest sizes the plan. Integrated ones (an APU's, when it has no usable discrete card): their pool is shared with
    the CPU side (``unified``). Optional keys: ``reserve_gib``, ``ram_kb``, ``host_reserve_gib`` (integrated GPUs),
    ``bitsandbytes_ok`` and ``bitsandbytes`` (the llamafactory role's probe result: ``{"ok", "reason", "version"}``; its
    ``ok`` counts when ``bitsandbytes_ok`` is absent), ``liger_kernel`` (its Liger-Kernel probe, the same keys).
    """
    facts = dict(facts or {})
    if isinstance(facts.get("rocm"), dict):
        nested = facts.pop("rocm")
        facts = {**nested, **facts}
    trained = devices.trainable(devices.gpus_from_facts(facts))
    smallest = min(trained, key=lambda gpu: gpu["vram_kb"]) if trained else None
    ram = _kib(facts.get("ram_kb", facts.get("ram_kib")))
    unified = None
    if smallest and smallest["integrated"]:
        host_reserve = facts.get("host_reserve_gib")
        unified = UnifiedMemory(smallest["vram_kb"], ram, **({} if host_reserve is None else {"host_reserve_gib": float(host_reserve)}))
    reserve = facts.get("reserve_gib")
    probe = facts.get("bitsandbytes") if isinstance(facts.get("bitsandbytes"), dict) else {}
    liger = facts.get("liger_kernel") if isinstance(facts.get("liger_kernel"), dict) else {}
    return Device(
        vram_kib=smallest["vram_kb"] if smallest else None,
        reserve_gib=float(DEFAULT_RESERVE_GIB if reserve is None else reserve),
        ram_kib=ram,
        bitsandbytes_ok=bool(facts.get("bitsandbytes_ok", probe.get("ok", False))),
        name=str(smallest["name"] if smallest else facts.get("name") or facts.get("marketing_name") or ""),
        bitsandbytes_reason=str(probe.get("reason") or ""),
        unified=unified,
        liger_ok=bool(liger.get("ok", False)),
        liger_reason=str(liger.get("reason") or ""),
    )


def probe_device(sysfs_root: str = "/") -> dict:
    """Facts from sysfs when none are handed in: amdgpu ``mem_info_vram_total`` of every card, host MemTotal.

    Cheap and stdlib-only; the role normally passes rocm_facts instead, which also knows what is visible.
    """
    import glob
    import os

    gpus = []
    for path in sorted(glob.glob(os.path.join(sysfs_root, "sys/class/drm/card[0-9]*/device/mem_info_vram_total"))):
        try:
            with open(path, encoding="ascii") as handle:
                total = int(handle.read().strip())
        except (OSError, ValueError):
            continue
        if total >= (1 << 30):  # < 1 GiB: an APU carve-out, not a training GPU
            gpus.append({"type": "GPU", "vram_kb": total // 1024, "name": os.path.basename(os.path.dirname(os.path.dirname(path)))})
    facts: dict = {"gpus": gpus}
    try:
        with open(os.path.join(sysfs_root, "proc/meminfo"), encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    facts["ram_kb"] = int(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    return facts

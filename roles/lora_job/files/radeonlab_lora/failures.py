# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a failed training attempt was, and what to try next: a pure function of the attempt history and the log.

Classes, checked in this order on the failed attempt's log tail:

``oom``        "out of memory", "HIP out of memory", OutOfMemoryError, hipErrorOutOfMemory. Checked first
               because ROCm also spells it "HIP error: out of memory". Never retried with the same settings:
               the same step would fail the same way. Retried with half the per-device batch and twice the
               accumulation (the effective batch, and so the optimisation, stays the same), or at batch 1 with
               gradient checkpointing switched on (same maths, less memory). Batch 1 with checkpointing: stop
               and say what would help. The plan was meant to prevent this; an OOM means the card had less
               free memory than the reserve assumed (a desktop session, another process) or the model erred.
``hip_kernel`` a kernel the GPU cannot run: "HIP error", "Kernel not supported", "invalid device function",
               hipErrorNoBinaryForGpu, "no kernel image", HSA_STATUS_ERROR, "Memory access fault". Usually the
               attention kernel (FlashAttention CK/Triton, AOTriton SDPA on an unlisted gfx) - retried with
               ``flash_attn: sdpa``, then ``disabled`` (eager), each time with packing and neat_packing off
               (packed sequences pull in the varlen FlashAttention path). Each backend is tried at most once.
``peer``       another process of a data-parallel job failed or could not be reached: "Connection closed by
               peer", "Connection reset by peer", DistStoreError, RendezvousError, a collective that timed out
               (``ddp_timeout``). Not retried: one node alone cannot go on, and a lone retry would wait for peers
               that are not coming. Re-running the play starts every node again, each from its last checkpoint.
``other``      anything else (Python errors, a dataset problem, SIGKILL from the host OOM killer): not retried;
               the evidence line is recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .vocabulary import ATTENTION_FALLBACKS

OOM_PATTERNS = (
    r"out of memory",
    r"OutOfMemoryError",
    r"hipErrorOutOfMemory",
)
HIP_KERNEL_PATTERNS = (
    r"HIP error",
    r"hipError\w+",
    r"Kernel not supported",
    r"invalid device function",
    r"hipErrorNoBinaryForGpu",
    r"no kernel image is available",
    r"HSA_STATUS_ERROR\w*",
    r"Memory access fault by GPU",
)
PEER_PATTERNS = (
    r"Connection closed by peer",
    r"Connection reset by peer",
    r"DistStoreError",
    r"RendezvousError\w*",
    r"RendezvousTimeoutError",
    r"DistNetworkError",
    r"ProcessGroup\w* .*[Tt]imed? ?out",
    r"Timed out waiting .* for (?:send|recv|the peer)",
)
DEFAULT_MAX_ATTEMPTS = 5

_OOM = re.compile("|".join(OOM_PATTERNS), re.IGNORECASE)
_HIP = re.compile("|".join(HIP_KERNEL_PATTERNS), re.IGNORECASE)
_PEER = re.compile("|".join(PEER_PATTERNS))


@dataclass(frozen=True)
class Classification:
    kind: str  # oom | hip_kernel | peer | other
    evidence: str  # the log line that decided it ("" when none)


@dataclass
class Decision:
    action: str  # retry | stop
    reason: str
    classification: Classification
    settings: dict = field(default_factory=dict)  # the next attempt's settings (retry only)

    @property
    def retry(self) -> bool:
        return self.action == "retry"


def _first_matching_line(lines: list[str], pattern: re.Pattern) -> str | None:
    for line in lines:
        if pattern.search(line):
            return line.strip()[:300]
    return None


def classify(log_text: str, returncode: int | None = None) -> Classification:
    lines = (log_text or "").splitlines()
    line = _first_matching_line(lines, _OOM)
    if line is not None:
        return Classification("oom", line)
    line = _first_matching_line(lines, _HIP)
    if line is not None:
        return Classification("hip_kernel", line)
    line = _first_matching_line(lines, _PEER)
    if line is not None:
        return Classification("peer", line)
    if returncode is not None and returncode < 0:
        return Classification("other", f"killed by signal {-returncode}" + (" (the host OOM killer?)" if returncode == -9 else ""))
    tail = [line.strip() for line in lines if line.strip()]
    return Classification("other", tail[-1][:300] if tail else f"exit status {returncode}")


def _tried_attention(history: list[dict]) -> set[str]:
    return {attempt["settings"]["flash_attn"] for attempt in history if attempt.get("failure") == "hip_kernel"}


def next_attempt(history: list[dict], log_text: str, returncode: int | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Decision:
    """Decide after the last attempt of ``history`` failed (each attempt: ``{"settings": {...}, "failure": ...}``).

    ``settings`` holds flash_attn, packing, neat_packing, per_device_train_batch_size,
    gradient_accumulation_steps and gradient_checkpointing. Pure: no I/O, the inputs are not modified.
    """
    if not history:
        raise ValueError("next_attempt needs the failed attempt in the history")
    found = classify(log_text, returncode)
    current = dict(history[-1]["settings"])
    earlier = history[:-1] + [{**history[-1], "failure": found.kind}]

    if len(history) >= max_attempts:
        return Decision("stop", f"{found.kind}: gave up after {len(history)} attempts ({found.evidence})", found)

    if found.kind == "peer":
        return Decision("stop", f"a peer of this data-parallel job failed or could not be reached ({found.evidence}); not retried "
                        "alone: re-run the play to start every node again from its last checkpoint", found)

    if found.kind == "oom":
        batch, accumulation = current["per_device_train_batch_size"], current["gradient_accumulation_steps"]
        if batch > 1:
            new_batch = batch // 2
            current.update(per_device_train_batch_size=new_batch, gradient_accumulation_steps=accumulation * batch // new_batch)
            return Decision("retry", f"out of memory at batch {batch}: not retried with the same settings; retrying at batch {new_batch} "
                            f"x accumulation {current['gradient_accumulation_steps']} (same effective batch)", found, current)
        if not current["gradient_checkpointing"]:
            current["gradient_checkpointing"] = True
            return Decision("retry", "out of memory at batch 1: not retried with the same settings; retrying with gradient checkpointing", found, current)
        return Decision("stop", "out of memory at batch 1 with gradient checkpointing: not retried with the same settings; "
                        "use 4-bit QLoRA, a smaller model or a shorter cutoff_len, or free GPU memory (a desktop session?)", found)

    if found.kind == "hip_kernel":
        tried = _tried_attention(earlier)
        for backend in ATTENTION_FALLBACKS:
            if backend not in tried and backend != current["flash_attn"] and ATTENTION_FALLBACKS.index(backend) >= _ladder_position(current["flash_attn"]):
                previous = current["flash_attn"]
                current.update(flash_attn=backend, packing=False, neat_packing=False)
                return Decision("retry", f"HIP/kernel failure with flash_attn={previous} ({found.evidence}); retrying with flash_attn={backend}, "
                                "packing off", found, current)
        return Decision("stop", f"HIP/kernel failure with flash_attn={current['flash_attn']} and no attention fallback left ({found.evidence})", found)

    return Decision("stop", f"training failed, not retried ({found.evidence})", found)


def _ladder_position(backend: str) -> int:
    """Fallbacks only go down the ladder auto/fa2 -> sdpa -> disabled."""
    if backend == "disabled":
        return len(ATTENTION_FALLBACKS)
    if backend == "sdpa":
        return 1
    return 0

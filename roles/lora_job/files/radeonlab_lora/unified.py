# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The memory of an integrated GPU: one pool shared by the CPU and the GPU (Strix Halo, Phoenix, Raven ...).

What the GPU may allocate is the pool the KFD reports for it (rocminfo's pool size, the facts' ``vram_kb``): the
larger of the firmware carve-out ("VRAM") and the GTT limit, since the driver serves VRAM allocations from GTT when
GTT is the larger (AMD, "AMD RDNA3.5 system optimization", rocm-docs docs/reference/system-optimization/rdna3-5.rst,
citing torvalds/linux@759e764). A carve-out is taken from the RAM before the OS sees it (``MemTotal``); GTT pages
are the OS's own RAM (GTT defaults to about 50 % of system RAM, same page). So:

- a pool larger than the RAM the OS sees cannot be GTT: it is a carve-out and leaves the OS its RAM;
- any other pool is counted as GTT, shared with the OS (the safe side: a carve-out of that size is counted twice).

The CPU side of a job is the trainer process and the OS. LLaMA-Factory loads the weights straight to the GPU
(``device_map``) through memory-mapped safetensors: while it loads, the mapped weights count in the trainer's RSS, but
as clean page cache that the kernel reclaims under pressure; what it holds for itself stays under about 3 GiB, the peak
of its process tree during the steps, whatever the model size (HOST_TRAINER_GIB, measured). The plan gives the GPU
only what the CPU side leaves, and refuses, before anything changes, a job whose CPU side would not fit the RAM.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB_KIB = 1 << 20
# The trainer's own host memory: the peak RSS of its process tree during the steps (3.09 GiB for 7B, 3.17 for 0.5B), above
# what it holds while loading beside the mapped weights (anonymous 0.58 GiB for 7B; VmHWM 1.0 GiB over the weights).
# LLaMA-Factory 0.9.5 LoRA on an NVIDIA H100, tests/bench/host_rss, 2026-12-07 (docs/performance.md, "Host memory of a
# LoRA job").
HOST_TRAINER_GIB = 3.2
# The OS, the runner and a desktop session: a design value (like the GPU's reserve_gib), not a measurement;
# ``host_reserve_gib`` in the GPU facts overrides it.
DEFAULT_HOST_RESERVE_GIB = 4.0


@dataclass(frozen=True)
class UnifiedMemory:
    pool_kib: int  # what the KFD reports for the GPU
    ram_kib: int | None  # MemTotal: the RAM the OS sees; None = not known
    host_reserve_gib: float = DEFAULT_HOST_RESERVE_GIB

    @property
    def pool_gib(self) -> float:
        return self.pool_kib / GIB_KIB

    @property
    def ram_gib(self) -> float | None:
        return None if self.ram_kib is None else self.ram_kib / GIB_KIB

    @property
    def shared(self) -> bool:
        """True when the pool is (counted as) the OS's RAM: GTT, not a carve-out."""
        return self.ram_kib is None or self.pool_kib <= self.ram_kib

    @property
    def host_need_gib(self) -> float:
        """RAM the CPU side needs: the trainer's own host memory and the host reserve."""
        return HOST_TRAINER_GIB + self.host_reserve_gib

    @property
    def gpu_gib(self) -> float:
        """What the plan may give the GPU: the pool, less the CPU side when the pool is the OS's RAM."""
        if not self.shared:
            return self.pool_gib
        room = (self.ram_gib if self.ram_gib is not None else self.pool_gib) - self.host_need_gib
        return max(0.0, min(self.pool_gib, room))

    @property
    def host_shortfall(self) -> str:
        """Why the CPU side does not fit the RAM ('' when it does, or when the RAM is not known)."""
        if self.ram_gib is None or self.host_need_gib <= self.ram_gib:
            return ""
        text = (f"the CPU side of the job needs {self.host_need_gib:.1f} GiB of RAM (the trainer's {HOST_TRAINER_GIB:.1f} "
                f"GiB and {self.host_reserve_gib:.1f} GiB kept for the OS) but the OS sees {self.ram_gib:.1f} GiB")
        if self.shared:
            return text
        return (f"{text} beside the GPU's {self.pool_gib:.1f} GiB carve-out: a smaller carve-out in the firmware and a "
                "larger GTT limit (ttm pages_limit) give the OS its RAM back")

    def describe(self, gpu_gib: float) -> str:
        kind = "GTT, shared with the OS" if self.shared else "carve-out"
        return f"GPU, unified memory: {gpu_gib:.1f} of {self.pool_gib:.1f} GiB ({kind})"

    def as_dict(self) -> dict:
        return {
            "pool_gib": round(self.pool_gib, 2),
            "ram_gib": None if self.ram_gib is None else round(self.ram_gib, 2),
            "shared": self.shared,
            "host_need_gib": round(self.host_need_gib, 2),
            "gpu_gib": round(self.gpu_gib, 2),
        }

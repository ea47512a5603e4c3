# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark hooks for any Python process that has this folder on PYTHONPATH (the runner's trainer,
``llamafactory-cli train`` run directly, the bare loop). Each hook is off unless its variable is set:

``BENCH_MEM_CAP_GIB=G``   emulate a smaller card: when the process first initialises the GPU,
                          ``torch.cuda.set_per_process_memory_fraction(G / total)`` on every visible
                          device, so torch's caching allocator may reserve at most G GiB (allocations
                          beyond it raise torch.OutOfMemoryError as on a card of that size). Registered
                          with ``torch.cuda._lazy_call``: it runs inside torch's lazy CUDA/HIP init,
                          before the first tensor lands on the device. torch's *reported* total memory
                          is not changed (the runner's device check sees the real card).
``BENCH_SDPA=math``       scaled_dot_product_attention restricted to its math kernel (flash,
                          memory-efficient and cuDNN backends off: what ROCm falls back to where
                          AOTriton has no kernels for the GPU).
``BENCH_TIMER=1``         a TrainerCallback on every transformers Trainer that appends one JSON line to
                          ``BENCH_RESULT_FILE`` (tag ``BENCH_TAG``) at train end: steady step time and
                          tokens/s over the steps after the first ``BENCH_SKIP`` (default 2) and those
                          steps' durations one by one (``step_s``), measured with a device synchronise
                          at each optimizer step end and tokens from
                          ``state.num_input_tokens_seen`` (needs ``include_num_input_tokens_seen``),
                          plus torch's peak allocated/reserved memory and the cap actually applied.
``BENCH_PROFILE=N``       with the timer (and in the bare loop): torch.profiler over optimizer steps N+1 .. N+K (CPU and
                          GPU activity), one JSON line to ``BENCH_PROFILE_FILE``: wall time, the GPU's busy time (sum of
                          kernel self times), and the top operators by device and by CPU time (``profile_line``);
                          K = ``BENCH_PROFILE_STEPS`` (default 2).

Python imports ``sitecustomize`` once at start-up, before any user code; a folder on PYTHONPATH shadows
the distribution's own sitecustomize (Debian/Ubuntu's apport hook), which these processes do not need.
"""

import importlib.abc
import importlib.util
import json
import os
import sys
import time

_CAP = os.environ.get("BENCH_MEM_CAP_GIB")
_SDPA = os.environ.get("BENCH_SDPA")
_TIMER = os.environ.get("BENCH_TIMER") == "1"
APPLIED: dict = {}  # device index -> the cap applied (filled at GPU init)


def result_line(res: dict, kind: str = "RESULT", shown=None) -> None:
    """Print ``BENCH_<kind> {json}`` (``shown`` if given, else ``res``) and append ``res`` as one line to
    ``BENCH_<kind>_FILE`` (the timers' results and the profiles; also used by the bare loop)."""
    line = json.dumps(res, sort_keys=True)
    print("BENCH_%s %s" % (kind, line if shown is None else json.dumps(shown)), flush=True)
    path = os.environ.get("BENCH_%s_FILE" % kind)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def memory_fields(torch) -> dict:
    """torch's peak allocated/reserved memory of this process, the cap applied, the SDPA restriction."""
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return {"device": "cpu", "cap": APPLIED.get(0), "sdpa": _SDPA or "default"}
    return {"device": "gpu",
            "max_alloc_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3),
            "max_reserved_gib": round(torch.cuda.max_memory_reserved() / 2**30, 3),
            "cap": APPLIED.get(0), "sdpa": _SDPA or "default"}


PROFILE_AT = int(os.environ.get("BENCH_PROFILE", "0") or 0)
PROFILE_STEPS = int(os.environ.get("BENCH_PROFILE_STEPS", "2") or 2)


class StepProfiler:
    """torch.profiler over ``PROFILE_STEPS`` optimizer steps, started after step ``PROFILE_AT`` (the Trainer and the bare loop)."""

    def __init__(self, torch, tag: str):
        self.torch, self.tag, self.prof, self.t0 = torch, tag, None, None

    def step_end(self, step: int) -> None:
        """Call at the end of every optimizer step (1-based), after the device synchronise."""
        if not PROFILE_AT:
            return
        if step == PROFILE_AT:
            from torch.profiler import ProfilerActivity, profile  # pylint: disable=import-outside-toplevel
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.torch.cuda.is_available() else [])
            self.prof = profile(activities=acts, record_shapes=False)
            self.prof.__enter__()
            self.t0 = time.perf_counter()
        elif step == PROFILE_AT + PROFILE_STEPS and self.prof is not None:
            wall = time.perf_counter() - self.t0
            self.prof.__exit__(None, None, None)
            profile_line(self.tag, self.prof, wall)
            self.prof = None


def profile_line(tag: str, prof, wall: float) -> None:
    avgs = prof.key_averages()

    def dev(evt):
        return getattr(evt, "self_device_time_total", None) or getattr(evt, "self_cuda_time_total", 0) or 0

    kernels = [e for e in prof.events() if getattr(e, "device_type", None) is not None and str(e.device_type).endswith("CUDA")]
    busy_us = sum(e.time_range.elapsed_us() for e in kernels)  # a kernel event's time range is its interval on the GPU
    rows = [{"name": e.key[:90], "count": e.count, "device_ms": round(dev(e) / 1000, 2), "cpu_ms": round(e.self_cpu_time_total / 1000, 2)}
            for e in avgs]
    res = {"tag": tag, "kind": "profile", "steps": PROFILE_STEPS, "wall_s": round(wall, 4), "device_busy_s": round(busy_us / 1e6, 4),
           "kernel_launches": len(kernels), "cpu_ops": sum(e.count for e in avgs),
           "top_device": sorted(rows, key=lambda r: -r["device_ms"])[:40], "top_cpu": sorted(rows, key=lambda r: -r["cpu_ms"])[:40]}
    result_line(res, "PROFILE", {k: res[k] for k in ("tag", "wall_s", "device_busy_s", "kernel_launches", "cpu_ops")})


def steady(times: list, tokens: list, t0: float, skip: int) -> dict:
    """Steady-state numbers from per-step end times and cumulative tokens (steps after the first ``skip``)."""
    res = {"steps": len(times), "first_step_s": round(times[0] - t0, 3) if times else None, "skip": skip}
    if len(times) > skip + 1:
        n = len(times) - 1 - skip
        dt = times[-1] - times[skip]
        dtok = (tokens[-1] or 0) - (tokens[skip] or 0)
        res.update(steady_step_s=round(dt / n, 4), tokens_per_step=dtok / n,
                   steady_tokens_per_s=round(dtok / dt, 1) if dtok else None,
                   step_s=[round(b - a, 4) for a, b in zip(times[skip:-1], times[skip + 1:])])  # the steady steps, one by one
    if times and tokens and tokens[-1]:
        res["all_steps_tokens_per_s"] = round(tokens[-1] / (times[-1] - t0), 1)
    return res


def _apply_cap(torch) -> None:
    cap = float(_CAP) * (1 << 30)
    for index in range(torch.cuda.device_count()):
        total = torch.cuda.get_device_properties(index).total_memory
        fraction = min(1.0, cap / total)
        torch.cuda.set_per_process_memory_fraction(float(fraction), index)
        APPLIED[index] = {"cap_gib": round(cap / (1 << 30), 3), "total_gib": round(total / (1 << 30), 3), "fraction": round(fraction, 5)}


def _after_torch(torch) -> None:
    if _CAP:
        lazy_call = getattr(torch.cuda, "_lazy_call", None)  # torch's queue of calls run at GPU init (CUDA and ROCm builds)
        if lazy_call is None:
            print("sitecustomize: torch.cuda._lazy_call missing: BENCH_MEM_CAP_GIB NOT applied", file=sys.stderr)
        else:
            lazy_call(lambda: _apply_cap(torch))
    if _SDPA == "math":
        torch.backends.cuda.enable_flash_sdp(False)
        torch.backends.cuda.enable_mem_efficient_sdp(False)
        if hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
            torch.backends.cuda.enable_cudnn_sdp(False)
        torch.backends.cuda.enable_math_sdp(True)


def _patch_trainer(mod) -> None:
    import torch  # pylint: disable=import-outside-toplevel
    from transformers import TrainerCallback  # pylint: disable=import-outside-toplevel

    class _BenchTimer(TrainerCallback):
        def __init__(self):
            self.times, self.tokens, self.losses, self.t0 = [], [], [], None
            self.profiler = StepProfiler(torch, os.environ.get("BENCH_TAG", ""))

        def on_train_begin(self, args, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
            self.times.append(time.perf_counter())
            self.tokens.append(state.num_input_tokens_seen)
            self.profiler.step_end(len(self.times))

        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                self.losses.append(float(logs["loss"]))

        def on_train_end(self, args, state, control, **kw):
            model = kw.get("model")
            res = {"tag": os.environ.get("BENCH_TAG", ""), "kind": "trainer",
                   "batch": args.per_device_train_batch_size, "accumulation": args.gradient_accumulation_steps,
                   "gradient_checkpointing": bool(getattr(model, "is_gradient_checkpointing", False)),
                   "attn_implementation": getattr(getattr(model, "config", None), "_attn_implementation", None),
                   "first_loss": self.losses[0] if self.losses else None, "last_loss": self.losses[-1] if self.losses else None}
            res.update(steady(self.times, self.tokens, self.t0, int(os.environ.get("BENCH_SKIP", "2"))))
            res.update(memory_fields(torch))
            result_line(res)

    orig_init = mod.Trainer.__init__

    def __init__(self, *a, **k):
        orig_init(self, *a, **k)
        self.add_callback(_BenchTimer())

    mod.Trainer.__init__ = __init__


class _PostImport(importlib.abc.MetaPathFinder):
    """Run a hook right after a module's own code ran (the module is complete then)."""

    def __init__(self, hooks: dict):
        self.hooks = dict(hooks)

    def find_spec(self, name, path, target=None):
        if name not in self.hooks:
            return None
        hook = self.hooks.pop(name)
        sys.meta_path.remove(self)  # let the real finders answer
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.hooks:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        orig_exec = spec.loader.exec_module

        def exec_module(module):
            orig_exec(module)
            hook(module)

        spec.loader.exec_module = exec_module
        return spec


_HOOKS = {}
if _CAP or _SDPA:
    _HOOKS["torch"] = _after_torch
if _TIMER:
    _HOOKS["transformers.trainer"] = _patch_trainer
if _HOOKS:
    sys.meta_path.insert(0, _PostImport(_HOOKS))

# Copied verbatim from ../shared/reference/gpu_lab/sitecustomize.py (the GPU lab's tested helper, 2026-12-01).
# Spike instrumentation, active only when SPIKE_TIMER=1 (put this folder on PYTHONPATH).
# Adds a TrainerCallback to every transformers Trainer (hence to llamafactory-cli train) that
# prints one line "SPIKE_RESULT {json}" at train end: steady-state step time and tokens/s
# (steps after the first SPIKE_SKIP, default 3; tokens from state.num_input_tokens_seen, so set
# include_num_input_tokens_seen: true), and torch.cuda peak allocated/reserved memory.
import os

if os.environ.get("SPIKE_TIMER") == "1":
    import importlib.abc
    import importlib.util
    import json
    import sys
    import time

    def _patch_trainer(mod):
        import torch
        from transformers import TrainerCallback

        class _SpikeTimer(TrainerCallback):
            def __init__(self):
                self.t, self.tok = [], []

            def on_train_begin(self, args, state, control, **kw):
                self.t0 = time.perf_counter()

            def on_step_end(self, args, state, control, **kw):
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                self.t.append(time.perf_counter())
                self.tok.append(state.num_input_tokens_seen)

            def on_train_end(self, args, state, control, **kw):
                skip = int(os.environ.get("SPIKE_SKIP", "3"))
                res = {"tag": os.environ.get("SPIKE_TAG", ""), "steps": len(self.t),
                       "first_step_s": (self.t[0] - self.t0) if self.t else None,
                       "gradient_checkpointing": bool(getattr(kw.get("model"), "is_gradient_checkpointing", False))}
                if len(self.t) > skip + 1:
                    n = len(self.t) - 1 - skip
                    dt = self.t[-1] - self.t[skip]
                    dtok = (self.tok[-1] or 0) - (self.tok[skip] or 0)
                    res.update(steady_step_s=round(dt / n, 4), tokens_per_step=dtok / n,
                               steady_tokens_per_s=round(dtok / dt, 1) if dtok else None)
                if torch.cuda.is_available():
                    res["max_mem_alloc_GiB"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
                    res["max_mem_reserved_GiB"] = round(torch.cuda.max_memory_reserved() / 2**30, 2)
                line = "SPIKE_RESULT " + json.dumps(res)
                print(line, flush=True)
                p = os.environ.get("SPIKE_RESULT_FILE")
                if p:
                    with open(p, "a") as f:
                        f.write(line + "\n")

        orig_init = mod.Trainer.__init__

        def __init__(self, *a, **k):
            orig_init(self, *a, **k)
            self.add_callback(_SpikeTimer())

        mod.Trainer.__init__ = __init__

    class _PostImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "transformers.trainer":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            orig_exec = spec.loader.exec_module

            def exec_module(module):
                orig_exec(module)
                _patch_trainer(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _PostImport())

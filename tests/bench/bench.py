# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The LoRA job benchmark: the runner's own path (``check`` then ``run``) on a GPU, plan against measured peak,
and the job's throughput against LLaMA-Factory run directly and against a bare transformers + PEFT loop.

Runs unchanged on the lent NVIDIA H200 and on a Radeon card (ROCm torch has the same ``torch.cuda`` API).
Every phase appends one JSON object to ``OUT/bench.jsonl`` as soon as it finishes, so a run cut short still
leaves its data; phases that would not finish inside ``--budget-s`` are recorded as skipped.

Emulating a smaller card (``--cards NAME=GIB``, GIB = the card's VRAM as rocminfo reports it, in GiB):
the GPU facts describe the *real* card (its VRAM as torch reports it, so the runner's device check is
honest and passes) with ``reserve_gib = real - GIB + reserve``, so the plan gets exactly what it would get
on the emulated card (``estimate * 1.10 <= GIB - reserve``), and the trainer's torch allocator is capped
at ``GIB - reserve`` (``BENCH_MEM_CAP_GIB`` via tests/bench/site/sitecustomize.py, which calls
``torch.cuda.set_per_process_memory_fraction``): what is left of the emulated card once its runtime reserve
(HIP context, library workspaces, a desktop) is gone. ``full`` = the real card, uncapped, default reserve.

Phases (one per line in a plan file, ``#`` comments; or ``--phase`` repeated):
    env                                   versions, GPU, date; whether the image's own transformers accepts warmup_ratio
    probe                                 the llamafactory role's bitsandbytes probe (a 4-bit matmul on every visible GPU);
                                          its ``ok`` becomes the facts' ``bitsandbytes_ok`` for the phases after it (never
                                          assumed: without this phase the facts say false and the plan cannot pick QLoRA)
    assets:SHAPE                          data + tokenizer (once) and a random-weight model (tiny | 0.5b | 1.5b | 7b | 14b)
    job:SHAPE:SEQ:CARD[:SUFFIX]           python -m radeonlab_lora check, then run when the plan accepts (SUFFIX: a repeat
                                          with its own output_dir; a SUFFIX starting with ``math``: SDPA restricted to
                                          its math kernel in the trainer and ``MATH_KERNEL_SPEC`` in the job spec;
                                          ``lean`` / ``nocount`` (alone or ``lean-b``): ``TRAINER_VARIANTS``)
    check:SHAPE:SEQ:CARD                  the check only
    direct:SHAPE:SEQ:CARD[:SUFFIX]        llamafactory-cli train on that job's rendered YAML (attempt-1.yaml after the job
                                          ran, else radeonlab_lora render's train.yaml), same cap
    bare:SHAPE:SEQ:CARD[:SUFFIX]          bare_lora.py with that job's planned batch/accumulation/checkpointing (a SUFFIX
                                          starting with ``mask``: an all-ones attention_mask passed, as the trainer's collator does)
    lf:SHAPE:SEQ:CARD:B:A:CKPT:ATTN[:STEPS]  llamafactory-cli train on the job's YAML for the full card (rendered
                                          if need be) with batch B, accumulation A, checkpointing CKPT (0/1),
                                          attention ATTN (sdpa | eager | math = sdpa restricted to its math kernel;
                                          ATTN+q4: the same as 4-bit QLoRA, NF4 with double quantisation, as the
                                          runner renders it; ATTN+q4p: and the paged optimiser paged_adamw_32bit)

A plan line may end with ``~SECONDS`` after the phase (``direct:7b:2048:24G ~95``): what the phase is expected to
take, for the budget check, where the default guess (``EST_S``, sized for 10-step runs) is wrong (longer runs).

    python tests/bench/bench.py --out OUT --plan tests/bench/plans/h200_call1.txt --device-name "NVIDIA H200"
    python tests/bench/bench.py --out OUT --device cpu --phase env --phase assets:tiny --phase job:tiny:128:full
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUNNER_HOME = os.path.join(REPO, "roles", "lora_job", "files")
SITE = os.path.join(HERE, "site")
GIB_KIB = 1 << 20
# A job whose SDPA runs its math kernel (a ``job:…:math`` phase): the spec field the llamafactory role's attention
# fact feeds the runner, so that the plan sizes the seq² scores the math kernel keeps.
MATH_KERNEL_SPEC = {"sdpa_kernel": "math"}
# What a ``job:…:lean`` / ``job:…:nocount`` phase turns off in the Trainer, to find where the job's time goes against the
# bare loop (which neither counts tokens per micro-batch nor clips gradients). Their timer sees no tokens: compare their
# steady_step_s (every bench row is longer than cutoff_len, so a step is batch x accumulation x seq tokens).
TRAINER_VARIANTS = {"lean": {"include_num_input_tokens_seen": False, "max_grad_norm": 0.0},
                    "nocount": {"include_num_input_tokens_seen": False}}

# rocminfo's pool size of the cards the emulation is named after (KiB / 2^20 = GiB)
# RX 6600, RX 6700 XT (shared corpus rocminfo 04: 12 566 528 KB), RX 6800 XT, RX 7900 XTX
CARDS = {"8G": 8372224 / GIB_KIB, "12G": 12566528 / GIB_KIB, "16G": 16760832 / GIB_KIB, "24G": 25149440 / GIB_KIB}
PROBE = os.path.join(REPO, "roles", "llamafactory", "files", "kernel_probe.py")
EST_S = {"env": 20, "probe": 25, "assets": 15, "assets:7b": 40, "assets:0.5b": 20, "job:7b": 55, "job": 30, "check": 12,
         "direct:7b": 45, "direct": 25, "bare:7b": 35, "bare": 20, "lf:7b": 35, "lf": 22,
         "assets:14b": 100, "job:14b": 170}


VERSIONS_PROBE = """
import importlib.metadata as m
import json
import torch
def version(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return None
d = {p: version(p) for p in ("torch", "transformers", "peft", "accelerate", "datasets", "trl", "tokenizers", "llamafactory",
                             "huggingface_hub", "safetensors", "bitsandbytes")}
d.update(torch_cuda=torch.version.cuda, torch_hip=getattr(torch.version, "hip", None), cuda_available=torch.cuda.is_available())
n = torch.cuda.device_count() if torch.cuda.is_available() else 0
d["devices"] = [[torch.cuda.get_device_name(i), torch.cuda.get_device_properties(i).total_memory // 1024] for i in range(n)]
print(json.dumps(d))
"""


class Bench:
    def __init__(self, args):
        self.a = args
        self.t0 = time.monotonic()
        self.out = os.path.abspath(args.out)
        self.side = os.path.abspath(args.side_dir or args.out)  # logs/, status/, yaml/ (run_device.sh tars them)
        self.work = os.path.abspath(args.work)
        for sub in ("logs", "status", "yaml"):
            os.makedirs(os.path.join(self.side, sub), exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.jsonl = os.path.join(self.out, "bench.jsonl")
        self.results = os.path.join(self.out, "bench_results.jsonl")  # BENCH_RESULT lines of the timers
        self.real_kib = None
        self.bitsandbytes = None  # the probe's result (phase probe); None: not probed, bitsandbytes_ok false
        self.jobs: dict = {}  # job key -> summary (plan, run dir)
        self.rendered: dict = {}  # job key -> train.yaml that radeonlab_lora render wrote in this bench run
        self.need = None  # the ~SECONDS of the phase being run (None: EST_S)
        self.env = dict(os.environ)
        paths = [SITE, RUNNER_HOME] + [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.env.update(PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)), PYTHONUNBUFFERED="1", BENCH_TIMER="1",
                        BENCH_RESULT_FILE=self.results, BENCH_SKIP=str(args.skip))
        for name in ("BENCH_MEM_CAP_GIB", "BENCH_SDPA", "BENCH_TAG"):
            self.env.pop(name, None)

    # ------------------------------------------------------------------ plumbing
    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.a.budget_s - self.elapsed()

    def record(self, row: dict) -> dict:
        row = {"t_s": round(self.elapsed(), 1), "device_name": self.a.device_name, **row}
        with open(self.jsonl, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
        print("ROW " + json.dumps(row, sort_keys=True)[:600], flush=True)
        return row

    def sh(self, argv: list, tag: str, env: dict | None = None, limit: float = 300) -> dict:
        """Run argv (own process group) with a GPU memory poller; stdout+stderr to logs/TAG.log."""
        timeout = max(5.0, min(limit, self.left() - 3))
        log_path = os.path.join(self.side, "logs", f"{tag}.log")
        poll = SmiPoller() if self.a.device != "cpu" else None
        started = time.monotonic()
        with open(log_path, "ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env or self.env, cwd=REPO, start_new_session=True)
            timed_out = False
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    rc = proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    rc = proc.wait()
        wall = round(time.monotonic() - started, 1)
        return {"rc": rc, "timed_out": timed_out, "wall_s": wall, "smi_peak_mib": poll.stop() if poll else None, "log": f"logs/{tag}.log"}

    def timer_result(self, tag: str) -> dict | None:
        found = None
        if os.path.exists(self.results):
            with open(self.results, encoding="utf-8") as handle:
                for line in handle:
                    try:
                        data = json.loads(line)
                    except ValueError:
                        continue
                    if data.get("tag") == tag:
                        found = data
        return found

    def log_tail(self, path: str, lines: int = 6) -> list:
        try:
            with open(path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 20000))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return []
        keep = [line for line in text.splitlines() if line.strip() and "it/s]" not in line and "s/it]" not in line]
        return [line[-300:] for line in keep[-lines:]]

    def skip(self, phase: str, need: float) -> bool:
        if self.left() < need:
            self.record({"phase": phase, "kind": "skipped", "reason": f"{self.left():.0f}s left of the budget, needs ~{need:.0f}s"})
            return True
        return False

    # ------------------------------------------------------------------ facts, jobs
    def card(self, name: str) -> tuple:
        """(emulated card GiB or None for the real card, trainer cap GiB or None)."""
        if name == "full":
            return None, None
        gib = float(self.a.cards.get(name, CARDS.get(name, 0)) or name.rstrip("G"))
        return gib, round(gib - self.a.reserve, 4)

    def facts(self, card: str) -> dict:
        ram_kb = meminfo_kib()
        if self.a.device == "cpu":
            return {"gpus": [], "ram_kb": ram_kb}
        real_gib = self.real_kib / GIB_KIB
        emulated = self.card(card)[0]
        reserve = self.a.reserve if emulated is None else round(real_gib - emulated + self.a.reserve, 4)
        label = self.a.device_name + ("" if emulated is None else f" capped to emulate a {emulated:.2f} GiB card ({card})")
        probe = self.bitsandbytes or {}
        return {"gpus": [{"name": self.a.gfx, "marketing_name": label, "vram_kb": self.real_kib, "index": 0, "node": 1}],
                "ram_kb": ram_kb, "reserve_gib": reserve, "bitsandbytes_ok": bool(probe.get("ok")),
                "bitsandbytes": {k: probe.get(k) for k in ("ok", "reason", "version")} if probe else {}}

    def job_paths(self, shape: str, seq: int, card: str, suffix: str = "") -> tuple:
        tag = f"{shape}-s{seq}-{card}" + (f"-{suffix}" if suffix else "")
        base = os.path.join(self.work, "jobs", tag)
        return tag, base, os.path.join(base + ".job.json"), os.path.join(base + ".gpu.json")

    def write_job(self, shape: str, seq: int, card: str, suffix: str = "") -> tuple:
        tag, base, job_path, facts_path = self.job_paths(shape, seq, card, suffix)
        cap = self.card(card)[1]
        shutil.rmtree(base, ignore_errors=True)  # scratch of an earlier bench run: it would be "already done"
        env = {"BENCH_TAG": f"job-{tag}"}
        if cap:
            env["BENCH_MEM_CAP_GIB"] = str(cap)
        math_kernel = suffix.startswith("math")
        if math_kernel:  # what a Radeon target without AOTriton kernels runs: the trainer and the plan both know it
            env["BENCH_SDPA"] = "math"
        steps = self.steps(shape)
        job = {"name": tag, "model": os.path.join(self.work, f"qwen2-{shape}"), "template": "qwen",
               "dataset": {"name": "bench_alpaca", "file": os.path.join(self.work, "data", "bench_alpaca.json")},
               "output_dir": base, "cutoff_len": seq, "attention": self.a.attention, "allow_qlora": not self.a.no_qlora,
               "device": "cpu" if self.a.device == "cpu" else "gpu", "effective_batch_size": self.a.eff_batch,
               "max_samples": max(16, steps * self.a.eff_batch), "logging_steps": 1, "save_steps": 100000,
               "extra_args": {"max_steps": steps, "include_num_input_tokens_seen": True, **TRAINER_VARIANTS.get(suffix.split("-")[0], {})},
               "env": env}
        if math_kernel:
            job.update(MATH_KERNEL_SPEC)
        os.makedirs(os.path.dirname(base), exist_ok=True)
        with open(job_path, "w", encoding="utf-8") as handle:
            json.dump(job, handle, indent=2)
        with open(facts_path, "w", encoding="utf-8") as handle:
            json.dump(self.facts(card), handle, indent=2)
        for path in (job_path, facts_path):
            shutil.copy(path, os.path.join(self.side, "yaml", os.path.basename(path)))
        return tag, base, job_path, facts_path

    def steps(self, shape: str) -> int:
        return self.a.steps_7b if shape in ("7b", "14b") else self.a.steps

    def runner(self, *args) -> list:
        return [sys.executable, "-m", "radeonlab_lora", *args]

    # ------------------------------------------------------------------ phases
    def phase_env(self, phase: str) -> None:
        info: dict = {"date_utc": run_text(["date", "-u", "+%Y-%m-%dT%H:%M:%SZ"]), "date": run_text(["date"]),
                      "python": sys.version.split()[0], "executable": sys.executable}
        if shutil.which("nvidia-smi"):
            info["nvidia_smi"] = run_text(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm,pci.bus_id",
                                           "--format=csv,noheader"])
        if shutil.which("rocminfo"):
            lines = run_text(["rocminfo"]).splitlines()
            info["rocminfo"] = [line.strip() for line in lines if "Marketing Name" in line or line.strip().startswith("Name:")][:8]
        code = VERSIONS_PROBE
        done = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True, text=True, timeout=120, check=False)
        try:
            info["versions"] = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            info["versions_error"] = done.stderr[-800:]
        devices = (info.get("versions") or {}).get("devices") or []
        if self.a.vram_kib:
            self.real_kib = int(self.a.vram_kib)
        elif devices:
            self.real_kib = int(devices[0][1])
        info["facts_vram_kib"] = self.real_kib
        if self.a.device != "cpu" and not self.real_kib:
            info["error"] = "no GPU seen by torch and no --vram-kib: GPU phases will fail"
        # the image's own stack (without the carried wheels): does its transformers take the runner's warmup_ratio?
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        probe = ("import transformers;from transformers import TrainingArguments;"
                 "TrainingArguments(output_dir='/tmp/bench-wr',warmup_ratio=0.1);print('warmup_ratio ok', transformers.__version__)")
        done = subprocess.run([sys.executable, "-c", probe], env=base_env, capture_output=True, text=True, timeout=120, check=False)
        info["image_transformers_warmup_ratio"] = {"rc": done.returncode, "tail": (done.stdout + done.stderr).strip().splitlines()[-1:]}
        self.record({"phase": phase, "kind": "env", **info})

    def phase_probe(self, phase: str) -> None:
        res = self.sh([sys.executable, PROBE, "bitsandbytes"], "probe", limit=180)
        self.bitsandbytes = parse_last_json(os.path.join(self.side, res["log"])) or {"ok": False, "reason": f"the probe printed no JSON (rc {res['rc']})"}
        self.record({"phase": phase, "kind": "probe", **res, "bitsandbytes": self.bitsandbytes})

    def phase_assets(self, phase: str, shape: str) -> None:
        argv = [sys.executable, os.path.join(HERE, "make_assets.py"), "--out", self.work, "--shape", shape, "--device", self.a.assets_device or self.a.device]
        res = self.sh(argv, phase.replace(":", "_"), limit=240)
        self.record({"phase": phase, "kind": "assets", "shape": shape, **res, "tail": self.log_tail(os.path.join(self.side, res["log"]), 3)})

    def phase_check(self, phase: str, shape: str, seq: int, card: str, suffix: str = "") -> None:
        self.phase_job(phase, shape, seq, card, suffix, run=False)

    def phase_job(self, phase: str, shape: str, seq: int, card: str, suffix: str = "", run: bool = True) -> None:
        tag, base, job_path, facts_path = self.write_job(shape, seq, card, suffix)
        emulated, cap = self.card(card)
        row = {"phase": phase, "kind": "job", "shape": shape, "seq": seq, "card": card, "card_gib": emulated, "cap_gib": cap, "tag": tag}
        res = self.sh(self.runner("check", "--job", job_path, "--gpu-facts", facts_path), f"check_{tag}", limit=120)
        check = parse_json(os.path.join(self.side, res["log"]))
        row["check"] = {"rc": res["rc"], "wall_s": res["wall_s"], "refused": (check or {}).get("refused"), "refusal": (check or {}).get("refusal"),
                        "device_ok": ((check or {}).get("device") or {}).get("ok"), "device_reason": ((check or {}).get("device") or {}).get("reason"),
                        "message": (check or {}).get("message")}
        plan = (check or {}).get("plan") or {}
        row["plan"] = plan_summary(plan)
        if res["rc"] != 0 or not check or check.get("refused") or not run:
            self.jobs[tag] = {"plan": plan, "ran": False}
            row["kind"] = "job" if run else "check"
            self.record(row)
            return
        if self.skip(phase + " (run)", max(EST_S.get(f"job:{shape}", EST_S["job"]), (self.need or 0) - res["wall_s"])):
            self.record(row)
            return
        res = self.sh(self.runner("run", "--job", job_path, "--gpu-facts", facts_path), f"run_{tag}", limit=self.a.phase_limit_s)
        status = read_json(os.path.join(base, "status.json")) or {}
        run_dir = status.get("run_dir")
        if run_dir:
            for name in ("status.json", "attempt-1.yaml", "plan.json"):
                src = os.path.join(run_dir, name)
                if os.path.exists(src):
                    shutil.copy(src, os.path.join(self.side, "status" if name != "attempt-1.yaml" else "yaml", f"{tag}.{name}"))
            train_log = os.path.join(run_dir, "train.log")
            if os.path.exists(train_log):
                shutil.copy(train_log, os.path.join(self.side, "logs", f"train_{tag}.log"))
        self.jobs[tag] = {"plan": status.get("plan") or plan, "ran": True, "run_dir": run_dir, "state": status.get("state")}
        row.update(run={**res, "state": status.get("state"), "message": status.get("message")},
                   attempts=[{k: a.get(k) for k in ("number", "outcome", "failure", "evidence", "peak_memory", "duration_s", "settings")}
                             for a in status.get("attempts") or []],
                   plan=plan_summary(status.get("plan") or plan), peak_memory=status.get("peak_memory"),
                   tokens_per_second=status.get("tokens_per_second"), tokens_per_second_basis=status.get("tokens_per_second_basis"),
                   duration_s=status.get("duration_s"), first_loss=status.get("first_loss"), final_loss=status.get("final_loss"),
                   global_step=status.get("global_step"), device=(status.get("device") or {}).get("reason"),
                   timer=self.timer_result(f"job-{tag}"))
        if status.get("state") != "succeeded":
            row["train_log_tail"] = self.log_tail(os.path.join(run_dir or base, "train.log"), 12)
        self.record(row)

    def yaml_for(self, shape: str, seq: int, card: str, suffix: str = "") -> str | None:
        """The job's rendered attempt-1.yaml (after a run), else a fresh ``render`` of the same job for that card."""
        tag, base, job_path, facts_path = self.job_paths(shape, seq, card, suffix)
        run_dir = (self.jobs.get(tag) or {}).get("run_dir")
        if run_dir and os.path.exists(os.path.join(run_dir, "attempt-1.yaml")):
            return os.path.join(run_dir, "attempt-1.yaml")
        if self.rendered.get(tag):
            return self.rendered[tag]
        if not os.path.exists(job_path):
            self.write_job(shape, seq, card, suffix)
        out = os.path.join(self.work, "render", tag)
        res = self.sh(self.runner("render", "--job", job_path, "--gpu-facts", facts_path, "--out", out), f"render_{tag}", limit=120)
        path = os.path.join(out, "train.yaml")
        if res["rc"] == 0 and os.path.exists(path):
            self.rendered[tag] = path
            return path
        return None

    def lf_run(self, phase: str, tag: str, yaml_path: str, overrides: dict, cap, sdpa: str | None = None) -> dict:
        env = dict(self.env, BENCH_TAG=tag)
        if cap:
            env["BENCH_MEM_CAP_GIB"] = str(cap)
        if sdpa:
            env["BENCH_SDPA"] = sdpa
        cli = shutil.which("llamafactory-cli", path=env.get("PATH")) or "llamafactory-cli"
        outdir = os.path.join(self.work, "direct", tag)
        shutil.rmtree(outdir, ignore_errors=True)  # LLaMA-Factory resumes from a checkpoint it finds there
        argv = [cli, "train", yaml_path, f"output_dir={outdir}", *[f"{k}={v}" for k, v in overrides.items()]]
        res = self.sh(argv, tag, env=env, limit=self.a.phase_limit_s)
        results = read_json(os.path.join(outdir, "all_results.json")) or {}
        out = {**res, "timer": self.timer_result(tag), "train_runtime": results.get("train_runtime"),
               "num_input_tokens_seen": results.get("num_input_tokens_seen")}
        if res["rc"] != 0:
            out["tail"] = self.log_tail(os.path.join(self.side, res["log"]), 8)
        return out

    def phase_direct(self, phase: str, shape: str, seq: int, card: str, suffix: str = "") -> None:
        """LLaMA-Factory on the job's own rendered YAML: attempt-1.yaml after a run, else ``render``'s train.yaml."""
        tag = self.job_paths(shape, seq, card, suffix)[0]
        cap = self.card(card)[1]
        yaml_path = self.yaml_for(shape, seq, card, suffix)
        job = self.jobs.get(tag) or {}
        plan = job.get("plan") or read_json(os.path.join(os.path.dirname(yaml_path or ""), "plan.json")) or {}
        row = {"phase": phase, "kind": "direct", "shape": shape, "seq": seq, "card": card, "cap_gib": cap, "plan": plan_summary(plan),
               "yaml": "attempt-1.yaml of the job's run" if job.get("run_dir") else "train.yaml of radeonlab_lora render"}
        if not yaml_path:
            self.record({**row, "error": "no rendered YAML (the plan refused, or render failed)"})
            return
        shutil.copy(yaml_path, os.path.join(self.side, "yaml", f"direct-{tag}.yaml"))
        self.record({**row, **self.lf_run(phase, f"direct-{tag}", yaml_path, {}, cap)})

    def phase_bare(self, phase: str, shape: str, seq: int, card: str, suffix: str = "") -> None:
        tag = self.job_paths(shape, seq, card, suffix)[0]
        plan = (self.jobs.get(tag) or {}).get("plan") or {}
        if not plan:  # the job did not run in this call: the plan radeonlab_lora render made for it
            yaml_path = self.yaml_for(shape, seq, card, suffix)
            plan = read_json(os.path.join(os.path.dirname(yaml_path), "plan.json")) if yaml_path else {}
        cap = self.card(card)[1]
        row = {"phase": phase, "kind": "bare", "shape": shape, "seq": seq, "card": card, "cap_gib": cap, "plan": plan_summary(plan)}
        if plan.get("decision") != "train":
            self.record({**row, "error": "no accepted plan for this job"})
            return
        env = dict(self.env, BENCH_TAG=f"bare-{tag}")
        if cap:
            env["BENCH_MEM_CAP_GIB"] = str(cap)
        argv = [sys.executable, os.path.join(HERE, "bare_lora.py"), "--model", os.path.join(self.work, f"qwen2-{shape}"), "--seq", str(seq),
                "--batch", str(plan["per_device_train_batch_size"]), "--accum", str(plan["gradient_accumulation_steps"]),
                "--steps", str(self.steps(shape)), "--skip", str(self.a.skip), "--attn", "eager" if self.a.attention in ("auto", "disabled") else "sdpa",
                "--device", "cpu" if self.a.device == "cpu" else "cuda"] + (["--ckpt"] if plan.get("gradient_checkpointing") else [])
        if suffix.startswith("mask"):
            argv.append("--mask")
        res = self.sh(argv, f"bare-{tag}", env=env, limit=self.a.phase_limit_s)
        out = {**res, "timer": self.timer_result(f"bare-{tag}")}
        if res["rc"] != 0:
            out["tail"] = self.log_tail(os.path.join(self.side, res["log"]), 8)
        self.record({**row, **out})

    def phase_lf(self, phase: str, shape: str, seq: int, card: str, batch: int, accum: int, ckpt: bool, attn: str, steps: int | None) -> None:
        cap = self.card(card)[1]
        attn, quant = (attn.split("+", 1) + [""])[:2]
        tag = f"lf-{shape}-s{seq}-{card}-b{batch}x{accum}-{'ckpt' if ckpt else 'nockpt'}-{attn}" + (f"-{quant}" if quant else "")
        row = {"phase": phase, "kind": "lf", "shape": shape, "seq": seq, "card": card, "cap_gib": cap, "batch": batch, "accumulation": accum,
               "gradient_checkpointing": ckpt, "attention": attn, "tag": tag}
        yaml_path = self.yaml_for(shape, seq, "full")
        if not yaml_path:
            self.record({**row, "error": "could not render the job's YAML"})
            return
        overrides = {"per_device_train_batch_size": batch, "gradient_accumulation_steps": accum,
                     "disable_gradient_checkpointing": str(not ckpt).lower(), "flash_attn": "disabled" if attn == "eager" else "sdpa",
                     "max_steps": steps or self.steps(shape), "max_samples": max(16, (steps or self.steps(shape)) * batch * accum)}
        if quant in ("q4", "q4p"):
            overrides.update(quantization_bit=4, quantization_method="bnb", quantization_type="nf4", double_quantization="true")
        if quant == "q4p":
            overrides["optim"] = "paged_adamw_32bit"
        row["quantization"] = quant or None
        self.record({**row, **self.lf_run(phase, tag, yaml_path, overrides, cap, sdpa="math" if attn == "math" else None)})

    # ------------------------------------------------------------------ driver
    def run(self, phases: list) -> None:
        for line in phases:
            words = line.split()
            phase = words[0]
            self.need = next((float(word[1:]) for word in words[1:] if word.startswith("~")), None)
            parts = phase.split(":")
            kind = parts[0]
            try:
                if kind in ("env", "probe"):
                    if not self.skip(phase, self.need or EST_S[kind]):
                        getattr(self, f"phase_{kind}")(phase)
                    continue
                shape = parts[1]
                need = self.need or EST_S.get(f"{kind}:{shape}", EST_S.get(kind, 30))
                if self.real_kib is None and self.a.device != "cpu" and kind != "assets":
                    self.real_kib = int(self.a.vram_kib or 0) or None
                if self.skip(phase, need):
                    continue
                if kind == "assets":
                    self.phase_assets(phase, shape)
                elif kind in ("job", "check", "direct", "bare"):
                    getattr(self, f"phase_{kind}")(phase, shape, int(parts[2]), parts[3], parts[4] if len(parts) > 4 else "")
                elif kind == "lf":
                    self.phase_lf(phase, shape, int(parts[2]), parts[3], int(parts[4]), int(parts[5]), parts[6] == "1", parts[7],
                                  int(parts[8]) if len(parts) > 8 else None)
                elif hasattr(self, f"phase_{kind}"):  # a subclass's KIND:SHAPE:SEQ:CARD phase (tests/bench/after/stages.py)
                    getattr(self, f"phase_{kind}")(phase, shape, int(parts[2]), parts[3])
                else:
                    self.record({"phase": phase, "kind": "error", "error": f"unknown phase kind {kind!r}"})
            except Exception as exc:  # pylint: disable=broad-except
                self.record({"phase": phase, "kind": "error", "error": f"{type(exc).__name__}: {exc}"})
        self.record({"phase": "end", "kind": "end", "elapsed_s": round(self.elapsed(), 1)})


class SmiPoller:
    """Peak ``nvidia-smi`` memory.used (MiB) while a phase runs; None where there is no nvidia-smi."""

    def __init__(self):
        self.proc = None
        if shutil.which("nvidia-smi"):
            self.file = tempfile.TemporaryFile()
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-lms", "250"],
                                         stdout=self.file, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.proc is None:
            return None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.file.seek(0)
        values = [int(v) for v in self.file.read().decode().split() if v.strip().isdigit()]
        return max(values) if values else None


def run_text(argv: list) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {exc}"


def meminfo_kib() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def read_json(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def parse_json(log_path: str):
    """The JSON object a runner command printed (the log starts with the '$ argv' line)."""
    try:
        with open(log_path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    start = text.find("\n{")
    if start < 0:
        return None
    depth = 0
    for end in range(start + 1, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            try:
                return json.loads(text[start + 1:end + 1])
            except ValueError:
                return None
    return None


def parse_last_json(log_path: str):
    """The JSON object on the last line of a log that starts with the '$ argv' line (the probe's output)."""
    try:
        with open(log_path, encoding="utf-8") as handle:
            lines = [line for line in handle.read().splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


def plan_summary(plan: dict) -> dict:
    est = plan.get("estimate_gib") or {}
    return {k: plan.get(k) for k in ("decision", "precision", "per_device_train_batch_size", "gradient_accumulation_steps", "gradient_checkpointing",
                                     "double_quantization", "paged_optimizer", "vram_gib", "available_gib", "needed_gib", "model_params_b")} | {
        "estimate_total_gib": est.get("total"), "estimate": est or None, "alternatives": plan.get("alternatives") or None,
        "message": (plan.get("message") or "")[:400]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/bench", help="models, data, job output (scratch)")
    ap.add_argument("--side-dir", help="where logs/, status/ and yaml/ go (default: --out)")
    ap.add_argument("--plan", help="file with one phase per line")
    ap.add_argument("--phase", action="append", default=[])
    ap.add_argument("--budget-s", type=float, default=520, help="start no phase that would end after this many seconds")
    ap.add_argument("--phase-limit-s", type=float, default=240, help="kill a single training phase after this long")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cuda = the GPU (ROCm torch calls it cuda too)")
    ap.add_argument("--assets-device", help="where the random models are built (default --device; cpu for a 7B on a 16 GB card)")
    ap.add_argument("--device-name", default="GPU", help="label of the real card, e.g. 'NVIDIA H200' or 'Radeon RX 7900 XTX'")
    ap.add_argument("--gfx", default="unknown", help="the facts' name (gfx target on Radeon, e.g. gfx1100)")
    ap.add_argument("--vram-kib", type=int, default=0, help="the real card's VRAM in KiB for the facts (default: what torch reports; "
                    "on Radeon rocminfo's pool size)")
    ap.add_argument("--cards", default="", help="emulated cards NAME=GIB,... (default 16G=15.98 (RX 6800 XT), 24G=23.98 (RX 7900 XTX))")
    ap.add_argument("--reserve", type=float, default=1.5, help="runtime reserve the plan assumes (sizing.DEFAULT_RESERVE_GIB)")
    ap.add_argument("--attention", default="sdpa", choices=["sdpa", "auto", "disabled", "fa2"])
    ap.add_argument("--eff-batch", type=int, default=8)
    ap.add_argument("--no-qlora", action="store_true", help="jobs with allow_qlora false (default: true, the role's default; the plan "
                    "still needs the probe's bitsandbytes_ok)")
    ap.add_argument("--steps", type=int, default=12, help="optimizer steps per run (0.5B / tiny)")
    ap.add_argument("--steps-7b", type=int, default=10, help="optimizer steps per run (7B and 14B)")
    ap.add_argument("--skip", type=int, default=2, help="steps left out of the steady-state numbers")
    args = ap.parse_args(argv)
    args.cards = dict((k, float(v)) for k, v in (item.split("=") for item in args.cards.split(",") if item)) if args.cards else {}
    phases = list(args.phase)
    if args.plan:
        with open(args.plan, encoding="utf-8") as handle:
            phases += [line.split("#")[0].strip() for line in handle if line.split("#")[0].strip()]
    bench = Bench(args)
    bench.record({"phase": "start", "kind": "start", "argv": sys.argv, "phases": phases, "budget_s": args.budget_s})
    bench.run(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())

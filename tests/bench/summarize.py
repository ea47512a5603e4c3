# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Markdown tables from bench.py's JSONL (the rows docs/performance.md shows), standard library only.

    python3 tests/bench/summarize.py [--peak-tflops 989.4] LABEL=docs/performance/FILE.jsonl ...

- plan vs measured: every ``job`` row (the runner's ``check`` + ``run``): the plan, the estimate the plan was made
  with (status.json ``plan.estimate_gib.total``), what the emulated card needed (``estimate * 1.10 + reserve``),
  the measured peak (status.json ``peak_memory``: the launch wrapper's torch.cuda.max_memory_allocated), the
  estimate of the sizing.py in this tree for the same setting, torch's peak reserved memory, nvidia-smi's peak;
- refusals (``check`` rows and ``job`` rows the plan refused);
- throughput: steady tokens/s (tests/bench/site/sitecustomize.py's timer) of job, ``llamafactory-cli`` on the same
  YAML, and the bare loop, with model FLOPs utilisation MFU = tokens/s x 6 x N / peak (N: all parameters);
- the ``lf`` rows (attention variants, sweeps, QLoRA variants) with this tree's estimate for the same setting;
- the bitsandbytes probe (``probe`` rows) and QLoRA against bf16 LoRA with the same batch, accumulation and
  checkpointing in the same call (``job`` or ``lf`` rows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "roles", "lora_job", "files"))
sys.path.insert(0, HERE)

from bench import CARDS  # noqa: E402
from make_assets import SHAPES  # noqa: E402
from radeonlab_lora import sizing  # noqa: E402
from radeonlab_lora.modelshape import ModelShape  # noqa: E402


def shape_of(name: str) -> ModelShape:
    return ModelShape.from_config({"model_type": "qwen2", **SHAPES[name]})


def load(specs: list) -> list:
    rows = []
    for spec in specs:
        label, path = spec.split("=", 1) if "=" in spec else (os.path.basename(spec), spec)
        with open(path, encoding="utf-8") as handle:
            rows += [{**json.loads(line), "call": label} for line in handle if line.strip()]
    return rows


def fmt(value, digits=2, suffix=""):
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}{suffix}"
    return f"{value}{suffix}"


def pct(a, b):
    return f"{a / b - 1:+.1%}" if a is not None and b else "—"


def setting(plan: dict) -> str:
    if plan.get("decision") != "train":
        return "refused"
    return (f"{plan.get('precision')} b{plan.get('per_device_train_batch_size')}×{plan.get('gradient_accumulation_steps')} "
            f"ckpt {'on' if plan.get('gradient_checkpointing') else 'off'}")


def card_label(row: dict) -> str:
    if row.get("card") == "full":
        return "H200, uncapped"
    return f"{row.get('card')} ({fmt(row.get('card_gib') or CARDS.get(row.get('card')))} GiB), cap {fmt(row.get('cap_gib'))}"


def mfu(tps, shape: str, peak_tflops: float):
    if not tps:
        return None
    return tps * 6 * shape_of(shape).params / (peak_tflops * 1e12)


def plan_table(rows: list) -> list:
    out = ["| call | model | seq | card (emulated), allocator cap GiB | plan | estimate at run GiB | needed on the card GiB | "
           "measured peak GiB | estimate − peak | this tree's estimate | − peak | peak reserved GiB | nvidia-smi MiB | attempts |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.get("kind") != "job" or (row.get("plan") or {}).get("decision") != "train" or not row.get("run"):
            continue
        plan = row["plan"]
        est = plan.get("estimate_total_gib")
        peak = (row.get("peak_memory") or {}).get("gib")
        reserve = (plan.get("estimate") or {}).get("reserve")
        emulated = row.get("card_gib")
        needed = plan.get("needed_gib")
        if emulated and needed is not None and reserve is not None:
            needed = round(needed - (reserve - 1.5), 2)  # the facts' reserve also held the memory above the emulated card
        now = sizing.estimate(shape_of(row["shape"]), row["seq"], sizing.Setting(plan["precision"], plan["gradient_checkpointing"],
                                                                                 plan["per_device_train_batch_size"],
                                                                                 bool(plan.get("paged_optimizer"))), "sdpa").total_gib
        timer = row.get("timer") or {}
        attempts = row.get("attempts") or []
        outcome = ", ".join(f"{a.get('outcome')}" + (f" ({a.get('failure')})" if a.get("failure") else "") for a in attempts) or "—"
        out.append(f"| {row['call']} | {row['shape']} | {row['seq']} | {card_label(row)} | {setting(plan)} | {fmt(est)} | {fmt(needed)} | "
                   f"{fmt(peak)} | {pct(est, peak)} | {fmt(now)} | {pct(now, peak)} | {fmt(timer.get('max_reserved_gib'))} | "
                   f"{fmt((row.get('run') or {}).get('smi_peak_mib'))} | {outcome} |")
    return out


def refusal_table(rows: list) -> list:
    out = ["| call | model | seq | card | smallest setting's estimate GiB | message |", "|---|---|---|---|---|---|"]
    for row in rows:
        plan = row.get("plan") or {}
        if row.get("kind") in ("job", "check") and plan.get("decision") == "refuse":
            message = ((row.get("check") or {}).get("message") or "").split(". would fit")[0]
            out.append(f"| {row['call']} | {row['shape']} | {row['seq']} | {card_label(row)} | {fmt(plan.get('estimate_total_gib'))} | {message} |")
    return out


def throughput_table(rows: list, peak_tflops: float) -> list:
    out = ["| call | model | seq | card | setting | job steady tok/s | job, runner's own tok/s (basis) | "
           "llamafactory-cli tok/s | job / direct | bare loop tok/s | job / bare | MFU (job) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by_key: dict = {}
    for row in rows:
        if row.get("kind") in ("job", "direct", "bare") and row.get("shape"):
            key = (row["call"], row["shape"], row["seq"], row["card"])
            by_key.setdefault(key, {}).setdefault(row["kind"], row)
    for (call, shape, seq, card), kinds in by_key.items():
        job = kinds.get("job")
        if not job or not job.get("run"):
            continue
        j, d, b = (((kinds.get(k) or {}).get("timer") or {}).get("steady_tokens_per_s") for k in ("job", "direct", "bare"))
        basis = job.get("tokens_per_second_basis") or ""
        out.append(f"| {call} | {shape} | {seq} | {card_label(job)} | {setting(job.get('plan') or {})} | {fmt(j, 0)} | "
                   f"{fmt(job.get('tokens_per_second'), 0)} ({basis}) | {fmt(d, 0)} | {pct(j, d) if d else '—'} | {fmt(b, 0)} | "
                   f"{pct(j, b) if b else '—'} | {fmt(mfu(j, shape, peak_tflops) * 100 if j else None, 1, ' %')} |")
    return out


QUANT = {"q4": "QLoRA 4-bit", "q4p": "QLoRA 4-bit, paged AdamW"}


def lf_estimate(row: dict):
    """This tree's estimate for an lf row's setting (None for the math kernel, which the model does not size)."""
    if row.get("attention") == "math":
        return None
    precision = "qlora4" if row.get("quantization") else "bf16"
    setting_ = sizing.Setting(precision, row["gradient_checkpointing"], row["batch"], row.get("quantization") == "q4p")
    return sizing.estimate(shape_of(row["shape"]), row["seq"], setting_, "disabled" if row["attention"] == "eager" else "sdpa").total_gib


def lf_table(rows: list, peak_tflops: float) -> list:
    out = ["| call | model | seq | cap GiB | batch × accumulation | ckpt | attention | weights | rc | peak alloc GiB | this tree's estimate | "
           "− peak | peak reserved GiB | nvidia-smi MiB | steady tok/s | MFU |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.get("kind") != "lf":
            continue
        timer = row.get("timer") or {}
        tps = timer.get("steady_tokens_per_s")
        attention = {"math": "sdpa, math kernel only", "eager": "eager"}.get(row["attention"], "sdpa")
        now, peak = lf_estimate(row), timer.get("max_alloc_gib")
        out.append(f"| {row['call']} | {row['shape']} | {row['seq']} | {fmt(row.get('cap_gib')) if row.get('cap_gib') else 'none'} | "
                   f"{row['batch']}×{row['accumulation']} | {'on' if row['gradient_checkpointing'] else 'off'} | {attention} | "
                   f"{QUANT.get(row.get('quantization'), 'bf16')} | {row.get('rc')} | {fmt(peak)} | {fmt(now)} | {pct(now, peak)} | "
                   f"{fmt(timer.get('max_reserved_gib'))} | {fmt(row.get('smi_peak_mib'))} | {fmt(tps, 0)} | "
                   f"{fmt(mfu(tps, row['shape'], peak_tflops) * 100 if tps else None, 1, ' %')} |")
    return out


def probe_table(rows: list) -> list:
    out = ["| call | bitsandbytes | torch | backend | ok | GEMM / GEMV / grad rel. error | NF4 round trip | reason |",
           "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row.get("kind") != "probe":
            continue
        bnb = row.get("bitsandbytes") or {}
        for gpu in bnb.get("gpus") or [{}]:
            errors = " / ".join(fmt(gpu.get(k), 4) for k in ("rel_err_gemm", "rel_err_gemv", "rel_err_grad"))
            out.append(f"| {row['call']} | {fmt(bnb.get('version'))} | {fmt(bnb.get('torch'))} | {fmt(bnb.get('backend'))} | {bnb.get('ok')} | "
                       f"{errors} | {fmt(gpu.get('quant_rel_err'), 4)} | {bnb.get('reason')} |")
    return out


def _run_key(row: dict):
    """(call, shape, seq, batch, accumulation, ckpt, weights, tok/s, label) of a job or lf row that trained."""
    timer = row.get("timer") or {}
    tps = timer.get("steady_tokens_per_s")
    if not tps:
        return None
    if row.get("kind") == "job":
        plan = row.get("plan") or {}
        return (row["call"], row["shape"], row["seq"], plan.get("per_device_train_batch_size"), plan.get("gradient_accumulation_steps"),
                plan.get("gradient_checkpointing"), "qlora" if plan.get("precision") == "qlora4" else "bf16", tps,
                f"job, {card_label(row)}" + (", paged" if plan.get("paged_optimizer") else ""))
    if row.get("kind") == "lf" and row.get("attention") == "sdpa":
        return (row["call"], row["shape"], row["seq"], row["batch"], row["accumulation"], row["gradient_checkpointing"],
                "qlora" if row.get("quantization") else "bf16", tps,
                f"llamafactory-cli, {card_label(row)}" + (", paged AdamW" if row.get("quantization") == "q4p" else ""))
    return None


def qlora_table(rows: list) -> list:
    """Every QLoRA run against the bf16 run(s) of the same call with the same batch, accumulation and checkpointing."""
    out = ["| call | model | seq | batch × accumulation | ckpt | QLoRA run | QLoRA tok/s | bf16 run (same setting) | bf16 tok/s | QLoRA / bf16 |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    runs = [key for key in (_run_key(row) for row in rows) if key]
    for q in (r for r in runs if r[6] == "qlora"):
        for b in (r for r in runs if r[6] == "bf16" and r[:6] == q[:6]):
            out.append(f"| {q[0]} | {q[1]} | {q[2]} | {q[3]}×{q[4]} | {'on' if q[5] else 'off'} | {q[8]} | {fmt(q[7], 0)} | {b[8]} | "
                       f"{fmt(b[7], 0)} | {q[7] / b[7]:.1%} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="LABEL=path/to/bench.jsonl")
    ap.add_argument("--peak-tflops", type=float, default=989.4, help="dense bf16 peak of the GPU (H200 SXM datasheet: 989.4)")
    a = ap.parse_args(argv)
    rows = load(a.files)
    for title, table in (("Plan vs measured peak (the runner's check + run)", plan_table(rows)), ("Refusals", refusal_table(rows)),
                         ("Throughput (steady state)", throughput_table(rows, a.peak_tflops)),
                         ("llamafactory-cli runs with overrides (attention variants, sweeps, QLoRA)", lf_table(rows, a.peak_tflops)),
                         ("bitsandbytes probe", probe_table(rows)), ("QLoRA against bf16 LoRA, same setting, same call", qlora_table(rows))):
        print(f"### {title}\n")
        print("\n".join(table))
        print()
    skipped = [f"{r['call']}: {r['phase']} ({r.get('reason')})" for r in rows if r.get("kind") == "skipped"]
    errors = [f"{r['call']}: {r['phase']} ({r.get('error')})" for r in rows if r.get("kind") == "error" or r.get("error")]
    if skipped or errors:
        print("### Not run\n")
        print("\n".join(f"- {line}" for line in skipped + errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())

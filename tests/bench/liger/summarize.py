# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Join what run_device.sh left in OUT into one raw row per run and print the table, ratios and losses.

    python tests/bench/liger/summarize.py OUT       # writes OUT/liger_rows.jsonl, prints the summary

A row: runs.jsonl's settings and exit status, the BENCH_RESULT of the same tag (steady tokens/s, torch peak
allocated/reserved GiB, step times), the per-step training loss from the trainer's trainer_state.json
(``log_history``, logging_steps=1), whether LLaMA-Factory logged "Liger kernel has been applied", and
whether the log shows an out-of-memory error. ``fits_24gib``: torch's peak *reserved* memory <= 24 GiB.
A job row also gets the memory model's estimate of its setting (``plan_gib``, roles/lora_job's sizing.estimate, from the
model's config.json in LIGER_WORK) and ``plan_over_peak_pct``, how far it is over the peak allocated (+0 .. +10 % wanted).
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roles", "lora_job", "files"))
from radeonlab_lora import sizing  # noqa: E402
from radeonlab_lora.modelshape import shape_for_job  # noqa: E402

FIT_GIB = 24.0
WORK = os.environ.get("LIGER_WORK", "/tmp/liger")


def read_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    return rows


def read_text(path):
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def build_rows(out):
    results = {r.get("tag"): r for r in read_jsonl(os.path.join(out, "results.jsonl"))}
    rows = []
    for run in read_jsonl(os.path.join(out, "runs.jsonl")):
        tag = run["tag"]
        res = results.get(tag, {})
        log = read_text(os.path.join(out, "log_%s.txt" % tag))
        row = dict(run)
        row["ran"] = run.get("rc") == 0 and bool(res)
        row["oom"] = "OutOfMemoryError" in log or "CUDA out of memory" in log
        if run["kind"] == "job":
            row["liger_applied"] = "Liger kernel has been applied" in log
        for key in ("steady_tokens_per_s", "steady_step_s", "tokens_per_step", "max_alloc_gib", "max_reserved_gib",
                    "first_step_s", "steps", "skip", "step_s", "gradient_checkpointing", "attn_implementation", "cap"):
            if key in res:
                row[key] = res[key]
        state_path = os.path.join(out, "state_%s.json" % tag)
        if os.path.exists(state_path):
            with open(state_path, encoding="utf-8") as handle:
                hist = json.load(handle).get("log_history", [])
            row["losses"] = [h["loss"] for h in hist if "loss" in h]
        elif "first_loss" in res:
            row["first_loss"], row["last_loss"] = res.get("first_loss"), res.get("last_loss")
        if "max_reserved_gib" in res:
            row["fits_24gib"] = res["max_reserved_gib"] <= FIT_GIB
        if run["kind"] == "job":
            plan_row(row)
        rows.append(row)
    return rows


def plan_row(row):
    """The memory model's estimate of the job's setting (sdpa, s 2048, rank 8), against its peak allocated."""
    model = os.path.join(WORK, row["model"])
    if not os.path.exists(os.path.join(model, "config.json")):
        return
    setting = sizing.Setting("bf16", bool(row["ckpt"]), int(row["batch"]))
    row["plan_gib"] = round(sizing.estimate(shape_for_job(model), 2048, setting, "sdpa", 8, "flash", bool(row["liger"])).total_gib, 2)
    if row.get("max_alloc_gib"):
        row["plan_over_peak_pct"] = round(100.0 * (row["plan_gib"] / row["max_alloc_gib"] - 1), 1)


def best_within_cap(rows, model, kind):
    fit = [r for r in rows if r["model"] == model and r["kind"] == kind and r["ran"] and r.get("fits_24gib")
           and (kind == "bare" or r["liger"])]
    return max(fit, key=lambda r: r.get("steady_tokens_per_s") or 0) if fit else None


def mean(values):
    values = [v for v in values if v]
    return sum(values) / len(values) if values else None


def ratio(num, den):
    return round(num / den, 3) if num and den else None


def summary(rows):
    lines = ["| case | tag | liger | batch | ckpt | cap GiB | ran | steady tok/s | peak alloc GiB | peak reserved GiB | plan GiB | plan vs peak |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ran = "yes" if r["ran"] else ("OOM" if r.get("oom") else ("skipped" if r.get("rc") is None else "no rc=%s" % r.get("rc")))
        if r["kind"] == "job" and r["liger"] and r["ran"] and not r.get("liger_applied"):
            ran += " (liger NOT applied)"
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["tag"], "on" if r["liger"] else "off", r["batch"], "on" if r["ckpt"] else "off",
            r.get("cap_gib") or "-", ran, r.get("steady_tokens_per_s", "-"), r.get("max_alloc_gib", "-"),
            r.get("max_reserved_gib", "-"), r.get("plan_gib", "-"),
            "%+.1f %%" % r["plan_over_peak_pct"] if "plan_over_peak_pct" in r else "-"))
    by = {r["tag"]: r for r in rows}

    def tps(tag):
        return by.get(tag, {}).get("steady_tokens_per_s") if by.get(tag, {}).get("ran") else None

    off = mean([tps("q7_off_b1_gc_1"), tps("q7_off_b1_gc_2")])
    on = mean([tps("q7_on_b1_gc_1"), tps("q7_on_b1_gc_2")])
    lines.append("")
    lines.append("Qwen2.5-7B b1 ckpt: liger on/off tokens/s = %s (means of the ABBA pairs: on %s, off %s)" % (
        ratio(on, off), on and round(on, 1), off and round(off, 1)))
    llama = [r for r in rows if r["case"] == "5"]
    l_on = [r.get("steady_tokens_per_s") for r in llama if r["liger"] and r["ran"]]
    l_off = [r.get("steady_tokens_per_s") for r in llama if not r["liger"] and r["ran"]]
    if l_on and l_off:
        lines.append("Llama shape b1 ckpt: liger on/off tokens/s = %s" % ratio(l_on[0], l_off[0]))
    fit_job = [r for r in rows if r["kind"] == "job" and r["liger"] and r["ran"] and r.get("fits_24gib") and r["model"] == "qwen2-7b"
               and r["case"] not in ("7", "8")]
    fit_bare = [r for r in rows if r["kind"] == "bare" and r["ran"] and r.get("fits_24gib") and r["case"] not in ("7", "8")]
    if fit_job and fit_bare:
        best_job = max(fit_job, key=lambda r: r.get("steady_tokens_per_s") or 0)
        best_bare = max(fit_bare, key=lambda r: r.get("steady_tokens_per_s") or 0)
        lines.append("best within 24 GiB reserved: job+liger %s (%s tok/s) / bare %s (%s tok/s) = %s" % (
            best_job["tag"], best_job["steady_tokens_per_s"], best_bare["tag"], best_bare["steady_tokens_per_s"],
            ratio(best_job["steady_tokens_per_s"], best_bare["steady_tokens_per_s"])))
    for model in sorted({r["model"] for r in rows if r["case"] in ("7", "8")}):
        job, bare = best_within_cap(rows, model, "job"), best_within_cap(rows, model, "bare")
        if job and bare:
            lines.append("%s, the plan's choice vs the bare loop's best within 24 GiB: job+liger %s (%s tok/s) / bare %s (%s tok/s) = %s" % (
                model, job["tag"], job["steady_tokens_per_s"], bare["tag"], bare["steady_tokens_per_s"],
                ratio(job["steady_tokens_per_s"], bare["steady_tokens_per_s"])))
    lines.append("")
    lines.append("per-step training loss (trainer_state.json log_history, 4 decimals):")
    for r in rows:
        if r.get("losses"):
            lines.append("  %-16s %s" % (r["tag"], r["losses"]))
    pairs = [("q7_off_b1_gc_1", "q7_on_b1_gc_1"), ("q7_off_b1_gc_2", "q7_on_b1_gc_2")]
    for a, b in pairs:
        la, lb = by.get(a, {}).get("losses"), by.get(b, {}).get("losses")
        if la and lb and len(la) == len(lb):
            lines.append("  max |off-on| %s vs %s: %.4f" % (a, b, max(abs(x - y) for x, y in zip(la, lb))))
    return "\n".join(lines)


def main(argv):
    out = argv[1] if len(argv) > 1 else os.environ.get("OUT", "/tmp/liger-out")
    rows = build_rows(out)
    with open(os.path.join(out, "liger_rows.jsonl"), "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

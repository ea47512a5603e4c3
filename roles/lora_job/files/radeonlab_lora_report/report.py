# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report: one Markdown and one HTML page over the per-host result folders on the controller.

``python -m radeonlab_lora_report.report RESULTS_DIR`` reads ``RESULTS_DIR/<host>/{host.json,status.json,
trainer_state.json,training_loss.png}`` (what the lora_job role fetched) and writes ``RESULTS_DIR/report.md`` and
``RESULTS_DIR/report.html`` (the charts of ``charts.py`` inlined as SVG, and beside report.md as ``report_<kind>.svg``;
LLaMA-Factory's loss plot of a host the loss chart lacks as a data URI), only when their content changes, so a re-run
of an unchanged fleet changes nothing. Prints a JSON summary. ``--not-finished HOST`` (repeated) names a host of the
play that did not get to its results this run (unreachable, or failed earlier in the play): its row says so, and
that anything else shown for it is from an earlier run.

First the summary (``fleet_summary``: hosts per ``category``, the failed, refused and unfinished ones with their
``reason``, the fleet's tokens/s and wall time) and the charts. Two tables: the hosts (GPU, gfx, override, ROCm, torch)
and the training (device and precision, batch, checkpointing, attention, plan estimate, measured peak, tokens/s, steps,
wall time, attempts, loss, outcome), then one section per host (``host_lines``: status, device and precision, plan,
retries, throughput, adapter, each once; then ``host_notes``), the base-vs-adapter answers to the sample prompts
(``samples.json``) and LLaMA-Factory's loss plots of a host the loss chart lacks. ``host_row`` builds one row
(column -> text); ``report_context`` decides everything both pages show (summary, charts, tables, cells, notes, samples,
plots) once, and ``templates/report.md.j2`` and ``templates/report.html.j2`` (autoescaped) lay it out. jinja2 comes
with the controller's Python: results.yml runs this module with ``ansible_playbook_python``.

status.json keys read: state, message, plan, gpu_plan, device, attempts, attempt, retry_reasons, attention,
peak_memory, tokens_per_second, tokens_per_second_basis, global_step, max_steps, duration_s, first_loss,
final_loss, first_eval_loss, final_eval_loss, samples, export. host.json keys read: gpu, gfx, override, rocm, torch, hip, attention,
attention_reason, ``this_run`` ("already done" when the play found the job done and did not train, "after-training steps"
when it had trained earlier and this run only answered new sample prompts or wrote an export asked for later) and ``serve`` (the API's
check: state, url, model, api_key, prompt, reply, message).
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
import json
import os
import sys

import jinja2
import markupsafe

from radeonlab_lora.samples import SAMPLES_FILE
from radeonlab_lora_report import charts
from radeonlab_lora.state import read_json, write_text_if_changed

HOST_COLUMNS = [("host", "Host"), ("gpu", "GPU"), ("gfx", "gfx"), ("override", "Override"), ("rocm", "ROCm"), ("torch", "torch / HIP")]
TRAINING_COLUMNS = [
    ("host", "Host"), ("device", "Device & precision"), ("batch", "Batch x accumulation (x world size)"), ("checkpointing", "Checkpointing"),
    ("attention", "Attention"), ("estimate", "Plan estimate"), ("peak", "Measured peak"), ("tokens", "Tokens/s"), ("steps", "Steps"),
    ("wall", "Wall time"), ("attempts", "Attempts (why)"), ("loss", "Loss first -> final"),
    ("eval_loss", "Eval loss first -> final"), ("outcome", "Outcome"),
]
TABLES = [("Hosts", HOST_COLUMNS), ("Training", TRAINING_COLUMNS)]
SAMPLE_COLUMNS = [("prompt", "Prompt"), ("base", "Base model"), ("adapter", "With the adapter")]
PLOTS = [("loss", "training_loss.png"), ("eval loss", "training_eval_loss.png")]  # LLaMA-Factory's plot_loss
PEAK_KINDS = charts.PEAK_KINDS
PAGES = {"report.md": "templates/report.md.j2", "report.html": "templates/report.html.j2"}  # under this package's directory


# --------------------------------------------------------------------------------------------- cells
def _number(value, pattern: str) -> str:
    return pattern % value if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _duration(seconds) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return "%d:%02d:%02d" % (hours, minutes, secs)


def _refused_summary(plan: dict) -> str:
    """Why a plan would not fit, and what QLoRA would do there (planned but unavailable, switched off, or too big too)."""
    needed = _number(plan.get("needed_gib"), "%.1f")
    qlora = (plan.get("alternatives") or {}).get("qlora4") or {}
    if not qlora.get("fits"):
        return "would not fit (needs %s GiB)" % needed
    if qlora.get("enabled") and not qlora.get("available"):
        return "QLoRA 4-bit planned, bitsandbytes unavailable on this host (%s GiB; bf16 needs %s GiB): %s" % (
            _number(qlora.get("needed_gib"), "%.1f"), needed, qlora.get("reason") or "no probe passed")
    return "would not fit in bf16 (needs %s GiB); QLoRA 4-bit would (%s GiB) but allow_qlora is off" % (
        needed, _number(qlora.get("needed_gib"), "%.1f"))


def plan_settings(plan: dict) -> str:
    """``bf16, batch 8 x 1, ckpt off``: what a plan trains with, without its memory."""
    precision = plan.get("precision")
    if precision == "qlora4":
        precision = "QLoRA 4-bit (NF4%s%s)" % (", double quant" if plan.get("double_quantization") else "",
                                               ", paged AdamW" if plan.get("paged_optimizer") else "")
    return "%s, batch %s x %s, ckpt %s" % (precision, plan.get("per_device_train_batch_size"), plan.get("gradient_accumulation_steps"),
                                           "on" if plan.get("gradient_checkpointing") else "off")


def plan_summary(plan: dict) -> str:
    """``bf16, batch 8 x 1, ckpt off, 5.1 GiB``, ``QLoRA 4-bit (NF4, double quant), batch 2 x 4, ...`` or why it would not fit."""
    if plan.get("decision") == "refuse":
        return _refused_summary(plan)
    text = "%s, %s GiB" % (plan_settings(plan), _number(plan.get("needed_gib"), "%.1f"))
    unified = plan.get("unified_memory")
    if unified and plan.get("vram_gib") is not None:
        text += " of %s GiB unified memory (%s)" % (_gib(plan["vram_gib"]), "GTT shared with the OS" if unified.get("shared") else "carve-out")
    return text


def _card_name(info: dict, device: dict) -> str:
    names = [gpu.get("name") for gpu in device.get("facts_gpus") or [] if gpu.get("name")]
    return info.get("gpu") or " + ".join(names) or "GPU"


def device_cell(info: dict, status: dict) -> str:
    """``GPU bf16``, or ``CPU fp32 — <why>; a real <card> would get: <plan>``."""
    device, plan = status.get("device") or {}, status.get("plan") or {}
    where = (device.get("train_on") or plan.get("device") or "").upper()
    if not where:
        return "-"
    if device and not device.get("ok", True):
        return "%s refused: %s" % (where, device.get("reason") or "device mismatch")
    text = "%s %s" % (where, "QLoRA 4-bit" if plan.get("precision") == "qlora4" else (plan.get("precision") or ""))
    if where == "CPU" and device.get("reason"):
        text += " — %s" % device["reason"]
    if status.get("gpu_plan"):
        text += "; a real %s would get: %s" % (_card_name(info, device), plan_summary(status["gpu_plan"]))
    return text.strip()


def _last_settings(status: dict) -> dict:
    attempts = status.get("attempts") or []
    return (attempts[-1].get("settings") or {}) if attempts else {}


def batch_cell(status: dict) -> str:
    settings, plan = _last_settings(status), status.get("plan") or {}
    batch = settings.get("per_device_train_batch_size", plan.get("per_device_train_batch_size"))
    accumulation = settings.get("gradient_accumulation_steps", plan.get("gradient_accumulation_steps"))
    if batch is None:
        return "-"
    dist = status.get("distributed") or {}
    world, nnodes = dist.get("world_size") or 1, dist.get("nnodes") or 1
    where = "" if world <= 1 else " on each of %d processes" % world + (" (node %s of %d)" % (dist.get("node_rank"), nnodes) if nnodes > 1 else "")
    return "%s x %s%s" % (batch, accumulation, where)


def checkpointing_cell(status: dict) -> str:
    settings, plan = _last_settings(status), status.get("plan") or {}
    value = settings.get("gradient_checkpointing", plan.get("gradient_checkpointing"))
    return "-" if value is None else ("on" if value else "off")


def attention_cell(info: dict, status: dict) -> str:
    attention = status.get("attention") or info.get("attention") or "-"
    return "%s (%s)" % (attention, info["attention_reason"]) if info.get("attention_reason") else attention


def _gib(value: float) -> str:
    """GiB with one decimal, two below 1 GiB (a tiny model's plan would read 0.0)."""
    return ("%.1f" if value >= 1 else "%.2f") % value


def estimate_cell(status: dict) -> str:
    plan = status.get("plan") or {}
    if plan.get("needed_gib") is None:
        return "-"
    unified = plan.get("unified_memory")
    if unified and plan.get("vram_gib") is not None:
        return "%s of %s GiB unified memory (a %s GiB pool, %s)" % (
            _gib(plan["needed_gib"]), _gib(plan["vram_gib"]), _gib(unified["pool_gib"]),
            "GTT shared with the OS" if unified.get("shared") else "carve-out")
    if plan.get("vram_gib") is not None:
        return "%s of %s GiB VRAM" % (_gib(plan["needed_gib"]), _gib(plan["vram_gib"]))
    if plan.get("available_gib") is not None:
        return "%s of %s GiB RAM" % (_gib(plan["needed_gib"]), _gib(plan["available_gib"]))
    return "%s GiB" % _gib(plan["needed_gib"])


def peak_cell(status: dict) -> str:
    peak = status.get("peak_memory") or {}
    return "%.2f GiB %s" % (peak["gib"], PEAK_KINDS.get(peak.get("kind"), peak.get("kind"))) if peak.get("gib") is not None else "-"


def tokens_cell(status: dict) -> str:
    rate = status.get("tokens_per_second")
    if not isinstance(rate, (int, float)):
        return "-"
    bound = "<= " if "upper bound" in (status.get("tokens_per_second_basis") or "") else ""
    return "%s%.0f" % (bound, rate)


def attempts_cell(status: dict) -> str:
    attempts = status.get("attempts") or []
    count = len(attempts) or status.get("attempt") or 0
    why = [attempt.get("failure") or attempt.get("outcome") for attempt in attempts if attempt.get("outcome") not in (None, "succeeded")]
    if not count:
        return "-"
    return "%d (after %s)" % (count, ", ".join(why)) if why else str(count)


def category(info: dict, status: dict) -> str:
    """What this run made of the host, as the summary counts it: trained, already done, failed, refused, running or not run."""
    current = status.get("state")
    if current == "succeeded":
        return "already done" if info.get("this_run") in ("already done", AFTER_TRAINING_ONLY) else "trained"
    if current == "failed":
        return "refused" if refusal(status) else "failed"
    return current or "not run"


def refusal(status: dict) -> str | None:
    """Why the job refused to train (the device check, or a plan that does not fit), or None when it did not refuse."""
    device = status.get("device") or {}
    if device.get("ok") is False:
        return "the GPU facts and torch disagree" + (" (%s)" % device["reason"] if device.get("reason") else "")
    if (status.get("plan") or {}).get("decision") == "refuse":
        return "does not fit (%s)" % _refused_summary(status["plan"])
    return None


def outcome_cell(info: dict, status: dict) -> str:
    found = category(info, status)
    attempts = len(status.get("attempts") or []) or status.get("attempt") or 0
    if found == "already done":
        done = "already done (trained earlier: %d attempt(s))" % attempts if attempts else "already done (trained earlier)"
        return done + ("; this run: the after-training steps" if info.get("this_run") == AFTER_TRAINING_ONLY else "")
    if found == "trained":
        return "trained in %d attempt(s)" % attempts if attempts else "trained"
    if found == "refused":
        return "refused: %s" % refusal(status)
    return found


def reason(info: dict, status: dict) -> str | None:
    """The one line the summary gives a host that failed or refused."""
    found = category(info, status)
    if found == "refused":
        return refusal(status)
    if found == "failed":
        return (status.get("message") or "no message in its status").splitlines()[0]
    return None


def loss_cell(status: dict, first_key: str = "first_loss", final_key: str = "final_loss") -> str:
    first, final = _number(status.get(first_key), "%.4f"), _number(status.get(final_key), "%.4f")
    return "-" if first == final == "-" else "%s -> %s" % (first, final)


def torch_cell(info: dict) -> str:
    if info.get("hip"):
        return "%s / HIP %s" % (info.get("torch") or "-", info["hip"])
    if not info.get("torch"):
        return "-"
    return "%s / no HIP (%s build)" % (info["torch"], "CUDA %s" % info["cuda"] if info.get("cuda") else "CPU")


def host_row(host: str, info: dict, status: dict) -> dict:
    """One host as column -> text for both tables (missing data gives '-')."""
    return {
        "host": host,
        "gpu": info.get("gpu") or "-",
        "gfx": info.get("gfx") or "-",
        "override": info.get("override") or "none",
        "rocm": info.get("rocm") or "-",
        "torch": torch_cell(info),
        "device": device_cell(info, status),
        "batch": batch_cell(status),
        "checkpointing": checkpointing_cell(status),
        "attention": attention_cell(info, status),
        "estimate": estimate_cell(status),
        "peak": peak_cell(status),
        "tokens": tokens_cell(status),
        "steps": "%s/%s" % (status.get("global_step", "-"), status.get("max_steps", "-")) if status.get("global_step") is not None else "-",
        "wall": _duration(status.get("duration_s")),
        "attempts": attempts_cell(status),
        "loss": loss_cell(status),
        "eval_loss": loss_cell(status, "first_eval_loss", "final_eval_loss"),  # "-": no held-out samples (lora_job_val_size 0)
        "outcome": outcome_cell(info, status),
    }


def status_line(info: dict, status: dict, row: dict) -> str:
    """The host's state in its own section, in the words of the summary and the table (a failure with its message)."""
    if category(info, status) == "failed":
        return "%s: %s" % (row["outcome"], reason(info, status))
    return row["outcome"]


def retries_line(info: dict, status: dict) -> str | None:
    """Why each retry (the count is the status's): already done, they were in an earlier run."""
    reasons = status.get("retry_reasons") or []
    if not reasons:
        return None
    return "%s%s" % ("in the earlier run: " if category(info, status) == "already done" else "", "; ".join(reasons))


def plan_line(status: dict) -> str | None:
    """What the plan trains with and its memory estimate beside the measured peak (a refused plan: the status says why)."""
    plan = status.get("plan") or {}
    if not plan or plan.get("decision") == "refuse":
        return None
    return "%s; estimate %s; measured peak %s" % (plan_settings(plan), estimate_cell(status), peak_cell(status))


def throughput_line(row: dict, status: dict) -> str | None:
    """``8123 tokens/s (basis); steps 96/96 in 0:00:17``, the parts that were measured."""
    parts = []
    if row["tokens"] != "-":
        parts.append("%s tokens/s%s" % (row["tokens"], " (%s)" % status["tokens_per_second_basis"] if status.get("tokens_per_second_basis") else ""))
    if row["steps"] != "-":
        parts.append("steps %s" % row["steps"] + (" in %s" % row["wall"] if row["wall"] != "-" else ""))
    elif row["wall"] != "-":
        parts.append("wall time %s" % row["wall"])
    return "; ".join(parts) or None


def host_lines(info: dict, status: dict, row: dict) -> list:
    """The labelled lines that open a host's section, each fact once: status (with the attempts), device and precision, plan,
    the retries, throughput and the adapter (a succeeded job's status message only repeats them, so it is not shown)."""
    lines = [("Status", status_line(info, status, row))]
    if (status.get("device") or {}).get("ok") is not False:
        lines.append(("Device & precision", row["device"]))
    lines += [("Plan", plan_line(status)), ("Retried", retries_line(info, status)), ("Throughput", throughput_line(row, status))]
    if status.get("state") == "succeeded":
        lines.append(("Adapter", status.get("adapter_dir")))
    elif status.get("state") not in ("failed", None) and status.get("message"):
        lines.append(("Message", status["message"]))
    return [{"label": label, "text": text} for label, text in lines if text and text != "-"]


def host_notes(info: dict, status: dict) -> list:
    """The lines after the opening ones: the sample answers' failure, the stages after training, the merged model and the API."""
    notes = []
    if (status.get("samples") or {}).get("state") == "failed":
        notes.append("samples: %s" % status["samples"]["message"])
    return notes + [note for note in (stages_note(status), export_note(status), serve_note(info)) if note]


def stages_note(status: dict) -> str | None:
    """After training: each stage's planned memory beside what it measured (the API's is not measured by the job)."""
    measured = {name: (status.get(name) or {}).get("peak_memory") for name in ("samples", "export")}
    parts = []
    for stage in (status.get("plan") or {}).get("stages") or []:
        peak = measured.get(stage["name"])
        parts.append("%s %s GiB planned (%s, %s)%s" % (
            stage["name"], _gib(stage["needed_gib"]), stage["where"], stage["precision"],
            ", %s GiB measured %s" % (_gib(peak["gib"]), PEAK_KINDS.get(peak["kind"], peak["kind"])) if peak else ""))
    return "after training: %s" % "; ".join(parts) if parts else None


def export_note(status: dict) -> str | None:
    """The merged model (``lora_job_export: merged``): where, how big, or why it is missing."""
    export = status.get("export") or {}
    if export.get("state") == "merged":
        size = export.get("bytes") or 0
        shown = "%s GiB" % _gib(size / 2**30) if size >= 2**30 // 100 else "%.1f MiB" % (size / 2**20)  # the lab's model: 0.6 MiB
        return "merged model: %s (%d files, %s)" % (export.get("dir"), len(export.get("files") or []), shown)
    if export.get("state") == "failed":
        return "export: %s" % export.get("message")
    return None


def serve_note(info: dict) -> str | None:
    """The API of ``lora_job_serve`` as the play's check found it (host.json ``serve``)."""
    serve = info.get("serve") or {}
    if serve.get("state") == "serving":
        return "API: %s, model %s, %s; asked %s, it answered %s" % (
            serve.get("url"), serve.get("model"), "API key required" if serve.get("api_key") else "no key (loopback)",
            json.dumps(serve.get("prompt"), ensure_ascii=False), json.dumps(serve.get("reply"), ensure_ascii=False))
    if serve.get("state") in (None, "not served"):
        return None
    return "API: %s" % (serve.get("message") if serve.get("state") == "failed" else serve.get("state"))


# --------------------------------------------------------------------------------------------- pages
NOT_FINISHED_REASON = "unreachable, or failed before its results: see the play's recap"
NOT_FINISHED = "not finished in this run (%s)" % NOT_FINISHED_REASON
TRAINER_STATE = "trainer_state.json"
# The summary's counts in this order; any other state (running, not run) after them.
AFTER_TRAINING_ONLY = "after-training steps"  # host.json's this_run: trained earlier, this run answered samples or exported
CATEGORIES = ["trained", "already done", "failed", "refused", "not finished"]
ALWAYS_COUNTED = CATEGORIES[:4]
PROBLEMS = ["failed", "refused", "not finished"]
CHART_FILE = "report_%s.svg"  # beside report.md, which links them (the HTML page inlines them)


def load_host(results_dir: str, host: str, finished: bool = True) -> dict:
    folder = os.path.join(results_dir, host)
    info = read_json(os.path.join(folder, "host.json")) or {}
    status = read_json(os.path.join(folder, "status.json")) or {}
    plots = [(what, os.path.join(host, name)) for what, name in PLOTS if os.path.isfile(os.path.join(folder, name))]
    row = host_row(host, info, status)
    lines, notes = host_lines(info, status, row), host_notes(info, status)
    answers = (read_json(os.path.join(folder, SAMPLES_FILE)) or {}).get("samples") or []
    found, why = category(info, status), reason(info, status)
    if not finished:
        row["outcome"], found, why = NOT_FINISHED, "not finished", NOT_FINISHED_REASON
        earlier = "the rest of this section is from an earlier run (%s)" % (status.get("state") or "never run") if status else "no results from any run"
        lines = [{"label": "Status", "text": NOT_FINISHED}, {"label": None, "text": earlier}] + lines[1:]
    return {"row": row, "lines": lines, "notes": notes, "plots": plots, "samples": answers, "category": found, "reason": why, "status": status,
            "device": device_short(status), "trainer_state": read_json(os.path.join(folder, TRAINER_STATE)) or {}}


def hosts(results_dir: str, not_finished=()) -> list:
    found = {name for name in os.listdir(results_dir) if os.path.isdir(os.path.join(results_dir, name))}
    return sorted(found | set(not_finished))


def _markdown_cell(value) -> str:
    """One line of a Markdown table cell: a pipe escaped, a newline shown as the two characters \\n."""
    return str(value).replace("|", "\\|").replace("\n", "\\n")


@jinja2.pass_eval_context
def _escape_as_html_escape(eval_ctx, value):
    """In the HTML page, escape as ``html.escape`` does (``&quot;``, ``&#x27;``), not as markupsafe (``&#34;``, ``&#39;``):
    the page stays byte-identical to the one written before the templates, so an unchanged fleet rewrites nothing."""
    if not eval_ctx.autoescape or isinstance(value, markupsafe.Markup):
        return value
    return markupsafe.Markup(html.escape(str(value)))


@functools.lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    """The templates under ``templates/``: ``*.html.j2`` autoescaped, Markdown as written (its cells through ``markdown_cell``)."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.dirname(os.path.abspath(__file__))),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=False, default=False),
        finalize=_escape_as_html_escape, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["markdown_cell"] = _markdown_cell
    return environment


def _table(columns: list, rows: list, heading: str | None = None) -> dict:
    """A table for the templates: its heading, column labels and rows of cell text, in column order."""
    return {"heading": heading, "columns": [label for _key, label in columns], "rows": [[str(row[key]) for key, _label in columns] for row in rows]}


def _plot(what: str, host: str, path: str, results_dir: str) -> dict:
    """A loss plot: its alt text, its path relative to RESULTS_DIR (Markdown) and its content as a data URI (HTML)."""
    with open(os.path.join(results_dir, path), "rb") as handle:
        data = base64.b64encode(handle.read()).decode("ascii")
    return {"alt": "%s of %s" % (what, host), "path": path, "data_uri": "data:image/png;base64,%s" % data}


def device_short(status: dict) -> str:
    """``GPU bf16``, ``CPU fp32``, ``GPU QLoRA 4-bit``: the device and precision under a host's bars."""
    plan, device = status.get("plan") or {}, status.get("device") or {}
    where = (device.get("train_on") or plan.get("device") or "").upper()
    precision = "QLoRA 4-bit" if plan.get("precision") == "qlora4" else (plan.get("precision") or "")
    return ("%s %s" % (where, precision)).strip() or "-"


def fleet_summary(entries: list) -> dict:
    """The counts per category, the hosts that failed, refused or did not finish (each with its one-line reason), and the
    fleet's tokens/s and wall time over the hosts whose job succeeded (they train side by side: the slowest sets the time)."""
    counts = {}
    for entry in entries:
        counts[entry["category"]] = counts.get(entry["category"], 0) + 1
    order = [name for name in CATEGORIES if name in ALWAYS_COUNTED or counts.get(name)] + sorted(name for name in counts if name not in CATEGORIES)
    problems = [{"host": entry["row"]["host"], "category": entry["category"], "reason": entry["reason"]}
                for what in PROBLEMS for entry in entries if entry["category"] == what]
    done = [entry["status"] for entry in entries if entry["category"] in ("trained", "already done")]
    rates = [status for status in done if isinstance(status.get("tokens_per_second"), (int, float))]
    walls = [status["duration_s"] for status in done if isinstance(status.get("duration_s"), (int, float))]
    fleet = None
    if rates or walls:
        bounds = sum(1 for status in rates if "upper bound" in (status.get("tokens_per_second_basis") or ""))
        fleet = "%s tokens/s together over %d host(s)%s; wall time %s (the slowest host: the hosts train side by side)" % (
            ("<= " if bounds else "") + "%.0f" % sum(status["tokens_per_second"] for status in rates) if rates else "-", len(rates),
            " (%d of them an upper bound)" % bounds if bounds else "", _duration(max(walls)) if walls else "-")
    return {"hosts": len(entries), "counts": [{"category": name, "count": counts.get(name, 0)} for name in order],
            "problems": problems, "fleet": fleet}


def counts_text(summary: dict) -> str:
    """``5 host(s): 2 trained, 1 already done, 1 failed, 1 refused``."""
    return "%d host(s): %s" % (summary["hosts"], ", ".join("%d %s" % (item["count"], item["category"]) for item in summary["counts"]))


def _host_section(entry: dict, results_dir: str, charted: set) -> dict:
    host = entry["row"]["host"]
    return {
        "name": host,
        "lines": entry["lines"],
        "notes": entry["notes"],
        # LLaMA-Factory's own loss plots only where the report's loss chart does not show this host
        "plots": [] if host in charted else [_plot(what, host, path, results_dir) for what, path in entry["plots"]],
        "samples": _table(SAMPLE_COLUMNS, entry["samples"]) if entry["samples"] else None,
    }


def report_context(title: str, entries: list, results_dir: str) -> dict:
    """What both pages show, decided once: the title, the summary, the charts, the two tables and one section per host."""
    rows = [entry["row"] for entry in entries]
    plotted = charts.chart_hosts(entries)
    drawn = charts.draw([host for host, entry in zip(plotted, entries) if entry["category"] != "not finished"])
    loss_drawn = any(chart["kind"] == "loss" and chart["svg"] for chart in drawn)
    charted = {host["host"] for host, entry in zip(plotted, entries) if loss_drawn and entry["category"] != "not finished" and charts.has_data("loss", [host])}
    summary = fleet_summary(entries)
    return {
        "title": title,
        "summary": {**summary, "line": counts_text(summary)},
        "charts": [{**chart, "file": CHART_FILE % chart["kind"], "element": markupsafe.Markup(chart["element"]) if chart["element"] else None}
                   for chart in drawn],
        "charts_note": None if charts.available() else charts.MISSING,
        "tables": [_table(columns, rows, heading) for heading, columns in TABLES],
        "hosts": [_host_section(entry, results_dir, charted) for entry in entries],
    }


def render_pages(title: str, entries: list, results_dir: str) -> dict:
    """Page file name -> its text, every page rendered from the same context; the charts' SVG files beside them."""
    context = report_context(title, entries, results_dir)
    pages = {page: _environment().get_template(template).render(context) for page, template in PAGES.items()}
    pages.update({chart["file"]: chart["svg"] for chart in context["charts"] if chart["svg"]})
    return pages


def write_report(results_dir: str, title: str = "radeonlab.llm LoRA fleet report", not_finished=()) -> dict:
    entries = [load_host(results_dir, host, host not in not_finished) for host in hosts(results_dir, not_finished)]
    pages = render_pages(title, entries, results_dir)
    changed = {page: write_text_if_changed(os.path.join(results_dir, page), text) for page, text in pages.items()}
    for kind, _title in charts.KINDS:  # a chart not drawn this time: its old file would show an earlier fleet
        stale = os.path.join(results_dir, CHART_FILE % kind)
        if CHART_FILE % kind not in pages and os.path.exists(stale):
            os.unlink(stale)
            changed[CHART_FILE % kind] = True
    return {"changed": any(changed.values()), "files": changed, "hosts": [entry["row"]["host"] for entry in entries],
            "not_finished": sorted(not_finished), "markdown": os.path.join(results_dir, "report.md"), "html": os.path.join(results_dir, "report.html")}


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m radeonlab_lora_report.report")
    parser.add_argument("results_dir")
    parser.add_argument("--not-finished", action="append", default=[], metavar="HOST",
                        help="a host of the play that did not get to its results this run")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isdir(args.results_dir):
        print("%s: RESULTS_DIR %s is not a directory" % (parser.prog, args.results_dir), file=sys.stderr)
        return 2
    print(json.dumps(write_report(os.path.abspath(args.results_dir), not_finished=tuple(args.not_finished)), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

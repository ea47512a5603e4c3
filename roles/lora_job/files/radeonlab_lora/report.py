# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report: one Markdown and one HTML page over the per-host result folders on the controller.

``python -m radeonlab_lora.report RESULTS_DIR`` reads ``RESULTS_DIR/<host>/{host.json,status.json,
trainer_state.json,training_loss.png}`` (what the lora_job role fetched) and writes
``RESULTS_DIR/report.md`` and ``RESULTS_DIR/report.html`` (loss plots embedded as data URIs), only when
their content changes, so a re-run of an unchanged fleet changes nothing. Prints a JSON summary.
"""

from __future__ import annotations

import base64
import html
import json
import os
import sys

from .state import read_json, write_text_if_changed

COLUMNS = [
    ("host", "Host"), ("gpu", "GPU"), ("gfx", "gfx"), ("override", "Override"), ("rocm", "ROCm"),
    ("torch", "torch / HIP"), ("attention", "Attention"), ("state", "Job"), ("final_loss", "Final loss"),
    ("first_loss", "First loss"), ("duration", "Duration"),
]


def _loss(value) -> str:
    return "%.4f" % value if isinstance(value, (int, float)) else "-"


def _duration(seconds) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return "%d:%02d:%02d" % (hours, minutes, secs)


def host_row(results_dir: str, host: str) -> dict:
    """One table row from a host's folder; missing files give '-' rather than an error."""
    folder = os.path.join(results_dir, host)
    info = read_json(os.path.join(folder, "host.json")) or {}
    status = read_json(os.path.join(folder, "status.json")) or {}
    torch = info.get("torch") or "-"
    if info.get("hip"):
        torch = "%s / HIP %s" % (torch, info["hip"])
    elif info.get("torch"):
        torch = "%s / no HIP (CPU build)" % torch
    attention = status.get("attention") or info.get("attention") or "-"
    if info.get("attention_reason"):
        attention = "%s (%s)" % (attention, info["attention_reason"])
    return {
        "host": host,
        "gpu": info.get("gpu") or "-",
        "gfx": info.get("gfx") or "-",
        "override": info.get("override") or "none",
        "rocm": info.get("rocm") or "-",
        "torch": torch,
        "attention": attention,
        "state": status.get("state") or "not run",
        "final_loss": _loss(status.get("final_loss")),
        "first_loss": _loss(status.get("first_loss")),
        "duration": _duration(status.get("duration_s")),
        "steps": "%s/%s" % (status.get("global_step", "-"), status.get("max_steps", "-")),
        "retries": status.get("retry_reasons") or [],
        "message": status.get("message") or "",
        "plot": os.path.join(host, "training_loss.png") if os.path.isfile(os.path.join(folder, "training_loss.png")) else None,
    }


def hosts(results_dir: str) -> list:
    return sorted(name for name in os.listdir(results_dir) if os.path.isdir(os.path.join(results_dir, name)))


def render_markdown(title: str, rows: list) -> str:
    lines = ["# %s" % title, "", "| %s |" % " | ".join(label for _key, label in COLUMNS), "|%s" % ("---|" * len(COLUMNS))]
    for row in rows:
        lines.append("| %s |" % " | ".join(str(row[key]).replace("|", "\\|") for key, _label in COLUMNS))
    for row in rows:
        lines += ["", "## %s" % row["host"], "", "- job: %s, steps %s" % (row["state"], row["steps"])]
        if row["message"]:
            lines.append("- %s" % row["message"])
        for reason in row["retries"]:
            lines.append("- retried: %s" % reason)
        if row["plot"]:
            lines += ["", "![loss of %s](%s)" % (row["host"], row["plot"])]
    return "\n".join(lines) + "\n"


def render_html(title: str, rows: list, results_dir: str) -> str:
    esc = html.escape
    head = "".join("<th>%s</th>" % esc(label) for _key, label in COLUMNS)
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % esc(str(row[key])) for key, _label in COLUMNS) for row in rows)
    sections = []
    for row in rows:
        parts = ["<h2>%s</h2>" % esc(row["host"]), "<p>job: %s, steps %s</p>" % (esc(row["state"]), esc(row["steps"]))]
        if row["message"]:
            parts.append("<p>%s</p>" % esc(row["message"]))
        parts += ["<p>retried: %s</p>" % esc(reason) for reason in row["retries"]]
        if row["plot"]:
            with open(os.path.join(results_dir, row["plot"]), "rb") as handle:
                data = base64.b64encode(handle.read()).decode("ascii")
            parts.append('<img alt="loss of %s" src="data:image/png;base64,%s">' % (esc(row["host"]), data))
        sections.append("\n".join(parts))
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #999;padding:4px}"
        "img{max-width:640px}</style></head>\n<body><h1>%s</h1>\n<table><tr>%s</tr>%s</table>\n%s\n</body></html>\n"
        % (esc(title), esc(title), head, body, "\n".join(sections))
    )


def write_report(results_dir: str, title: str = "radeonlab.llm LoRA fleet report") -> dict:
    rows = [host_row(results_dir, host) for host in hosts(results_dir)]
    changed = {
        "report.md": write_text_if_changed(os.path.join(results_dir, "report.md"), render_markdown(title, rows)),
        "report.html": write_text_if_changed(os.path.join(results_dir, "report.html"), render_html(title, rows, results_dir)),
    }
    return {"changed": any(changed.values()), "files": changed, "hosts": [row["host"] for row in rows],
            "markdown": os.path.join(results_dir, "report.md"), "html": os.path.join(results_dir, "report.html")}


def main(argv: list | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("usage: python -m radeonlab_lora.report RESULTS_DIR", file=sys.stderr)
        return 2
    print(json.dumps(write_report(os.path.abspath(args[0])), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

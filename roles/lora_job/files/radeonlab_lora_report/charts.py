# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report's charts, drawn with matplotlib as SVG text the HTML page inlines (no image files, no page assets).

``chart_hosts`` turns the report's per-host entries into what the charts plot (pure: no matplotlib); ``draw`` draws
the three charts from it: every host's training loss (solid) and eval loss (dashed) against step, tokens/s per host,
and the plan's memory estimate beside the measured peak per host. A host keeps its colour in every chart (``colours``,
by its place in the fleet). Without matplotlib ``draw`` returns no chart and ``MISSING`` says why; the report renders
without them. The SVG is the same for the same data (no date, fixed ids), so an unchanged fleet rewrites nothing.
"""

from __future__ import annotations

import io
import sys

try:
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
except ImportError:
    matplotlib = None

# matplotlib's tab10, so that the colours exist without it (the pure part is tested without drawing)
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
KINDS = [
    ("loss", "Training loss (solid) and eval loss (dashed) by step"),
    ("tokens", "Training throughput per host (tokens/s; hatched: an upper bound)"),
    ("memory", "Memory per host: plan estimate (hatched) and measured peak (filled)"),
]
PEAK_KINDS = {"gpu_allocated": "GPU allocated", "cpu_rss": "CPU RSS"}  # status.json peak_memory.kind, as the report names it
NO_DATA = {"loss": "no host sent back a trainer state with logged losses", "tokens": "no host measured tokens/s",
           "memory": "no host has a plan estimate or a measured peak"}
MISSING = ("no charts: matplotlib is not installed in the controller's Python (%s); "
           "`%s -m pip install matplotlib` there draws them on the next run" % (sys.executable, sys.executable))


def available() -> bool:
    return matplotlib is not None


def colours(hosts: list) -> dict:
    """Host -> colour, by its place in the fleet's sorted list (the 11th host takes the first colour again)."""
    return {host: PALETTE[index % len(PALETTE)] for index, host in enumerate(hosts)}


def _points(history: list, key: str) -> list:
    return [(entry["step"], entry[key]) for entry in history
            if isinstance(entry, dict) and isinstance(entry.get("step"), (int, float)) and isinstance(entry.get(key), (int, float))]


def loss_series(trainer_state: dict) -> dict:
    """``trainer_state.json``'s ``log_history`` as ``{"loss": [(step, loss)], "eval_loss": [(step, loss)]}``."""
    history = (trainer_state or {}).get("log_history") or []
    return {"loss": _points(history, "loss"), "eval_loss": _points(history, "eval_loss")}


def _measure(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def chart_hosts(entries: list) -> list:
    """Per host, what the charts plot: name, colour, losses, tokens/s (and whether an upper bound), estimate and peak GiB."""
    palette = colours([entry["row"]["host"] for entry in entries])
    found = []
    for entry in entries:
        status, host = entry["status"], entry["row"]["host"]
        rate = status.get("tokens_per_second")
        peak = status.get("peak_memory") or {}
        found.append({
            "host": host,
            "colour": palette[host],
            "device": entry["device"],
            **loss_series(entry.get("trainer_state") or {}),
            "tokens": _measure(rate),
            "upper_bound": "upper bound" in (status.get("tokens_per_second_basis") or ""),
            "estimate": _measure((status.get("plan") or {}).get("needed_gib")) if (status.get("plan") or {}).get("decision") != "refuse" else None,
            "peak": _measure(peak.get("gib")),
            "peak_kind": peak.get("kind"),
        })
    return found


def has_data(kind: str, hosts: list) -> bool:
    return any(_plotted(kind, host) for host in hosts)


def _plotted(kind: str, host: dict) -> bool:
    if kind == "loss":
        return bool(host["loss"] or host["eval_loss"])
    if kind == "tokens":
        return host["tokens"] is not None
    return host["estimate"] is not None or host["peak"] is not None


# --------------------------------------------------------------------------------------------- drawing
def _draw_loss(axes, hosts: list) -> None:
    for host in hosts:
        for key, style, label in (("loss", "-", host["host"]), ("eval_loss", "--", "%s (eval)" % host["host"])):
            if host[key]:
                steps, values = zip(*host[key])
                axes.plot(steps, values, linestyle=style, color=host["colour"], label=label, marker="o" if len(steps) < 20 else None, markersize=3)
    axes.set_xlabel("Step")
    axes.set_ylabel("Loss")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes.grid(alpha=0.3)


def _draw_tokens(axes, hosts: list) -> None:
    bars = axes.bar([host["host"] for host in hosts], [host["tokens"] for host in hosts], color=[host["colour"] for host in hosts],
                    hatch=None, edgecolor="black", linewidth=0.5)
    for patch, host in zip(bars, hosts):
        if host["upper_bound"]:
            patch.set_hatch("//")
    axes.bar_label(bars, labels=["%s%.0f" % ("<= " if host["upper_bound"] else "", host["tokens"]) for host in hosts], fontsize="small")
    axes.set_xlabel("Host")
    axes.set_ylabel("Tokens/s")
    axes.margins(y=0.15)
    axes.grid(axis="y", alpha=0.3)


def _draw_memory(axes, hosts: list) -> None:
    width = 0.38
    for index, host in enumerate(hosts):
        if host["estimate"] is not None:
            axes.bar(index - width / 2, host["estimate"], width, facecolor="white", edgecolor=host["colour"], hatch="//", linewidth=1.2)
        if host["peak"] is not None:
            axes.bar(index + width / 2, host["peak"], width, color=host["colour"], edgecolor="black", linewidth=0.5)
    labels = []
    for host in hosts:
        peak = "\npeak: %s" % PEAK_KINDS.get(host["peak_kind"], host["peak_kind"]) if host["peak"] is not None else ""
        labels.append("%s\n%s%s" % (host["host"], host["device"], peak))
    axes.set_xticks(range(len(hosts)), labels, fontsize="small")
    axes.set_ylabel("GiB")
    axes.legend(handles=[Patch(facecolor="white", edgecolor="#555555", hatch="//", label="plan estimate"),
                         Patch(facecolor="#555555", edgecolor="black", label="measured peak")],
                loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes.grid(axis="y", alpha=0.3)


DRAW = {"loss": _draw_loss, "tokens": _draw_tokens, "memory": _draw_memory}


def _svg(kind: str, title: str, hosts: list) -> str:
    # fixed ids per chart (svg.hashsalt): unique within the page, the same on every run; text stays text (fonttype none)
    with matplotlib.rc_context({"svg.hashsalt": "radeonlab-%s" % kind, "svg.fonttype": "none", "text.parse_math": False, "font.size": 10}):
        figure = Figure(figsize=(8.0, 4.0), layout="constrained")
        axes = figure.add_subplot()
        DRAW[kind](axes, hosts)
        axes.set_title(title)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return buffer.getvalue()


def draw(hosts: list) -> list:
    """``[{"kind", "title", "svg" (the whole file), "element" (the <svg> alone, for inlining), "missing"}]``, one per kind,
    ``missing`` (and no svg) where no host has the data; none at all without matplotlib (then ``MISSING`` says why)."""
    if matplotlib is None:
        return []
    charts = []
    for kind, title in KINDS:
        plotted = [host for host in hosts if _plotted(kind, host)]
        chart = {"kind": kind, "title": title, "svg": None, "element": None, "missing": None}
        if not plotted:
            chart["missing"] = NO_DATA[kind]
        else:
            chart["svg"] = _svg(kind, title, plotted)
            chart["element"] = chart["svg"][chart["svg"].index("<svg"):]
        charts.append(chart)
    return charts

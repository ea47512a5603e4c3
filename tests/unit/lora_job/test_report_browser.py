# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report of a mixed fleet, opened in headless Chromium (`make units` installs Debian's chromium).

Five hosts as the lora_job role leaves them on the controller: trained on a GPU after an OOM retry, already done
(its status still says what the earlier run did), trained on the CPU fallback, failed, and refused (does not fit).
The DOM Chromium built is checked: the summary's counts, the failures listed first with their reason, one chart per
kind with the hosts' text in it, every image decoded. The screenshot stays in the test's tmp_path (its path is printed).
"""

from __future__ import annotations

import html.parser
import json
import shutil
import subprocess
import time

from radeonlab_lora_report import charts, report
from test_report import GPU_PLAN, LAB_STATUS, NAVI31_STATUS, PNG, QLORA_UNAVAILABLE

# Runs on load, in the test's copy of the page only (the report has no script): what a reader would see broken.
PROBE = """<script>window.addEventListener("load", () => {
  document.querySelectorAll("img").forEach(i => i.setAttribute("data-natural-width", i.naturalWidth));
  document.querySelectorAll("figure.chart svg").forEach(s => {
    const box = s.getBoundingClientRect(); s.setAttribute("data-rendered", Math.round(box.width) + "x" + Math.round(box.height)); });
  document.body.setAttribute("data-probed", "yes");
});</script>"""


def trainer_state(steps: int, start: float, eval_every: int = 0) -> dict:
    history = [{"step": step, "loss": round(start * 0.9 ** step, 4), "epoch": step / steps} for step in range(1, steps + 1)]
    if eval_every:
        history += [{"step": step, "eval_loss": round(start * 0.95 ** step, 4)} for step in range(eval_every, steps + 1, eval_every)]
    return {"global_step": steps, "max_steps": steps, "log_history": sorted(history, key=lambda entry: entry["step"])}


FLEET = {
    "navi31": ({"gpu": "Radeon RX 7900 XTX", "gfx": "gfx1100", "rocm": "6.4.0", "torch": "2.9.1", "hip": "6.4.43482", "this_run": "trained"},
               {**NAVI31_STATUS, "adapter_dir": "/srv/lora/job/output", "message": "trained in 2 attempt(s) this run; adapter in /srv/lora/job/output"},
               trainer_state(24, 7.8, eval_every=8)),
    "navi21": ({"gpu": "Radeon RX 6800 XT", "gfx": "gfx1030", "rocm": "6.4.0", "torch": "2.9.1", "hip": "6.4.43482", "this_run": "already done"},
               {"state": "succeeded", "message": "trained in 1 attempt(s) this run; adapter in /srv/lora/job/output", "plan": GPU_PLAN,
                "device": {"train_on": "gpu", "ok": True}, "attempts": [{"outcome": "succeeded"}], "tokens_per_second": 4100.0,
                "tokens_per_second_basis": "num_input_tokens_seen / train_runtime", "peak_memory": {"kind": "gpu_allocated", "gib": 4.9},
                "global_step": 24, "max_steps": 24, "duration_s": 31.0, "first_loss": 7.5, "final_loss": 1.4},
               trainer_state(24, 7.5)),
    "cpu-box": ({"gpu": "Radeon RX 7900 XTX", "gfx": "gfx1100", "torch": "2.9.1", "this_run": "trained"},
                {**LAB_STATUS, "global_step": 12, "max_steps": 12, "duration_s": 95.0}, trainer_state(12, 8.1)),
    "broken": ({"gpu": "Radeon RX 7600", "gfx": "gfx1102", "this_run": "trained"},
               {"state": "failed", "message": "llamafactory-cli train exited 1: HIP error: invalid device function (train.log)", "plan": GPU_PLAN,
                "device": {"train_on": "gpu", "ok": True}, "attempts": [{"outcome": "failed", "failure": "hip_kernel"}] * 3}, None),
    "small16": ({"gpu": "Radeon RX 7600 XT", "gfx": "gfx1102", "this_run": "trained"},
                {"state": "failed", "message": "does not fit", "device": {"train_on": "gpu", "ok": True},
                 "plan": {"decision": "refuse", "needed_gib": 22.4, "alternatives": {"qlora4": QLORA_UNAVAILABLE}}}, None),
}


def write_fleet(root) -> None:
    for host, (info, status, state) in FLEET.items():
        folder = root / host
        folder.mkdir()
        (folder / "host.json").write_text(json.dumps(info))
        (folder / "status.json").write_text(json.dumps(status))
        if state:
            (folder / "trainer_state.json").write_text(json.dumps(state))
    (root / "broken" / "training_loss.png").write_bytes(PNG)  # LLaMA-Factory's plot of a host the loss chart lacks: shown, and must decode


class Dom(html.parser.HTMLParser):
    """The elements (tag, attributes) of Chromium's DOM dump, and the text under each chart and each summary item."""

    def __init__(self):
        super().__init__()
        self.elements, self.open, self.text = [], [], {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        key = attributes.get("data-chart") or attributes.get("data-host") if tag in ("figure", "li") else None
        self.open.append(key)
        if key:
            self.text.setdefault(key, "")

    def handle_endtag(self, tag):
        if self.open:
            self.open.pop()

    def handle_data(self, data):
        for key in self.open:
            if key:
                self.text[key] += data

    def find(self, tag, **wanted):
        return [attrs for name, attrs in self.elements if name == tag and all(attrs.get(key.replace("_", "-")) == value for key, value in wanted.items())]


def chromium(*args) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    assert binary, "chromium is not installed: `make units` installs Debian's chromium package (apt-get install chromium)"
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", *args],
                          capture_output=True, text=True, timeout=60, check=True)


def test_the_report_of_a_mixed_fleet_in_headless_chromium(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    write_fleet(results)
    assert charts.available(), "matplotlib is pinned in requirements-dev.txt: the venv must have it"
    report.write_report(str(results), not_finished=())
    page = (results / "report.html").read_text()
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))

    started = time.monotonic()
    dump = chromium("--virtual-time-budget=5000", "--dump-dom", probed.as_uri()).stdout
    screenshot = tmp_path / "report.png"
    chromium("--window-size=1280,3000", "--screenshot=%s" % screenshot, (results / "report.html").as_uri())
    print("chromium: %.1f s for the DOM dump and the screenshot; screenshot %s" % (time.monotonic() - started, screenshot))
    assert screenshot.stat().st_size > 10000 and screenshot.read_bytes().startswith(b"\x89PNG")

    dom = Dom()
    dom.feed(dump)
    assert dom.find("body", data_probed="yes"), "the probe did not run: Chromium dumped the DOM before the load event"
    counts = {attrs["data-category"]: int(attrs["data-count"]) for attrs in dom.find("span") if "data-count" in attrs}
    assert counts == {"trained": 2, "already done": 1, "failed": 1, "refused": 1}
    problems = [(attrs["data-host"], attrs["data-category"]) for attrs in dom.find("li") if "problem" in attrs.get("class", "")]
    assert problems == [("broken", "failed"), ("small16", "refused")]
    assert "HIP error: invalid device function" in dom.text["broken"] and "bitsandbytes unavailable on this host" in dom.text["small16"]

    figures = [attrs["data-chart"] for attrs in dom.find("figure") if "data-chart" in attrs]
    assert sorted(figures) == ["loss", "memory", "tokens"]
    for kind, title in charts.KINDS:
        assert title in dom.text[kind]
    for host in ("navi31", "navi21", "cpu-box"):
        assert all(host in dom.text[kind] for kind in ("loss", "tokens", "memory")), host
    assert "navi31 (eval)" in dom.text["loss"] and "Step" in dom.text["loss"] and "Tokens/s" in dom.text["tokens"] and "GiB" in dom.text["memory"]
    assert "broken" not in dom.text["loss"] and "small16" not in dom.text["tokens"]
    rendered = [attrs.get("data-rendered", "0x0") for attrs in dom.find("svg") if "data-rendered" in attrs]
    assert len(rendered) == 3 and all(int(width) > 300 and int(height) > 100 for width, height in (size.split("x") for size in rendered)), rendered

    images = dom.find("img")
    assert len(images) == 1 and images[0]["alt"] == "loss of broken" and images[0]["src"].startswith("data:image/png;base64,")
    # the stand-in PNG of the unit tests is 8 bytes of signature and zeros: no browser decodes it
    assert images[0]["data-natural-width"] == "0"


def test_an_already_done_host_says_so_once_and_never_that_it_trained_this_run(tmp_path):
    write_fleet(tmp_path)
    report.write_report(str(tmp_path))
    for page in ("report.md", "report.html"):
        text = (tmp_path / page).read_text()
        assert "this run" not in text.split("navi21</h2>" if page.endswith("html") else "## navi21")[1].split("<h2>" if page.endswith("html") else "\n## ")[0]
        assert text.count("already done (trained earlier: 1 attempt(s))") == 2  # the table's outcome and the section's status
        assert "trained in 2 attempt(s) this run" not in text  # a succeeded job's message only repeats the status


def test_the_markdown_says_what_the_html_says(tmp_path):
    write_fleet(tmp_path)
    result = report.write_report(str(tmp_path))
    markdown, page = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    assert "5 host(s): 2 trained, 1 already done, 1 failed, 1 refused\n" in markdown
    assert ("- **broken** failed: llamafactory-cli train exited 1: HIP error: invalid device function (train.log)\n"
            "- **small16** refused: does not fit (QLoRA 4-bit planned, bitsandbytes unavailable") in markdown
    fleet = "12735 tokens/s together over 3 host(s) (1 of them an upper bound); wall time 0:01:35 (the slowest host"
    assert "Fleet: <= " + fleet in markdown and "Fleet: &lt;= " + fleet in page
    for kind, title in charts.KINDS:
        assert "![%s](report_%s.svg)" % (title, kind) in markdown
        assert (tmp_path / ("report_%s.svg" % kind)).read_text().startswith("<?xml")
    assert result["files"]["report_loss.svg"]
    assert not report.write_report(str(tmp_path))["changed"], "the charts must be the same SVG for the same fleet"
    (tmp_path / "navi31" / "status.json").write_text(json.dumps({"state": "failed", "message": "x"}))
    for host in ("navi21", "cpu-box", "navi31"):
        (tmp_path / host / "trainer_state.json").unlink()
    assert report.write_report(str(tmp_path))["changed"] and not (tmp_path / "report_loss.svg").exists()
    assert "Training loss (solid) and eval loss (dashed) by step: no host sent back a trainer state with logged losses" in (tmp_path / "report.md").read_text()


def test_without_matplotlib_the_report_renders_and_says_why_it_has_no_charts(tmp_path, monkeypatch):
    monkeypatch.setattr(charts, "matplotlib", None)
    write_fleet(tmp_path)
    report.write_report(str(tmp_path))
    markdown, page = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    assert charts.MISSING in markdown and "<svg" not in page and not list(tmp_path.glob("report_*.svg"))
    assert "no charts: matplotlib is not installed" in page and "5 host(s): 2 trained" in markdown


def test_a_host_keeps_its_colour_in_every_chart():
    hosts = charts.chart_hosts([report.load_host("/nonexistent", name, finished=True) for name in ("a", "b", "c")])
    assert [host["colour"] for host in hosts] == charts.PALETTE[:3]
    assert charts.colours(["h%02d" % index for index in range(12)])["h10"] == charts.PALETTE[0]
    svg = charts.draw([{**host, "tokens": 10.0 * (index + 1), "estimate": 2.0, "peak": 1.5, "loss": [(1, 2.0), (2, 1.0)]}
                       for index, host in enumerate(hosts)])
    for chart in svg:
        assert all(colour in chart["svg"] for colour in charts.PALETTE[:3]), chart["kind"]


def test_loss_series_reads_the_trainer_states_log_history():
    state = {"log_history": [{"step": 1, "loss": 2.0}, {"step": 2, "loss": 1.5, "eval_loss": "x"}, {"step": 2, "eval_loss": 1.8},
                             {"loss": 9.0}, "junk", {"step": 3, "train_runtime": 2.0}]}
    assert charts.loss_series(state) == {"loss": [(1, 2.0), (2, 1.5)], "eval_loss": [(2, 1.8)]}
    assert charts.loss_series({}) == {"loss": [], "eval_loss": []}

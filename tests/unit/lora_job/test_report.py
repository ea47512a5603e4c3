# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report over fetched per-host folders."""

from __future__ import annotations

import json
import os

import pytest

from radeonlab_lora_report import report

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

GPU_PLAN = {"decision": "train", "device": "gpu", "precision": "bf16", "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
            "gradient_checkpointing": False, "needed_gib": 5.08, "vram_gib": 23.98}
CPU_PLAN = {"decision": "train", "device": "cpu", "precision": "fp32", "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
            "gradient_checkpointing": False, "needed_gib": 1.2, "available_gib": 17.2}
GPU_DEVICE = {"requested": "auto", "train_on": "gpu", "ok": True, "reason": "torch sees the GPUs of the facts", "message": "training on the GPU",
              "facts_gpus": [{"index": 0, "gfx": "gfx1100", "name": "Radeon RX 7900 XTX", "vram_gib": 23.98}]}
LAB_DEVICE = {**GPU_DEVICE, "train_on": "cpu", "reason": "torch has no HIP here (torch_without_hip)",
              "message": "training on the CPU: torch has no HIP here (torch_without_hip)"}
ATTEMPT_OOM = {"settings": {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "gradient_checkpointing": False},
               "outcome": "failed", "failure": "oom"}
ATTEMPT_OK = {"settings": {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "gradient_checkpointing": False},
              "outcome": "succeeded", "failure": None}
NAVI31_STATUS = {"state": "succeeded", "final_loss": 1.29, "first_loss": 7.84, "duration_s": 17.2, "attention": "sdpa", "global_step": 96,
                 "max_steps": 96, "plan": GPU_PLAN, "device": GPU_DEVICE, "gpu_plan": None, "attempts": [ATTEMPT_OOM, ATTEMPT_OK],
                 "retry_reasons": ["out of memory at batch 8: retrying at batch 4 x accumulation 2"],
                 "peak_memory": {"kind": "gpu_allocated", "gib": 4.61}, "tokens_per_second": 8123.4,
                 "tokens_per_second_basis": "num_input_tokens_seen / train_runtime"}
LAB_STATUS = {"state": "succeeded", "final_loss": 1.31, "plan": CPU_PLAN, "device": LAB_DEVICE, "gpu_plan": GPU_PLAN, "attempts": [ATTEMPT_OK],
              "peak_memory": {"kind": "cpu_rss", "gib": 2.5}, "tokens_per_second": 512.0, "tokens_per_second_basis": "samples x cutoff_len (upper bound)"}


QLORA_UNAVAILABLE = {"needed_gib": 12.32, "fits": True, "enabled": True, "available": False,
                     "reason": "torch 2.9.1+cpu has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU"}
QLORA_PLAN = {"decision": "train", "device": "gpu", "precision": "qlora4", "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
              "gradient_checkpointing": True, "double_quantization": True, "paged_optimizer": False, "needed_gib": 12.48, "vram_gib": 15.98}


@pytest.mark.parametrize("plan, text", [
    (QLORA_PLAN, "QLoRA 4-bit (NF4, double quant), batch 2 x 4, ckpt on, 12.5 GiB"),
    ({**QLORA_PLAN, "paged_optimizer": True}, "QLoRA 4-bit (NF4, double quant, paged AdamW), batch 2 x 4, ckpt on, 12.5 GiB"),
    ({"decision": "refuse", "needed_gib": 22.4, "alternatives": {"qlora4": QLORA_UNAVAILABLE}},
     "QLoRA 4-bit planned, bitsandbytes unavailable on this host (12.3 GiB; bf16 needs 22.4 GiB): torch 2.9.1+cpu has no HIP"),
    ({"decision": "refuse", "needed_gib": 22.4, "alternatives": {"qlora4": {**QLORA_UNAVAILABLE, "enabled": False}}},
     "would not fit in bf16 (needs 22.4 GiB); QLoRA 4-bit would (12.3 GiB) but allow_qlora is off"),
    ({"decision": "refuse", "needed_gib": 22.4, "alternatives": {"qlora4": {**QLORA_UNAVAILABLE, "fits": False}}}, "would not fit (needs 22.4 GiB)"),
])
def test_plan_summary_names_qlora(plan, text):
    assert report.plan_summary(plan).startswith(text), report.plan_summary(plan)


def _host(root, name, info, status, plot=True):
    folder = root / name
    folder.mkdir()
    (folder / "host.json").write_text(json.dumps(info))
    (folder / "status.json").write_text(json.dumps(status))
    if plot:
        (folder / "training_loss.png").write_bytes(PNG)


def test_report_lists_every_host_with_override_loss_and_embedded_plot(tmp_path):
    _host(tmp_path, "navi31", {"gpu": "Radeon RX 7900 XTX", "gfx": "gfx1100", "rocm": "6.4.0", "torch": "2.9.1", "hip": "6.4.43482"}, NAVI31_STATUS)
    _host(tmp_path, "lab", {"gpu": "Radeon RX 7900 XTX", "gfx": "gfx1100", "override": "HSA_OVERRIDE_GFX_VERSION=11.0.0", "torch": "2.9.1",
                            "this_run": "already done"}, LAB_STATUS, plot=False)
    result = report.write_report(str(tmp_path))
    assert result["changed"] and result["hosts"] == ["lab", "navi31"]
    markdown = (tmp_path / "report.md").read_text()
    assert "| navi31 | Radeon RX 7900 XTX | gfx1100 | none | 6.4.0 | 2.9.1 / HIP 6.4.43482 |" in markdown
    assert ("| navi31 | GPU bf16 | 4 x 2 | off | sdpa | 5.1 of 24.0 GiB VRAM | 4.61 GiB GPU allocated | 8123 | 96/96 | 0:00:17 | 2 (after oom) "
            "| 7.8400 -> 1.2900 | - | trained in 2 attempt(s) |") in markdown
    assert ("| lab | CPU fp32 — torch has no HIP here (torch_without_hip); a real Radeon RX 7900 XTX would get: bf16, batch 8 x 1, ckpt off, 5.1 GiB "
            "| 4 x 2 | off | - | 1.2 of 17.2 GiB RAM | 2.50 GiB CPU RSS | <= 512 | - | - | 1 | - -> 1.3100 | - "
            "| already done (trained earlier: 1 attempt(s)) |") in markdown
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in markdown and "2.9.1 / no HIP (CPU build)" in markdown
    assert "![loss of navi31](navi31/training_loss.png)" in markdown
    assert "- **Throughput:** <= 512 tokens/s (samples x cutoff_len (upper bound))\n" in markdown
    assert "- **Status:** already done (trained earlier: 1 attempt(s))\n- **Device & precision:** CPU fp32 — torch has no HIP here" in markdown
    assert "- **Retried:** out of memory at batch 8: retrying at batch 4 x accumulation 2\n" in markdown
    assert "2 host(s): 1 trained, 1 already done, 0 failed, 0 refused\n" in markdown
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "<td>gfx1100</td>" in page and "<td>&lt;= 512</td>" in page


def test_second_report_of_unchanged_results_changes_nothing(tmp_path):
    _host(tmp_path, "a", {"gpu": "x"}, {"state": "succeeded", "final_loss": 1.0})
    assert report.write_report(str(tmp_path))["changed"]
    mtime = os.stat(tmp_path / "report.html").st_mtime_ns
    assert not report.write_report(str(tmp_path))["changed"]
    assert os.stat(tmp_path / "report.html").st_mtime_ns == mtime


def test_missing_files_give_dashes_not_errors(tmp_path):
    (tmp_path / "empty-host").mkdir()
    result = report.write_report(str(tmp_path))
    markdown = (tmp_path / "report.md").read_text()
    assert "| empty-host | - | - | none | - | - |" in markdown
    assert "| empty-host | - | - | - | - | - | - | - | - | - | - | - | - | not run |" in markdown
    assert result["hosts"] == ["empty-host"]
    assert report.main([str(tmp_path / "nope")]) == 2


def test_a_host_that_did_not_finish_this_run_is_marked_and_its_old_results_called_old(tmp_path, capsys):
    _host(tmp_path, "up", {"gpu": "x"}, {"state": "succeeded", "final_loss": 1.0})
    _host(tmp_path, "down", {"gpu": "y"}, {"state": "succeeded", "final_loss": 2.0, "message": "done"}, plot=False)
    assert report.main([str(tmp_path), "--not-finished", "down", "--not-finished", "never-seen"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["hosts"] == ["down", "never-seen", "up"] and summary["not_finished"] == ["down", "never-seen"]
    markdown = (tmp_path / "report.md").read_text()
    rows = {line.split(" | ")[0][2:]: line for line in markdown.splitlines() if line.startswith("| ") and line.count("|") > 12}
    assert rows["down"].endswith("| %s |" % report.NOT_FINISHED) and rows["never-seen"].endswith("| %s |" % report.NOT_FINISHED)
    assert rows["up"].endswith("| trained |")
    assert "- the rest of this section is from an earlier run (succeeded)" in markdown
    assert "- no results from any run" in markdown
    assert not (tmp_path / "never-seen").exists()


@pytest.mark.parametrize("info, status, expected", [
    ({}, {"state": "succeeded", "attempt": 1}, "trained in 1 attempt(s)"),
    ({"this_run": "already done"}, {"state": "succeeded", "attempts": [{}, {}]}, "already done (trained earlier: 2 attempt(s))"),
    ({"this_run": "after-training steps"}, {"state": "succeeded", "attempts": [{}]},
     "already done (trained earlier: 1 attempt(s)); this run: the after-training steps"),
    ({}, {"state": "failed", "device": {"ok": False}}, "refused: the GPU facts and torch disagree"),
    ({}, {"state": "failed", "device": {"ok": False, "reason": "torch sees 0 of 1 GPUs"}},
     "refused: the GPU facts and torch disagree (torch sees 0 of 1 GPUs)"),
    ({}, {"state": "failed", "plan": {"decision": "refuse"}}, "refused: does not fit (would not fit (needs - GiB))"),
    ({}, {"state": "failed", "plan": {"decision": "refuse", "needed_gib": 22.4, "alternatives": {"qlora4": QLORA_UNAVAILABLE}}},
     "refused: does not fit (QLoRA 4-bit planned, bitsandbytes unavailable on this host (12.3 GiB; bf16 needs 22.4 GiB): "
     "torch 2.9.1+cpu has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU)"),
    ({}, {"state": "failed"}, "failed"),
    ({}, {"state": "running"}, "running"),
    ({}, {}, "not run"),
])
def test_outcome(info, status, expected):
    assert report.outcome_cell(info, status) == expected


@pytest.mark.parametrize("status, expected", [
    ({"plan": GPU_PLAN}, "GPU bf16"),
    ({"plan": GPU_PLAN, "device": GPU_DEVICE}, "GPU bf16"),
    ({"plan": CPU_PLAN, "device": {**LAB_DEVICE, "reason": "lora_job_device: cpu asked for"}, "gpu_plan": {"decision": "refuse", "needed_gib": 22.4}},
     "CPU fp32 — lora_job_device: cpu asked for; a real Radeon RX 7900 XTX would get: would not fit (needs 22.4 GiB)"),
    ({"device": {**GPU_DEVICE, "ok": False, "reason": "the GPU facts and torch disagree"}}, "GPU refused: the GPU facts and torch disagree"),
    ({}, "-"),
])
def test_device_cell(status, expected):
    assert report.device_cell({}, status) == expected


def test_eval_loss_column_and_the_eval_plot_when_samples_were_held_out(tmp_path):
    _host(tmp_path, "navi31", {"gpu": "x"}, {**NAVI31_STATUS, "first_eval_loss": 5.5037, "final_eval_loss": 3.8442})
    (tmp_path / "navi31" / "training_eval_loss.png").write_bytes(PNG)
    report.write_report(str(tmp_path))
    markdown = (tmp_path / "report.md").read_text()
    assert "| Eval loss first -> final |" in markdown and "| 7.8400 -> 1.2900 | 5.5037 -> 3.8442 | trained in 2 attempt(s) |" in markdown
    assert "![loss of navi31](navi31/training_loss.png)" in markdown and "![eval loss of navi31](navi31/training_eval_loss.png)" in markdown
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and 'alt="eval loss of navi31"' in page


@pytest.mark.parametrize("info, status, expected", [
    ({"serve": {"state": "serving", "url": "http://127.0.0.1:8001/v1", "model": "tiny", "api_key": True, "prompt": "Say hello.",
                "reply": "hi | there"}}, {},
     ['API: http://127.0.0.1:8001/v1, model tiny, API key required; asked "Say hello.", it answered "hi | there"']),
    ({"serve": {"state": "serving", "url": "http://127.0.0.1:8000/v1", "model": "j", "api_key": False, "prompt": "p", "reply": ""}}, {},
     ['API: http://127.0.0.1:8000/v1, model j, no key (loopback); asked "p", it answered ""']),
    ({"serve": {"state": "failed", "message": "the API at x did not answer"}}, {}, ["API: the API at x did not answer"]),
    ({"serve": {"state": "not started: the job did not succeed"}}, {}, ["API: not started: the job did not succeed"]),
    ({"serve": {"state": "not served"}}, {}, []),
    ({}, {"export": {"state": "merged", "dir": "/j/runs/abc/merged", "files": ["config.json", "model.safetensors"], "bytes": 3 << 29}},
     ["merged model: /j/runs/abc/merged (2 files, 1.5 GiB)"]),
    ({}, {"export": {"state": "merged", "dir": "/m", "files": ["model.safetensors"], "bytes": 578_443}}, ["merged model: /m (1 files, 0.6 MiB)"]),
    ({}, {"export": {"state": "failed", "message": "llamafactory-cli export exited 1 (export.log)"}},
     ["export: llamafactory-cli export exited 1 (export.log)"]),
])
def test_the_host_section_names_the_merged_model_and_the_api(info, status, expected):
    assert report.host_notes(info, status) == expected


def test_the_api_line_reaches_both_pages(tmp_path):
    info = {"serve": {"state": "serving", "url": "http://127.0.0.1:8001/v1", "model": "tiny", "api_key": False, "prompt": "Say hello.",
                      "reply": "<b>x</b>"}}
    _host(tmp_path, "h1", info, {"state": "succeeded"})
    report.write_report(str(tmp_path))
    assert 'it answered "<b>x</b>"' in (tmp_path / "report.md").read_text()
    assert "it answered &quot;&lt;b&gt;x&lt;/b&gt;&quot;" in (tmp_path / "report.html").read_text()


@pytest.mark.parametrize("info, cell", [
    ({"torch": "2.13.0+rocm7.1", "hip": "7.1.25424"}, "2.13.0+rocm7.1 / HIP 7.1.25424"),
    # a CUDA build where ROCm was wanted says so: the report must not call it a CPU build
    ({"torch": "2.13.0+cu130", "hip": "", "cuda": "13.0"}, "2.13.0+cu130 / no HIP (CUDA 13.0 build)"),
    ({"torch": "2.13.0+cpu", "hip": "", "cuda": ""}, "2.13.0+cpu / no HIP (CPU build)"),
    ({"torch": "2.9.1"}, "2.9.1 / no HIP (CPU build)"),
    ({}, "-"),
])
def test_torch_cell_names_the_build(info, cell):
    assert report.torch_cell(info) == cell


def test_the_html_page_escapes_a_hostile_value_the_markdown_shows_it_as_written(tmp_path):
    _host(tmp_path, "h1", {"gpu": "<script>alert(1)</script>"}, {"state": "failed", "message": "<script>alert('x')</script> & more"}, plot=False)
    report.write_report(str(tmp_path))
    page = (tmp_path / "report.html").read_text()
    assert "<script>" not in page
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in page
    assert "<p><b>Status:</b> failed: &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more</p>" in page
    assert "- **h1** failed: <script>alert('x')</script> & more" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("value, cell", [
    ("RX | 6600", "RX \\| 6600"),
    ("one\ntwo", "one\\ntwo"),
    ("<b>x</b> & y", "<b>x</b> & y"),
    (None, "None"),
])
def test_markdown_cell(value, cell):
    assert report._markdown_cell(value) == cell


def test_a_pipe_in_a_cell_does_not_split_the_markdown_row(tmp_path):
    _host(tmp_path, "h1", {"gpu": "RX | 6600"}, {"state": "succeeded"}, plot=False)
    (tmp_path / "h1" / "samples.json").write_text(json.dumps({"samples": [{"prompt": "a | b", "base": "c\nd", "adapter": "e"}]}))
    report.write_report(str(tmp_path))
    markdown = (tmp_path / "report.md").read_text()
    assert "| h1 | RX \\| 6600 | - | none | - | - |" in markdown and "| a \\| b | c\\nd | e |" in markdown
    assert "<td>RX | 6600</td>" in (tmp_path / "report.html").read_text()


def test_both_pages_are_rendered_from_the_templates_shipped_in_the_package():
    package = os.path.dirname(os.path.abspath(report.__file__))
    assert report.PAGES == {"report.md": "templates/report.md.j2", "report.html": "templates/report.html.j2"}
    for page, name in report.PAGES.items():
        template = report._environment().get_template(name)
        assert template.filename == os.path.join(package, name) and os.path.isfile(template.filename)
        assert open(template.filename, encoding="utf-8").readline().startswith("{# %s:" % page)
        assert template.environment.autoescape(name) is page.endswith(".html")


@pytest.mark.parametrize(
    "plan, cell",
    [
        ({"needed_gib": 20.3, "vram_gib": 24.0}, "20.3 of 24.0 GiB VRAM"),
        ({"needed_gib": 20.3, "vram_gib": 96.0, "unified_memory": {"pool_gib": 96.0, "shared": False}},
         "20.3 of 96.0 GiB unified memory (a 96.0 GiB pool, carve-out)"),
        ({"needed_gib": 20.3, "vram_gib": 103.8, "unified_memory": {"pool_gib": 120.0, "shared": True}},
         "20.3 of 103.8 GiB unified memory (a 120.0 GiB pool, GTT shared with the OS)"),
        ({"needed_gib": 3.2, "available_gib": 12.0}, "3.2 of 12.0 GiB RAM"),
        ({}, "-"),
    ],
)
def test_estimate_cell_names_unified_memory(plan, cell):
    assert report.estimate_cell({"plan": plan}) == cell


def test_plan_summary_names_unified_memory():
    plan = {"decision": "train", "precision": "bf16", "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1,
            "gradient_checkpointing": False, "needed_gib": 5.1, "vram_gib": 64.0, "unified_memory": {"pool_gib": 64.0, "shared": False}}
    assert report.plan_summary(plan) == "bf16, batch 8 x 1, ckpt off, 5.1 GiB of 64.0 GiB unified memory (carve-out)"
    assert report.plan_summary({**plan, "unified_memory": None}) == "bf16, batch 8 x 1, ckpt off, 5.1 GiB"


def test_the_stages_after_training_show_their_plan_beside_their_peak():
    status = {"plan": {"stages": [{"name": "samples", "where": "gpu", "precision": "qlora4", "needed_gib": 7.9},
                                  {"name": "export", "where": "cpu", "precision": "bf16", "needed_gib": 16.81},
                                  {"name": "api", "where": "gpu", "precision": "qlora4", "needed_gib": 7.9}]},
              "samples": {"state": "answered", "peak_memory": {"kind": "gpu_allocated", "gib": 5.61}},
              "export": {"state": "merged", "peak_memory": {"kind": "cpu_rss", "gib": 15.27}}}
    assert report.stages_note(status) == (
        "after training: samples 7.9 GiB planned (gpu, qlora4), 5.6 GiB measured GPU allocated; export 16.8 GiB planned (cpu, bf16), "
        "15.3 GiB measured CPU RSS; api 7.9 GiB planned (gpu, qlora4)")
    assert report.stages_note({"plan": {"stages": []}}) is None

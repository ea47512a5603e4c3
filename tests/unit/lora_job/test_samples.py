# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Base-vs-adapter answers to the sample prompts: generated once after training, again only when they would change."""

from __future__ import annotations

import json
import os

import pytest
from lora_cases import read_calls

from radeonlab_lora import cli, runner, samples, spec as jobspec, state
from radeonlab_lora_report import report

PROMPTS = ["What is the capital of France?", "Name a colour."]


def run(job, lines=None):
    out = lines if lines is not None else []
    return runner.run_job(jobspec.normalize(job), job.get("gpu"), out.append)


def chats(fake_cli):
    path = fake_cli / "chat.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_dir(job):
    return state.read_json(os.path.join(job["output_dir"], "status.json"))["run_dir"]


def test_chat_args_are_greedy_with_a_fixed_budget_and_load_the_adapter_only_for_the_adapter():
    spec = jobspec.normalize({"model": "/m", "template": "qwen", "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o",
                              "sample_prompts": PROMPTS, "sample_max_new_tokens": 24})
    req = samples.request(spec, "/o/abc")
    base, adapted = samples.chat_args(req, False), samples.chat_args(req, True)
    assert (base["do_sample"], base["max_new_tokens"], base["infer_backend"], "adapter_name_or_path" in base) == (False, 24, "huggingface", False)
    assert adapted["adapter_name_or_path"] == "/o/abc/output" and {k: v for k, v in adapted.items() if k != "adapter_name_or_path"} == base


def test_a_trained_job_answers_its_prompts_with_the_base_model_and_the_adapter(tiny_job, fake_cli):
    job = {**tiny_job, "sample_prompts": PROMPTS}
    assert run(job) == runner.EXIT_OK
    answers = state.read_json(os.path.join(run_dir(job), samples.SAMPLES_FILE))["samples"]
    assert [answer["prompt"] for answer in answers] == PROMPTS
    for answer in answers:
        assert answer["base"].startswith("base says ") and answer["adapter"].startswith("adapter says ")
        assert answer["base"] != answer["adapter"]
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    peak = status["samples"].pop("peak_memory")
    assert status["samples"] == {"state": "answered", "count": 2, "file": "samples.json"}
    assert peak["kind"] == "cpu_rss" and peak["gib"] > 0, "the answering process's own peak (no GPU here)"
    assert [bool(chat.get("adapter_name_or_path")) for chat in chats(fake_cli)] == [False, True]


def test_the_job_counts_as_running_until_its_prompts_are_answered(tiny_job, fake_cli, monkeypatch):
    """The play follows a job until its status says succeeded, then fetches samples.json: answers come first."""
    seen = []
    real = runner.answer_samples

    def spy(prepared, out=print):
        seen.append(state.read_json(os.path.join(prepared.run_dir, "status.json"))["state"])
        return real(prepared, out)

    monkeypatch.setattr(runner, "answer_samples", spy)
    assert run({**tiny_job, "sample_prompts": PROMPTS}) == runner.EXIT_OK
    assert seen == ["running"]
    assert state.read_json(os.path.join(tiny_job["output_dir"], "status.json"))["state"] == "succeeded"


def test_a_rerun_answers_nothing_and_new_prompts_are_answered_without_training_again(tiny_job, fake_cli):
    job = {**tiny_job, "sample_prompts": PROMPTS}
    assert run(job) == runner.EXIT_OK
    assert run(job) == runner.EXIT_OK
    assert len(chats(fake_cli)) == 2 and len(read_calls(fake_cli)) == 1
    newer = {**job, "sample_prompts": ["Count to three."]}
    lines = []
    assert run(newer, lines) == runner.EXIT_OK
    assert len(read_calls(fake_cli)) == 1 and len(chats(fake_cli)) == 4, "answered again, not trained again"
    assert lines[-1].startswith("succeeded: after-training steps done; trained earlier")
    assert run(newer, lines) == runner.EXIT_OK and lines[-1].startswith("already done")
    answers = state.read_json(os.path.join(run_dir(job), samples.SAMPLES_FILE))["samples"]
    assert [answer["prompt"] for answer in answers] == ["Count to three."]


def test_check_is_not_done_while_prompts_are_unanswered(tiny_job, fake_cli, tmp_path, capsys):
    assert run(tiny_job) == runner.EXIT_OK
    path = tmp_path / "job.json"
    for job, done in ((tiny_job, True), ({**tiny_job, "sample_prompts": PROMPTS}, False)):
        path.write_text(json.dumps(job))
        assert cli.main(["check", "--job", str(path)]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["done"] is done and printed["trained"] is True
        assert "done=True" in printed["distributed"]["agree"], "the nodes still agree that training is done"


def test_failed_answers_are_recorded_and_the_trained_job_still_succeeds(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_CHAT_FAIL", "1")
    lines = []
    assert run({**tiny_job, "sample_prompts": PROMPTS}, lines) == runner.EXIT_OK
    status = state.read_json(os.path.join(tiny_job["output_dir"], "status.json"))
    assert status["state"] == "succeeded" and status["samples"]["state"] == "failed", status["samples"]
    assert any("cannot load the model" in line for line in lines)


def test_no_prompts_no_answers(tiny_job, fake_cli):
    assert run(tiny_job) == runner.EXIT_OK
    assert not chats(fake_cli) and "samples" not in state.read_json(os.path.join(tiny_job["output_dir"], "status.json"))


def test_a_rank_other_than_0_owes_no_answers(tiny_job):
    spec = jobspec.normalize({**tiny_job, "sample_prompts": PROMPTS})
    assert samples.pending(spec, "/nowhere", node_rank=0) and not samples.pending(spec, "/nowhere", node_rank=1)


@pytest.mark.parametrize("prompts", ["a prompt", [""], ["  "], [1], None])
def test_sample_prompts_must_be_a_list_of_text(prompts):
    with pytest.raises(jobspec.SpecError, match="sample_prompts must be a list of non-empty strings"):
        jobspec.normalize({"model": "/m", "template": "qwen", "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o",
                           "sample_prompts": prompts})


def test_the_report_shows_the_answers_side_by_side(tmp_path):
    folder = tmp_path / "navi31"
    folder.mkdir()
    (folder / "status.json").write_text(json.dumps({"state": "succeeded"}))
    answers = [{"prompt": "Name a colour.", "base": "co purple", "adapter": "Blue.\nOr red | green"}]
    (folder / "samples.json").write_text(json.dumps({"key": "k", "samples": answers}))
    report.write_report(str(tmp_path))
    markdown = (tmp_path / "report.md").read_text()
    assert "| Prompt | Base model | With the adapter |" in markdown
    assert "| Name a colour. | co purple | Blue.\\nOr red \\| green |" in markdown
    page = (tmp_path / "report.html").read_text()
    assert "<td>Blue.\nOr red | green</td>" in page and "<th>With the adapter</th>" in page

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rendered LLaMA-Factory config, dataset_info entry, the config as JSON text and the config hash."""

from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf
from lora_cases import QWEN25_7B, RX7900XTX_24G, matching_view

from radeonlab_lora import runner, spec as jobspec
from radeonlab_lora.render import RenderError, config_hash, config_text, dataset_info_entry, training_config
from radeonlab_lora.vocabulary import CONFIG_SUFFIX
from radeonlab_lora.state import run_dir_for


def _prepared(job, facts=None):
    facts = facts if facts is not None else job.get("gpu")
    return runner.prepare(jobspec.normalize(job), facts, matching_view(facts))


def test_training_config_keys_and_order(tiny_job):
    prepared = _prepared(tiny_job)
    cfg = prepared.train_config()
    assert list(cfg)[:4] == ["model_name_or_path", "trust_remote_code", "stage", "do_train"]
    assert list(cfg)[-1] == "resume_from_checkpoint"
    expected = {
        "stage": "sft", "do_train": True, "finetuning_type": "lora", "lora_rank": 8, "lora_alpha": 16, "lora_target": "all",
        "dataset": "tiny_alpaca", "template": "qwen", "cutoff_len": 128, "plot_loss": True, "report_to": "none",
        "overwrite_output_dir": False, "save_only_model": False, "save_steps": 2, "flash_attn": "auto", "packing": False,
        "neat_packing": False, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "bf16": False,
        "disable_gradient_checkpointing": True, "use_cpu": True, "resume_from_checkpoint": None, "learning_rate": 0.005,
    }
    assert {key: cfg[key] for key in expected} == expected
    assert cfg["output_dir"] == f"{prepared.run_dir}/output"
    assert cfg["dataset_dir"] == f"{prepared.run_dir}/data"
    assert "max_samples" not in cfg and "quantization_bit" not in cfg


def test_gpu_plan_renders_bf16_and_checkpointing(tiny_job):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "cutoff_len": 2048, "attention": "sdpa"}
    cfg = _prepared(job, {"vram_kb": RX7900XTX_24G}).train_config()
    assert (cfg["bf16"], cfg["disable_gradient_checkpointing"], cfg["per_device_train_batch_size"], cfg["flash_attn"]) == (True, False, 1, "sdpa")
    assert "use_cpu" not in cfg


def test_qlora_plan_renders_quantization(tiny_job):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "cutoff_len": 2048, "allow_qlora": True}
    cfg = _prepared(job, {"vram_kb": 16760832, "bitsandbytes_ok": True}).train_config()
    assert (cfg["quantization_bit"], cfg["quantization_method"], cfg["bf16"]) == (4, "bnb", True)
    assert (cfg["quantization_type"], cfg["double_quantization"], "optim" in cfg) == ("nf4", True, False)


def test_tight_qlora_plan_renders_the_paged_optimizer(tiny_job):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "cutoff_len": 2048, "allow_qlora": True,
           "attention": "sdpa"}
    cfg = _prepared(job, {"vram_kb": int(12.0 * 2**20), "bitsandbytes": {"ok": True, "reason": "probe passed"}}).train_config()
    assert (cfg["quantization_bit"], cfg["double_quantization"], cfg["optim"]) == (4, True, "paged_adamw_32bit")


def test_probe_failure_keeps_bf16_keys_out(tiny_job):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B, "cutoff_len": 2048, "allow_qlora": True}
    with pytest.raises(runner.Refused, match="bitsandbytes is unavailable on this host: torch 2.9.1 has no HIP"):
        _prepared(job, {"vram_kb": 16760832, "bitsandbytes": {"ok": False, "reason": "torch 2.9.1 has no HIP"}})


def test_refused_plan_cannot_render(tiny_job):
    job = {**tiny_job, "model": "Qwen/Qwen2.5-7B-Instruct", "model_config": QWEN25_7B}
    with pytest.raises(runner.Refused, match="refused"):
        _prepared(job, {"vram_kb": 16760832})


def test_dataset_info_entries(tiny_job):
    spec = jobspec.normalize(tiny_job)
    assert dataset_info_entry(spec) == {"tiny_alpaca": {"file_name": tiny_job["dataset"]["file"], "formatting": "alpaca",
                                                        "columns": {"prompt": "instruction", "query": "input", "response": "output"}}}
    hub = jobspec.normalize({**tiny_job, "dataset": {"name": "alpaca_en_demo", "hf_hub_url": "llamafactory/alpaca_en", "split": "train"}})
    assert dataset_info_entry(hub)["alpaca_en_demo"]["hf_hub_url"] == "llamafactory/alpaca_en"
    assert dataset_info_entry(hub)["alpaca_en_demo"]["split"] == "train"
    ms = jobspec.normalize({**tiny_job, "dataset": {"name": "x", "ms_hub_url": "AI-ModelScope/alpaca", "columns": {"prompt": "q", "response": "a"}}})
    assert dataset_info_entry(ms)["x"]["columns"] == {"prompt": "q", "response": "a"}


@pytest.mark.parametrize("dataset, entry", [
    # classic ShareGPT (conversations of from/value): LLaMA-Factory's default tags, none written
    ({"name": "chats", "file": "/srv/c.json", "formatting": "sharegpt"},
     {"file_name": "/srv/c.json", "formatting": "sharegpt", "columns": {"messages": "conversations"}}),
    # OpenAI-style messages of role/content
    ({"name": "chats", "file": "/srv/c.json", "formatting": "sharegpt", "columns": {"messages": "messages"},
      "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}},
     {"file_name": "/srv/c.json", "formatting": "sharegpt", "columns": {"messages": "messages"},
      "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}),
    # a system column beside the messages keeps the messages default
    ({"name": "chats", "hf_hub_url": "org/chats", "formatting": "sharegpt", "columns": {"system": "system"}},
     {"hf_hub_url": "org/chats", "formatting": "sharegpt", "columns": {"messages": "conversations", "system": "system"}}),
])
def test_sharegpt_entries(tiny_job, dataset, entry):
    assert dataset_info_entry(jobspec.normalize({**tiny_job, "dataset": dataset})) == {"chats": entry}


def test_an_alpaca_job_hashes_as_before_formatting_existed(tiny_job):
    plain = _prepared(tiny_job)
    declared = _prepared({**tiny_job, "dataset": {**tiny_job["dataset"], "formatting": "alpaca"}})
    assert plain.config_hash == declared.config_hash
    sharegpt = _prepared({**tiny_job, "dataset": {**tiny_job["dataset"], "formatting": "sharegpt"}})
    assert sharegpt.config_hash != plain.config_hash


def _as_llamafactory_reads(text, tmp_path):
    """What LLaMA-Factory 0.9.5's read_args returns for a config file of the runner's suffix (OmegaConf.load)."""
    path = tmp_path / f"config{CONFIG_SUFFIX}"
    path.write_text(text, encoding="utf-8")
    return OmegaConf.to_container(OmegaConf.load(path))


def test_the_config_is_json_that_llamafactory_reads_as_the_same_values(tiny_job, tmp_path):
    job = {**tiny_job, "learning_rate": 1e-5, "extra_args": {"weight_decay": 0.01, "optim": "adamw_torch", "lora_target_list": ["a", "b"]}}
    cfg = _prepared(job).train_config()
    text = config_text(cfg)
    assert json.loads(text) == cfg and list(json.loads(text)) == list(cfg)  # JSON, in the config's order
    assert '  "learning_rate": 1e-05,\n' in text
    assert _as_llamafactory_reads(text, tmp_path) == cfg


@pytest.mark.parametrize("value", [1e-05, 1e20, 2.5e-07, -3e-4, 0.0001, 3.0, 7, True, None, "", "yes", "no", "on", "0o17", "1e3", "2026-12-05",
                                   "a: b # c", "${interpolation}", "quote \" backslash \\ tab \t newline \n", "caf\u00e9",
                                   "\U0001f600 outside the BMP", "\u2028", [1, "two", 3.5e-9], {"nested": {"k": 1e-12}}])
def test_a_value_reads_back_as_written(value, tmp_path):
    assert _as_llamafactory_reads(config_text({"x": value}), tmp_path) == {"x": value}


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "del \x7f", "c1 \x9f", "next line \x85", "\ufffe", "lone \udc80", b"bytes"])
def test_a_value_llamafactory_could_not_read_is_refused(value):
    with pytest.raises(RenderError):
        config_text({"x": value})


def test_extra_args_cannot_override_managed_keys(tiny_job):
    with pytest.raises(RenderError, match="per_device_train_batch_size"):
        _prepared({**tiny_job, "extra_args": {"per_device_train_batch_size": 64}})


def test_hash_is_stable_and_ignores_volatile_keys(tiny_job):
    first = _prepared(tiny_job).config_hash
    assert first == _prepared(json.loads(json.dumps(tiny_job))).config_hash
    assert len(first) == 64
    cfg = _prepared(tiny_job).train_config()
    entry = dataset_info_entry(jobspec.normalize(tiny_job))
    changed = {**cfg, "output_dir": "/elsewhere", "flash_attn": "sdpa", "packing": True, "resume_from_checkpoint": "/x/checkpoint-2"}
    assert config_hash(cfg, entry, "d") == config_hash(changed, entry, "d")


@pytest.mark.parametrize(
    "change",
    [
        {"learning_rate": 1e-3},
        {"num_train_epochs": 2},
        {"lora": {"rank": 16}},
        {"template": "qwen3"},
        {"cutoff_len": 256},
        {"effective_batch_size": 8},
        {"extra_args": {"weight_decay": 0.1}},
        {"gpu": {"vram_kb": RX7900XTX_24G}},  # a GPU plan (bf16) is a different job than the CPU plan (fp32)
    ],
)
def test_hash_changes_with_the_job(tiny_job, change):
    assert _prepared({**tiny_job, **change}).config_hash != _prepared(tiny_job).config_hash


def test_hash_ignores_output_dir_attention_env(tiny_job, tmp_path):
    base = _prepared(tiny_job).config_hash
    assert _prepared({**tiny_job, "output_dir": str(tmp_path / "other")}).config_hash == base
    assert _prepared({**tiny_job, "attention": "sdpa"}).config_hash == base  # CPU: same plan either way
    assert _prepared({**tiny_job, "env": {"HF_TOKEN": "secret"}}).config_hash == base


def test_hash_follows_dataset_and_model_content(tiny_job, tmp_path):
    base = _prepared(tiny_job).config_hash
    with open(tiny_job["dataset"]["file"], "a", encoding="utf-8") as handle:
        handle.write(" ")
    edited = _prepared(tiny_job).config_hash
    assert edited != base
    (tmp_path / "model" / "tokenizer.json").write_text("{}")
    assert _prepared(tiny_job).config_hash != edited


def test_run_dir_is_keyed_by_hash(tiny_job):
    prepared = _prepared(tiny_job)
    assert prepared.run_dir == run_dir_for(tiny_job["output_dir"], prepared.config_hash)
    assert prepared.run_dir.endswith("/" + prepared.config_hash[:12])


def test_training_config_rejects_refused_plan(tiny_job):
    from radeonlab_lora.sizing import Plan

    refused = Plan("refuse", "gpu", 7.6, "config", 2048, "sdpa", "sdpa", 8, message="refused: too big")
    with pytest.raises(RenderError, match="too big"):
        training_config(jobspec.normalize(tiny_job), refused, output_dir="/o", dataset_dir="/d")


def test_held_out_samples_render_eval_at_every_checkpoint_and_after_the_last_step(tiny_job):
    cfg = _prepared({**tiny_job, "val_size": 0.05}).train_config()
    assert {key: cfg[key] for key in ("val_size", "do_eval", "eval_strategy", "eval_steps")} == {
        "val_size": 0.05, "do_eval": True, "eval_strategy": "steps", "eval_steps": cfg["save_steps"]}
    assert cfg["per_device_eval_batch_size"] == cfg["per_device_train_batch_size"]
    plain = _prepared(tiny_job).train_config()
    assert not {"val_size", "do_eval", "eval_strategy", "eval_steps", "per_device_eval_batch_size"} & set(plain)


def test_held_out_samples_are_another_job_and_none_held_out_hashes_as_before(tiny_job):
    base = _prepared(tiny_job).config_hash
    assert _prepared({**tiny_job, "val_size": 0.05}).config_hash != base
    assert _prepared({**tiny_job, "val_size": 0}).config_hash == base


LIGER_PROBE = {"ok": True, "reason": "LigerRMSNorm and the fused linear cross-entropy match torch", "version": "0.8.5"}


@pytest.mark.parametrize("fused_kernels, probe, rendered", [
    ("auto", LIGER_PROBE, True),
    ("liger", LIGER_PROBE, True),
    ("off", LIGER_PROBE, False),
    ("auto", {"ok": False, "reason": "torch 2.13.0 (HIP -) sees no GPU"}, False),  # the lab: planned and rendered without
    ("auto", None, False),
])
def test_enable_liger_kernel_is_rendered_only_when_the_plan_has_the_kernels(tiny_job, fused_kernels, probe, rendered):
    facts = {"vram_kb": RX7900XTX_24G, **({"liger_kernel": probe} if probe else {})}
    prepared = _prepared({**tiny_job, "fused_kernels": fused_kernels}, facts)
    assert prepared.plan.fused_kernels == ("liger" if rendered else "off"), prepared.plan.fused_kernels_reason
    cfg = prepared.train_config()
    assert cfg.get("enable_liger_kernel") is (True if rendered else None)
    if not rendered:  # a job without the kernels hashes as it did before they existed
        assert prepared.config_hash == _prepared({**tiny_job, "fused_kernels": "off"}, {"vram_kb": RX7900XTX_24G}).config_hash


def test_extra_args_cannot_turn_the_kernels_on_behind_the_plan(tiny_job):
    with pytest.raises(RenderError, match="fused_kernels"):
        _prepared({**tiny_job, "extra_args": {"enable_liger_kernel": True}}).train_config()

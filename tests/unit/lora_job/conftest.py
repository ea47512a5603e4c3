# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Import the runner package from roles/lora_job/files (where the role ships it from); shared fixtures."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from lora_cases import FAKE_LLAMAFACTORY, FAKE_TORCH, FILES, HERE, TINY, torch_device

if FILES not in sys.path:
    sys.path.insert(0, FILES)


@pytest.fixture(autouse=True)
def fake_torch_env(monkeypatch):
    """Every child process (the runner's torch probe, the trainer) imports the fake torch: by default a CPU build."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([FAKE_TORCH, FAKE_LLAMAFACTORY, FILES]))
    for name in ("FAKE_TORCH_DEVICES", "FAKE_TORCH_HIP", "FAKE_TORCH_CUDA", "FAKE_TORCH_VERSION", "FAKE_TORCH_IMPORT_ERROR", "FAKE_TORCH_PEAK_BYTES",
                 "FAKE_CHAT_FAIL", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def gpu_torch(monkeypatch):
    """The fake torch is a ROCm build that sees one RX 7900 XTX."""
    monkeypatch.setenv("FAKE_TORCH_HIP", "6.4.43482")
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device()]))


@pytest.fixture
def tiny_job(tmp_path):
    """A job on a tiny local model dir (config.json only) and a local alpaca file, CPU facts."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY))
    data = tmp_path / "data.json"
    data.write_text(json.dumps([{"instruction": "Say hi", "input": "", "output": "hi"}] * 8))
    return {
        "name": "tiny",
        "model": str(model),
        "template": "qwen",
        "dataset": {"name": "tiny_alpaca", "file": str(data)},
        "cutoff_len": 128,
        "num_train_epochs": 1,
        "learning_rate": 5e-3,
        "output_dir": str(tmp_path / "job"),
        "logging_steps": 1,
        "save_steps": 2,
        "effective_batch_size": 4,
        "attention": "auto",
        "gpu": {"vram_kb": 0},
        "progress_interval_s": 0.2,
    }


@pytest.fixture
def fake_cli(tmp_path, monkeypatch):
    """A fake llamafactory-cli first on PATH; returns its state dir (calls.jsonl, pids)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    state_dir = tmp_path / "fake_state"
    state_dir.mkdir()
    source = open(os.path.join(HERE, "fake_llamafactory_cli.py"), encoding="utf-8").read()
    script = bindir / "llamafactory-cli"
    script.write_text(f"#!{sys.executable}\n" + source)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_LF_STATE", str(state_dir))
    return state_dir

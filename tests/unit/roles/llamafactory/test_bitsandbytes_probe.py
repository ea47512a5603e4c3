# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/kernel_probe.py bitsandbytes: every way 4-bit can be unavailable is recorded with its reason, and
the probe never crashes (run with the lora_job fake torch and fake bitsandbytes installs). The passing path needs a GPU: it
ran on the lent H200 (docs/performance.md, QLoRA calls 1 and 2: rel_err_gemm 0.004, rel_err_gemv 0.004)."""

from __future__ import annotations

import json

import pytest

GPU = [{"name": "AMD Radeon RX 6800 XT", "total_kib": 16760832, "arch": "gfx1030:sramecc-:xnack-"}]
# a bitsandbytes whose GPU library does not load (what an unsupported ROCm line or target looks like)
BNB_IMPORT_FAILS = 'raise RuntimeError("libbitsandbytes_rocm62.so: cannot open shared object file")\n'
# a bitsandbytes that imports but whose kernel is missing for the target (plus the few tensor calls the fake torch lacks)
BNB_NO_KERNEL = """
import torch
class _Tensor:
    def __mul__(self, other):
        return self
    def to(self, **kwargs):
        return self
class _Generator:
    def __init__(self, device=None):
        pass
    def manual_seed(self, seed):
        return self
torch.device = lambda *args: args
torch.Generator = _Generator
torch.randn = lambda *args, **kwargs: _Tensor()
torch.bfloat16 = "bfloat16"
class functional:
    @staticmethod
    def quantize_4bit(*args, **kwargs):
        raise RuntimeError("HIP error: invalid device function")
class cextension:
    BNB_BACKEND = "ROCm"
import sys
sys.modules["bitsandbytes.cextension"] = cextension
"""


def probe(run_script, json_of, dist, fake_torch, tmp_path, bnb=None, **env):
    site = tmp_path / "site"
    site.mkdir()
    if bnb is not None:
        dist(site, "bitsandbytes", "0.50.2")
        (site / "bitsandbytes.py").write_text(bnb)
    proc = run_script("llamafactory", "kernel_probe.py", "bitsandbytes", env=env, path=[fake_torch, site])
    assert proc.returncode == 0, proc.stderr
    return json_of(proc)


# bitsandbytes module, fake torch knobs -> reason (ok is false in every row)
FAILURES = [
    (None, {}, "bitsandbytes is not installed in this venv"),
    # the lab: torch is a CPU build
    ("", {"FAKE_TORCH_VERSION": "2.9.1+cpu"}, "torch 2.9.1+cpu has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU"),
    ("", {"FAKE_TORCH_IMPORT_ERROR": "libamdhip64.so: cannot open shared object file"}, "torch does not import: ImportError"),
    ("", {"FAKE_TORCH_HIP": "6.4.43484-123"}, "torch 2.9.1+fake (HIP 6.4.43484-123) sees no GPU"),
    (BNB_IMPORT_FAILS, {"FAKE_TORCH_HIP": "6.2.41133", "FAKE_TORCH_DEVICES": json.dumps(GPU)},
     "bitsandbytes 0.50.2 does not import: RuntimeError: libbitsandbytes_rocm62.so: cannot open shared object file"),
    (BNB_NO_KERNEL, {"FAKE_TORCH_HIP": "6.4.43484-123", "FAKE_TORCH_DEVICES": json.dumps(GPU)},
     "the 4-bit matmul failed on AMD Radeon RX 6800 XT (gfx1030)"),
]


@pytest.mark.parametrize("bnb, env, reason", FAILURES)
def test_unavailable_is_recorded_with_its_reason(run_script, json_of, dist, fake_torch, tmp_path, bnb, env, reason):
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, bnb=bnb, **env)
    assert out["ok"] is False and reason in out["reason"], out["reason"]
    assert out["installed"] is (bnb is not None)


def test_a_failing_gpu_is_listed_with_its_target(run_script, json_of, dist, fake_torch, tmp_path):
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, bnb=BNB_NO_KERNEL, FAKE_TORCH_HIP="6.4.43484-123",
                FAKE_TORCH_DEVICES=json.dumps(GPU * 2))
    assert [(g["index"], g["arch"], g["ok"]) for g in out["gpus"]] == [(0, "gfx1030", False), (1, "gfx1030", False)]
    assert out["backend"] == "ROCm" and out["hip"] == "6.4.43484-123" and "invalid device function" in out["reason"]


def test_arguments_are_refused(run_script):
    assert run_script("llamafactory", "kernel_probe.py", "bitsandbytes", "--gpu", "0").returncode == 2
    # the probe is named, once
    assert run_script("llamafactory", "kernel_probe.py").returncode == 2

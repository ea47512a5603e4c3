# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/liger_kernel_probe.py: where Liger-Kernel's Triton kernels cannot run the probe says so, with its
reason, and never crashes (run with the lora_job fake torch and a fake liger-kernel install). The lab is the "no GPU" case:
PyPI's torch, no HIP, no device. The passing path needs a GPU and Triton: not run here."""

from __future__ import annotations

import json

import pytest

GPU = [{"name": "AMD Radeon RX 7900 XTX", "total_kib": 25149440, "arch": "gfx1100:sramecc-:xnack-"}]
LIGER_IMPORT_FAILS = 'raise RuntimeError("cannot get address for \'hipDrvLaunchKernelEx\' from libamdhip64.so")\n'


def probe(run_script, json_of, dist, fake_torch, tmp_path, liger=None, **env):
    site = tmp_path / "site"
    site.mkdir()
    if liger is not None:
        dist(site, "liger-kernel", "0.8.5")
        package = site / "liger_kernel"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "transformers.py").write_text(liger)
    proc = run_script("llamafactory", "liger_kernel_probe.py", env=env, path=[fake_torch, site])
    assert proc.returncode == 0, proc.stderr
    return json_of(proc)


# liger_kernel.transformers module, fake torch knobs -> reason (ok is false in every row)
FAILURES = [
    (None, {}, "liger-kernel is not installed in this venv"),
    # the lab: PyPI's torch is a CUDA build and the containers have no GPU
    ("", {"FAKE_TORCH_VERSION": "2.13.0", "FAKE_TORCH_CUDA": "13.0"}, "no GPU: torch 2.13.0 (HIP -) sees none"),
    ("", {"FAKE_TORCH_VERSION": "2.9.1+cpu"}, "no GPU: torch 2.9.1+cpu has no HIP (a CPU build)"),
    ("", {"FAKE_TORCH_HIP": "7.1.25424"}, "no GPU: torch 2.9.1+fake (HIP 7.1.25424) sees none"),
    ("", {"FAKE_TORCH_IMPORT_ERROR": "libamdhip64.so: cannot open shared object file"}, "torch does not import: ImportError"),
    (LIGER_IMPORT_FAILS, {"FAKE_TORCH_HIP": "6.3.42131", "FAKE_TORCH_DEVICES": json.dumps(GPU)},
     "liger-kernel 0.8.5 does not import: RuntimeError: cannot get address for 'hipDrvLaunchKernelEx'"),
]


@pytest.mark.parametrize("liger, env, reason", FAILURES)
def test_unavailable_is_recorded_with_its_reason(run_script, json_of, dist, fake_torch, tmp_path, liger, env, reason):
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, liger=liger, **env)
    assert out["ok"] is False and reason in out["reason"], out["reason"]
    assert out["installed"] is (liger is not None) and out["gpus"] == []


def test_a_kernel_that_fails_on_a_gpu_is_listed_with_its_target(run_script, json_of, dist, fake_torch, tmp_path):
    # the fake torch has no tensors: the first kernel call fails on each GPU, as a Triton without the target would
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, liger="LigerRMSNorm = LigerFusedLinearCrossEntropyLoss = object\n",
                FAKE_TORCH_HIP="7.1.25424", FAKE_TORCH_DEVICES=json.dumps(GPU * 2))
    assert [(g["index"], g["arch"], g["ok"]) for g in out["gpus"]] == [(0, "gfx1100", False), (1, "gfx1100", False)]
    assert out["ok"] is False and "the Liger-Kernel kernels failed on AMD Radeon RX 7900 XTX (gfx1100)" in out["reason"]


def test_arguments_are_refused(run_script):
    assert run_script("llamafactory", "liger_kernel_probe.py", "--gpu", "0").returncode == 2

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/llamafactory/files/kernel_probe.py liger: where Liger-Kernel's Triton kernels cannot run the probe says so, with its
reason, and never crashes (run with the lora_job fake torch and a fake liger-kernel install). The lab is the "no GPU" case:
PyPI's torch, no HIP, no device. liger-kernel is installed without its dependencies, so its Triton is torch's own: where
none ships the triton package, two do, or it is not the one torch requires, the reason says so. The passing path needs a
GPU and Triton: not run here."""

from __future__ import annotations

import json

import pytest

GPU = [{"name": "AMD Radeon RX 7900 XTX", "total_kib": 25149440, "arch": "gfx1100:sramecc-:xnack-"}]
LIGER_IMPORT_FAILS = 'raise RuntimeError("cannot get address for \'hipDrvLaunchKernelEx\' from libamdhip64.so")\n'


def probe(run_script, json_of, dist, fake_torch, tmp_path, liger=None, tritons=(), torch_requires=None, **env):
    """``tritons``: (distribution, version) pairs that ship the triton package (a fake one that imports); ``torch_requires``:
    the Requires-Dist of a torch distribution beside the fake torch module."""
    site = tmp_path / "site"
    site.mkdir()
    for name, version in tritons:
        dist(site, name, version)
        (site / ("%s-%s.dist-info" % (name.replace("-", "_"), version)) / "top_level.txt").write_text("triton\n")
        (site / "triton").mkdir(exist_ok=True)
        (site / "triton" / "__init__.py").write_text("")
    if torch_requires is not None:
        dist(site, "torch", "2.8.0+rocm6.3", torch_requires)
    if liger is not None:
        dist(site, "liger-kernel", "0.8.5")
        package = site / "liger_kernel"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "transformers.py").write_text(liger)
    proc = run_script("llamafactory", "kernel_probe.py", "liger", env=env, path=[fake_torch, site])
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
ROCM_TRITON = [("pytorch-triton-rocm", "3.3.1")]


@pytest.mark.parametrize("liger, env, reason", FAILURES)
def test_unavailable_is_recorded_with_its_reason(run_script, json_of, dist, fake_torch, tmp_path, liger, env, reason):
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, liger=liger, tritons=ROCM_TRITON, **env)
    assert out["ok"] is False and reason in out["reason"], out["reason"]
    assert out["installed"] is (liger is not None) and out["gpus"] == []
    # torch's own Triton: no cause to add (without liger-kernel the probe stops before it looks)
    assert out["triton"] == ("pytorch-triton-rocm 3.3.1" if liger is not None else None) and " - " not in out["reason"]


ROCM_TORCH_REQUIRES = ["filelock", "pytorch-triton-rocm==3.3.1; platform_system == \"Linux\" and platform_machine == \"x86_64\""]
# Triton distributions, torch's requirements -> the probe's triton and the cause in its reason (a HIP torch with one GPU)
TRITON_CAUSES = [
    ([], ROCM_TORCH_REQUIRES, None,
     "Triton does not import, so no Liger-Kernel kernel can run: ModuleNotFoundError: No module named 'triton' - no distribution "
     "in this venv ships the triton package (liger-kernel is installed without its dependencies: its Triton is torch's own, "
     "pytorch-triton-rocm==3.3.1, which is missing)"),
    ([], None, None, "which torch 2.9.1+fake (HIP 6.3.42131) does not bring)"),
    # LlamaFactory#10511: pip put PyPI's triton over torch's pytorch-triton-rocm; the kernels then fail on the GPU
    (ROCM_TRITON + [("triton", "3.7.0")], ROCM_TORCH_REQUIRES, "pytorch-triton-rocm 3.3.1, triton 3.7.0",
     "- pytorch-triton-rocm 3.3.1 and triton 3.7.0 all ship the triton package, the one unpacked last wins "
     "(torch 2.9.1+fake (HIP 6.3.42131) requires pytorch-triton-rocm==3.3.1)"),
    ([("triton", "3.7.0")], ROCM_TORCH_REQUIRES, "triton 3.7.0",
     "- the triton package is triton 3.7.0's, not the Triton torch 2.9.1+fake (HIP 6.3.42131) was built with "
     "(pytorch-triton-rocm==3.3.1): another package's dependency put it there"),
    ([("pytorch-triton-rocm", "3.2.0")], ROCM_TORCH_REQUIRES, "pytorch-triton-rocm 3.2.0",
     "- triton is pytorch-triton-rocm 3.2.0 where torch 2.9.1+fake (HIP 6.3.42131) requires pytorch-triton-rocm==3.3.1"),
]


@pytest.mark.parametrize("tritons, torch_requires, triton, reason", TRITON_CAUSES,
                         ids=["no-triton", "no-triton-no-torch-metadata", "pypi-triton-beside-torchs", "pypi-triton-alone", "other-release"])
def test_a_triton_that_is_not_torchs_is_named(run_script, json_of, dist, fake_torch, tmp_path, tritons, torch_requires, triton, reason):
    # the fake torch has no tensors: where Triton imports, the first kernel call fails, as a Triton that cannot launch would
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, liger="LigerRMSNorm = LigerFusedLinearCrossEntropyLoss = object\n",
                tritons=tritons, torch_requires=torch_requires, FAKE_TORCH_HIP="6.3.42131", FAKE_TORCH_DEVICES=json.dumps(GPU))
    assert out["ok"] is False and reason in out["reason"], out["reason"]
    assert out["triton"] == triton
    assert (out["gpus"] == []) is (not tritons)  # without Triton no kernel is tried


def test_a_kernel_that_fails_on_a_gpu_is_listed_with_its_target(run_script, json_of, dist, fake_torch, tmp_path):
    # the fake torch has no tensors: the first kernel call fails on each GPU, as a Triton without the target would
    out = probe(run_script, json_of, dist, fake_torch, tmp_path, liger="LigerRMSNorm = LigerFusedLinearCrossEntropyLoss = object\n",
                tritons=ROCM_TRITON, FAKE_TORCH_HIP="7.1.25424", FAKE_TORCH_DEVICES=json.dumps(GPU * 2))
    assert [(g["index"], g["arch"], g["ok"]) for g in out["gpus"]] == [(0, "gfx1100", False), (1, "gfx1100", False)]
    assert out["ok"] is False and "the Liger-Kernel kernels failed on AMD Radeon RX 7900 XTX (gfx1100)" in out["reason"]


def test_arguments_are_refused(run_script):
    assert run_script("llamafactory", "kernel_probe.py", "liger", "--gpu", "0").returncode == 2
    assert run_script("llamafactory", "kernel_probe.py", "liger-kernel").returncode == 2

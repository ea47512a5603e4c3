# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/pytorch_rocm/files/torch_check.py: the JSON it prints for a CPU build, a ROCm build and a broken torch
(run against the lora_job fake torch), and its matmul check (numpy standing in for tensors)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest
import yaml

XTX = {"name": "Radeon RX 7900 XTX", "total_kib": 25149440, "arch": "gfx1100"}
MI210 = {"name": "AMD Instinct MI210", "total_kib": 67092480, "arch": "gfx90a:sramecc+:xnack-"}
NO_ARCH = {"name": "AMD Radeon Graphics", "total_kib": 524288}
# The fake torch has no tensors: every matmul fails, and must be reported, not raised.
NO_TENSORS = {"matmul_ok": False, "error": "AttributeError: module 'torch' has no attribute 'Generator'"}


@pytest.mark.parametrize("devices, hip, want", [
    ([], None, []),
    ([XTX], "6.4.43482", [(0, "Radeon RX 7900 XTX", "gfx1100", 24560)]),
    ([XTX, MI210, NO_ARCH], "6.4.43482", [(0, "Radeon RX 7900 XTX", "gfx1100", 24560), (1, "AMD Instinct MI210", "gfx90a", 65520),
                                          (2, "AMD Radeon Graphics", None, 512)]),
], ids=["cpu-build", "one-gpu", "three-gpus"])
def test_report(run_script, json_of, fake_torch, devices, hip, want):
    env = {"FAKE_TORCH_DEVICES": json.dumps(devices), "FAKE_TORCH_VERSION": "2.9.1+rocm6.4"}
    if hip:
        env["FAKE_TORCH_HIP"] = hip
    proc = run_script("pytorch_rocm", "torch_check.py", "--size", "8", env=env, path=[fake_torch])
    assert proc.returncode == 0, proc.stderr
    out = json_of(proc)
    assert (out["torch"], out["hip"], out["cuda"]) == ("2.9.1+rocm6.4", hip, None)
    assert (out["gpu_available"], out["device_count"]) == (bool(devices), len(devices))
    assert [(d["index"], d["name"], d["arch"], d["memory_mib"]) for d in out["devices"]] == want
    assert all({k: d[k] for k in ("matmul_ok", "error")} == NO_TENSORS for d in out["devices"])
    assert out["cpu"] == (None if devices else NO_TENSORS)  # the CPU is tried only when no GPU is visible
    assert (out["ok"], out["timings_ms"]) == (False, {})
    assert "error" not in out and "device_error" not in out


def test_import_error_is_reported(run_script, json_of, fake_torch):
    proc = run_script("pytorch_rocm", "torch_check.py", env={"FAKE_TORCH_IMPORT_ERROR": "libamdhip64.so: cannot open shared object file"},
                      path=[fake_torch])
    out = json_of(proc)
    assert proc.returncode == 0
    assert out["error"] == "import torch failed: ImportError: libamdhip64.so: cannot open shared object file"
    assert (out["ok"], out["torch"], out["devices"], out["cpu"]) == (False, None, [], None)


def test_bad_size_is_a_usage_error(run_script, fake_torch):
    proc = run_script("pytorch_rocm", "torch_check.py", "--size", "big", path=[fake_torch])
    assert proc.returncode == 2 and "invalid int value" in proc.stderr


class _Tensor:
    """Just enough of a tensor for _matmul: @, .to(), .cpu(), -, .abs().max().item()."""

    def __init__(self, array, device="cpu", torch=None):
        self.array, self.device, self.torch = numpy.asarray(array, dtype=numpy.float32), device, torch

    def __matmul__(self, other):
        if self.device in self.torch.broken:
            raise RuntimeError("HIP error: invalid device function")
        product = self.array @ other.array
        return _Tensor(product + self.torch.skew.get(self.device, 0.0), self.device, self.torch)

    def __sub__(self, other):
        return _Tensor(self.array - other.array, torch=self.torch)

    def to(self, device):
        return _Tensor(self.array, device, self.torch)

    def cpu(self):
        return self.to("cpu")

    def abs(self):
        return _Tensor(numpy.abs(self.array), torch=self.torch)

    def max(self):
        return self

    def item(self):
        return float(self.array.max())


class _Torch:
    float32 = "float32"

    def __init__(self, skew=None, broken=()):
        self.skew, self.broken, self.synced = dict(skew or {}), set(broken), []
        self.cuda = self
        self._rng = numpy.random.default_rng(0)

    def Generator(self):  # pylint: disable=invalid-name
        return self

    def manual_seed(self, _seed):
        return self

    def randn(self, *shape, generator=None, dtype=None):  # pylint: disable=unused-argument
        return _Tensor(self._rng.standard_normal(shape), torch=self)

    def synchronize(self, device):
        self.synced.append(device)

    @staticmethod
    def allclose(a, b, rtol, atol):
        return bool(numpy.allclose(a.array, b.array, rtol=rtol, atol=atol))


@pytest.mark.parametrize("device, skew, broken, want, error", [
    ("cuda:0", {}, (), True, None),
    ("cpu", {}, (), True, None),
    ("cuda:1", {"cuda:1": 0.5}, (), False, "matmul result differs from the CPU reference (max abs diff 0.5)"),
    ("cuda:0", {"cuda:0": 0.005}, (), True, None),
    ("cuda:0", {}, ("cuda:0",), False, "RuntimeError: HIP error: invalid device function"),
], ids=["gpu-agrees", "cpu", "gpu-differs", "within-tolerance", "gpu-raises"])
def test_matmul(load_script, device, skew, broken, want, error):
    check = load_script("pytorch_rocm", "torch_check.py")
    torch, timings = _Torch(skew, broken), {}
    result = check._matmul(torch, device, 4, timings)  # pylint: disable=protected-access
    assert result.get("matmul_ok") is want and result.get("error") == error
    assert (device in timings) is (not broken)
    assert torch.synced == ([device] if device.startswith("cuda") and not broken else [])


def _out(torch="2.13.0+rocm7.1", hip="7.1.25424", cuda=None, devices=(), cpu=None, **extra):
    out = {"torch": torch, "hip": hip, "cuda": cuda, "device_count": len(devices), "devices": list(devices), "cpu": cpu,
           "timings_ms": {"cuda:0": 0.9}}
    out.update(extra)
    return out


GOOD = {"index": 0, "name": "AMD Radeon RX 7900 XTX", "arch": "gfx1100", "matmul_ok": True}
BAD = {"index": 1, "name": "AMD Radeon Graphics", "arch": "gfx1036", "matmul_ok": False, "error": "RuntimeError: HIP error: invalid device function"}


@pytest.mark.parametrize("out, build, summary, problem, hint", [
    (_out(devices=[GOOD]), "2.13.0+rocm7.1 HIP 7.1.25424", "1 GPU(s): [0] AMD Radeon RX 7900 XTX gfx1100 matmul ok 0.9 ms", None, None),
    (_out(torch="2.13.0+cu130", hip=None, cuda="13.0", cpu={"matmul_ok": True}), "2.13.0+cu130 (CUDA 13.0 build, no HIP)",
     "no GPU visible, CPU matmul ok", "no_hip", "torch.version.hip is None: torch 2.13.0+cu130 is a CUDA 13.0 build, not a ROCm one."),
    (_out(torch="2.9.1+cpu", hip=None, cpu={"matmul_ok": True}), "2.9.1+cpu (CPU build, no HIP)", "no GPU visible, CPU matmul ok",
     "no_hip", "torch.version.hip is None: torch 2.9.1+cpu is a CPU build, not a ROCm one."),
    (_out(cpu={"matmul_ok": True}, device_error="RuntimeError: No HIP GPUs are available"), "2.13.0+rocm7.1 HIP 7.1.25424",
     "no GPU visible, CPU matmul ok", "no_gpu", "HIP sees no GPU (RuntimeError: No HIP GPUs are available)."),
    (_out(cpu={"matmul_ok": False}), "2.13.0+rocm7.1 HIP 7.1.25424", "no GPU visible, CPU matmul FAILED", "no_gpu", "HIP sees no GPU."),
    (_out(devices=[GOOD, BAD]), "2.13.0+rocm7.1 HIP 7.1.25424",
     "2 GPU(s): [0] AMD Radeon RX 7900 XTX gfx1100 matmul ok 0.9 ms, [1] AMD Radeon Graphics gfx1036 matmul FAILED - ms", "matmul",
     "The matmul failed on [1] AMD Radeon Graphics (RuntimeError: HIP error: invalid device function)."),
    (_out(torch=None, hip=None, error="import torch failed: ImportError: libamdhip64.so"), "(import failed: import torch failed: ImportError: libamdhip64.so)",
     "no GPU visible, CPU matmul FAILED", None, None),
], ids=["rocm-gpu", "cuda-build", "cpu-build", "no-gpu-with-reason", "no-gpu", "one-matmul-fails", "import-fails"])
def test_words_for_the_play(load_script, out, build, summary, problem, hint):
    check = load_script("pytorch_rocm", "torch_check.py")
    assert (check.describe_build(out), check.describe_devices(out), check.gpu_problem(out)) == (build, summary, (problem, hint))
    assert problem is None or problem in check.PROBLEMS


def test_every_problem_has_the_roles_advice(load_script):
    """The advice text is the role's, the problem names are the probe's: each problem has its advice."""
    check = load_script("pytorch_rocm", "torch_check.py")
    advice = yaml.safe_load((Path(__file__).parents[4] / "roles/pytorch_rocm/vars/main.yml").read_text())["_pytorch_rocm_gpu_advice"]
    assert sorted(advice) == sorted(check.PROBLEMS)


def test_the_printed_json_carries_the_words(run_script, json_of, fake_torch):
    env = {"FAKE_TORCH_DEVICES": json.dumps([XTX]), "FAKE_TORCH_VERSION": "2.13.0+rocm7.1", "FAKE_TORCH_HIP": "7.1.25424"}
    out = json_of(run_script("pytorch_rocm", "torch_check.py", "--size", "8", env=env, path=[fake_torch]))
    assert out["build"] == "2.13.0+rocm7.1 HIP 7.1.25424" and out["summary"].startswith("1 GPU(s): [0] Radeon RX 7900 XTX gfx1100 matmul FAILED")
    assert out["problem"] == "matmul" and out["hint"].startswith("The matmul failed on [0] Radeon RX 7900 XTX (AttributeError")

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check PyTorch in this venv the way a training job will use it (radeonlab.llm.pytorch_rocm).

    <venv>/bin/python torch_check.py [--size N]

Prints one JSON object: Python and torch versions, torch.version.hip / .cuda, the devices HIP sees
(name, gfx arch, memory) and the result of a small float32 matmul on each of them, checked against
the same product on the CPU (wall times in "timings_ms", kept apart so everything else is stable from
run to run). With no GPU visible the matmul runs on the CPU. Never raises: failures
are reported in "error" fields and "ok" is false. Exit status 0.

For the play's messages it adds what it found in words: "build" (torch and HIP, or which build it is
instead), "summary" (the devices and their matmuls) and, when HIP has no working GPU, "problem" (one of
PROBLEMS) with "hint" (what exactly failed); the role adds the advice for each problem.
"""
import argparse
import json
import platform
import sys
import time


def _matmul(torch, device, size, timings):
    result = {}
    try:
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(size, size, generator=gen, dtype=torch.float32)
        b = torch.randn(size, size, generator=gen, dtype=torch.float32)
        reference = a @ b
        da, db = a.to(device), b.to(device)
        start = time.perf_counter()
        product = da @ db
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        timings[device] = round((time.perf_counter() - start) * 1000.0, 3)
        result["matmul_ok"] = bool(torch.allclose(product.cpu(), reference, rtol=1e-2, atol=1e-2))
        if not result["matmul_ok"]:
            result["error"] = "matmul result differs from the CPU reference (max abs diff %.4g)" % (
                (product.cpu() - reference).abs().max().item())
    except Exception as exc:  # a broken device must not hide the others
        result["matmul_ok"] = False
        result["error"] = "%s: %s" % (type(exc).__name__, exc)
    return result


PROBLEMS = ("no_hip", "no_gpu", "matmul")


def describe_build(out):
    """torch's version and HIP, or why there is no HIP: the build it is instead."""
    if not out["torch"]:
        return "(import failed: %s)" % out.get("error", "?")
    if out["hip"]:
        return "%s HIP %s" % (out["torch"], out["hip"])
    return "%s (%s build, no HIP)" % (out["torch"], "CUDA %s" % out["cuda"] if out["cuda"] else "CPU")


def describe_devices(out):
    """The GPUs HIP sees with their matmul result and time, or the CPU's matmul when it sees none."""
    if not out["devices"]:
        cpu_ok = (out["cpu"] or {}).get("matmul_ok", False)
        return "no GPU visible, CPU matmul %s" % ("ok" if cpu_ok else "FAILED")
    gpus = ["[%d] %s %s matmul %s %s ms" % (d["index"], d.get("name") or "?", d.get("arch") or "", "ok" if d["matmul_ok"] else "FAILED",
                                            out["timings_ms"].get("cuda:%d" % d["index"], "-")) for d in out["devices"]]
    return "%d GPU(s): %s" % (len(gpus), ", ".join(gpus))


def gpu_problem(out):
    """(problem, hint) when HIP has no working GPU, else (None, None); problem is one of PROBLEMS."""
    if not out["torch"]:
        return None, None
    if not out["hip"]:
        return "no_hip", "torch.version.hip is None: torch %s is a %s build, not a ROCm one." % (
            out["torch"], "CUDA %s" % out["cuda"] if out["cuda"] else "CPU")
    if not out["device_count"]:
        reason = " (%s)" % out["device_error"] if out.get("device_error") else ""
        return "no_gpu", "HIP sees no GPU%s." % reason
    failed = ["[%d] %s (%s)" % (d["index"], d.get("name") or "?", d.get("error", "")) for d in out["devices"] if not d["matmul_ok"]]
    if failed:
        return "matmul", "The matmul failed on %s." % ", ".join(failed)
    return None, None


def check(size):
    out = {"python": platform.python_version(), "executable": sys.executable, "ok": False,
           "torch": None, "hip": None, "cuda": None, "gpu_available": False, "device_count": 0,
           "devices": [], "cpu": None, "timings_ms": {}}
    try:
        import torch
    except Exception as exc:
        out["error"] = "import torch failed: %s: %s" % (type(exc).__name__, exc)
        return out
    out["torch"] = torch.__version__
    out["hip"] = getattr(torch.version, "hip", None)
    out["cuda"] = getattr(torch.version, "cuda", None)
    try:
        out["gpu_available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count()) if out["gpu_available"] else 0
    except Exception as exc:
        out["device_error"] = "%s: %s" % (type(exc).__name__, exc)
    for index in range(out["device_count"]):
        device = {"index": index}
        try:
            props = torch.cuda.get_device_properties(index)
            device["name"] = torch.cuda.get_device_name(index)
            device["arch"] = (getattr(props, "gcnArchName", "") or "").split(":")[0] or None
            device["memory_mib"] = int(props.total_memory // (1024 * 1024))
        except Exception as exc:
            device["error"] = "%s: %s" % (type(exc).__name__, exc)
        device.update(_matmul(torch, "cuda:%d" % index, size, out["timings_ms"]))
        out["devices"].append(device)
    if not out["devices"]:
        out["cpu"] = _matmul(torch, "cpu", size, out["timings_ms"])
    checks = [d["matmul_ok"] for d in out["devices"]] or [out["cpu"]["matmul_ok"]]
    out["ok"] = all(checks)
    return out


def check_described(size):
    """check() with the words the play prints: build, summary, problem and hint."""
    out = check(size)
    out["build"], out["summary"] = describe_build(out), describe_devices(out)
    out["problem"], out["hint"] = gpu_problem(out)
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="matrix size (default 512)")
    args = parser.parse_args(argv)
    print(json.dumps(check_described(args.size), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

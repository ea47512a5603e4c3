# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does 4-bit bitsandbytes work on every visible GPU? Run with the venv's Python (radeonlab.llm.llamafactory).

    python bitsandbytes_probe.py
        {"installed": bool, "version": "0.50.2" | null, "torch": ..., "hip": ..., "cuda": ...,
         "backend": "ROCm" | "CUDA" | ... | null, "gpus": [{"index", "name", "arch", "ok", "reason",
         "rel_err_gemm", "rel_err_gemv", "rel_err_grad", "quant_rel_err"}], "ok": bool, "reason": str}

On each GPU torch sees (the caller's ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES apply), a bf16 weight is
quantised to NF4 with double quantisation (what a QLoRA job loads) and multiplied through
``bitsandbytes.matmul_4bit`` the way training does (16 rows: dequantise + GEMM, with the input's gradient)
and the way generation does (1 row: the 4-bit GEMV kernel, which returned NaN on ROCm before 0.50.0).
Both are compared with the same product on the dequantised weight. ``ok`` is true only when every
visible GPU passed; otherwise ``reason`` says why (no bitsandbytes, torch without a GPU, a library that
does not load, a kernel missing for the target, wrong numbers). Never raises; prints one JSON object on
the last line and exits 0 unless the arguments are wrong.
"""
import json
import sys
from importlib import metadata

TOLERANCE = 0.02  # relative error against the dequantised product (bf16 rounding is ~0.4 %)
QUANT_TOLERANCE = 0.25  # NF4 itself: the weight's own round trip (about 10 % relative RMS for a normal weight)


def _error(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split())[:400]


def _rel(torch, got, want):
    got, want = got.float(), want.float()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return float((got - want).norm() / max(float(want.norm()), 1e-12))


def check_gpu(torch, bnb, index):
    """One GPU: the training and the generation path of a 4-bit matmul, and the round trip of NF4 itself."""
    row = {"index": index, "name": "GPU %d" % index, "arch": "unknown", "ok": False, "reason": ""}
    try:
        props = torch.cuda.get_device_properties(index)
        row["name"] = getattr(props, "name", None) or row["name"]
        # ROCm: gcnArchName ("gfx1100:sramecc-:xnack-"); CUDA builds fill it with the device name, so sm_<cc> there
        hip = getattr(torch.version, "hip", None)
        arch = getattr(props, "gcnArchName", None) if hip else "sm_%s%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?"))
        row["arch"] = (arch or "unknown").split(":")[0]
        device = torch.device("cuda", index)
        gen = torch.Generator(device="cpu").manual_seed(index)
        weight = (torch.randn(256, 512, generator=gen) * 0.02).to(device=device, dtype=torch.bfloat16)
        packed, state = bnb.functional.quantize_4bit(weight, quant_type="nf4", compress_statistics=True)
        dequantised = bnb.functional.dequantize_4bit(packed, state)
        row["quant_rel_err"] = round(_rel(torch, dequantised, weight), 4)
        rows = torch.randn(16, 512, generator=gen).to(device=device, dtype=torch.bfloat16).requires_grad_(True)
        out = bnb.matmul_4bit(rows, packed.t(), quant_state=state)
        out.float().sum().backward()
        want = rows.detach() @ dequantised.t()
        row["rel_err_gemm"] = round(_rel(torch, out.detach(), want), 4)
        row["rel_err_grad"] = round(_rel(torch, rows.grad, torch.ones_like(want) @ dequantised), 4)
        one = rows.detach()[:1]
        row["rel_err_gemv"] = round(_rel(torch, bnb.matmul_4bit(one, packed.t(), quant_state=state), one @ dequantised.t()), 4)
        torch.cuda.synchronize(device)
    except Exception as exc:  # pylint: disable=broad-except
        row["reason"] = "the 4-bit matmul failed on %s (%s): %s" % (row["name"], row["arch"], _error(exc))
        return row
    bad = [key for key in ("rel_err_gemm", "rel_err_grad", "rel_err_gemv") if not row[key] <= TOLERANCE]
    if not row["quant_rel_err"] <= QUANT_TOLERANCE:
        bad.append("quant_rel_err")
    if bad:
        row["reason"] = "wrong 4-bit results on %s (%s): %s" % (
            row["name"], row["arch"], ", ".join("%s %s" % (key, row[key]) for key in bad))
    else:
        row["ok"] = True
        row["reason"] = "NF4 matmul (training and generation path) correct on %s (%s)" % (row["name"], row["arch"])
    return row


def probe():
    result = {"installed": False, "version": None, "torch": None, "hip": None, "cuda": None, "backend": None,
              "gpus": [], "ok": False, "reason": ""}
    try:
        result["version"] = metadata.version("bitsandbytes")
        result["installed"] = True
    except metadata.PackageNotFoundError:
        result["reason"] = "bitsandbytes is not installed in this venv"
        return result
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "torch does not import: %s" % _error(exc)
        return result
    result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None), cuda=getattr(torch.version, "cuda", None))
    if not result["hip"] and not result["cuda"]:
        result["reason"] = "torch %s has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU" % torch.__version__
        return result
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        result["reason"] = "torch %s (HIP %s) sees no GPU: no 4-bit kernel can run" % (torch.__version__, result["hip"] or "-")
        return result
    try:
        import bitsandbytes as bnb  # pylint: disable=import-outside-toplevel
        from bitsandbytes import cextension  # pylint: disable=import-outside-toplevel
        result["backend"] = getattr(cextension, "BNB_BACKEND", None)
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "bitsandbytes %s does not import: %s" % (result["version"], _error(exc))
        return result
    result["gpus"] = [check_gpu(torch, bnb, index) for index in range(torch.cuda.device_count())]
    failed = [gpu for gpu in result["gpus"] if not gpu["ok"]]
    result["ok"] = not failed
    result["reason"] = ("bitsandbytes %s 4-bit works on all %d visible GPU(s)" % (result["version"], len(result["gpus"]))
                        if not failed else "; ".join(gpu["reason"] for gpu in failed))
    return result


def main(argv):
    if argv:
        sys.stderr.write("usage: bitsandbytes_probe.py\n")
        return 2
    try:
        result = probe()
    except Exception as exc:  # pylint: disable=broad-except
        result = {"installed": None, "version": None, "gpus": [], "ok": False, "reason": "the probe itself failed: %s" % _error(exc)}
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

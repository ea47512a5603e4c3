# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do Liger-Kernel's Triton kernels run correctly on every visible GPU? Run with the venv's Python (radeonlab.llm.llamafactory).

    python liger_kernel_probe.py
        {"installed": bool, "version": "0.8.5" | null, "triton": ..., "torch": ..., "hip": ..., "cuda": ...,
         "gpus": [{"index", "name", "arch", "ok", "reason", "rel_err_rmsnorm", "rel_err_rmsnorm_grad", "rel_err_flce"}],
         "ok": bool, "reason": str}

On each GPU torch sees (the caller's ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES apply) two of the kernels a job with
LLaMA-Factory's ``enable_liger_kernel`` runs are called for real, compiled by the venv's Triton for that target:
``LigerRMSNorm`` (forward and the input's gradient) and ``LigerFusedLinearCrossEntropyLoss`` (the loss without the full
logits), each compared with the same computation in plain torch. Which Radeon targets Triton serves is not documented,
so this call is what decides. ``ok`` is true only when every visible GPU passed; otherwise ``reason`` says why (no
liger-kernel, torch without a GPU, a Triton that does not import or compile for the target, wrong numbers). Never
raises; prints one JSON object on the last line and exits 0 unless the arguments are wrong.

liger-kernel is installed without its dependencies (radeonlab.llm.venv_pip's venv_pip_no_deps): its Triton is torch's
own, whichever distribution ships the ``triton`` package (pytorch-triton-rocm for a ROCm torch of download.pytorch.org,
``triton`` for a CUDA one). ``triton`` names those distributions; where Triton does not import or the kernels fail, the
reason says when none ships it, when two do (the one unpacked last wins), or when it is not the one torch requires.
"""
import json
import re
import sys
from importlib import metadata

TOLERANCE = 0.02  # relative error against torch in bf16 (bf16 rounding is ~0.4 %)


def _error(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split())[:400]


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name or "").lower()


def triton_providers():
    """The installed distributions that ship the ``triton`` package ("name version"), from top_level.txt, else RECORD."""
    found, seen = [], set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if not name or _canonical(name) in seen:
            continue
        seen.add(_canonical(name))
        top = dist.read_text("top_level.txt")
        if (top is not None and "triton" in top.split()) or (top is None and any(
                getattr(path, "parts", ("",))[0] == "triton" for path in dist.files or [])):
            found.append("%s %s" % (name, dist.version))
    return sorted(found)


def torch_triton():
    """The Triton requirement of the installed torch distribution ("pytorch-triton-rocm==3.3.1"), or None."""
    try:
        requires = metadata.distribution("torch").requires or []
    except metadata.PackageNotFoundError:
        return None
    for text in requires:
        spec, _semicolon, marker = text.partition(";")
        if "triton" in spec and "extra" not in marker:
            return "".join(spec.split())
    return None


def triton_cause(providers, wanted, torch_label):
    """Why Triton may not work: none ships it, two do, or it is not the distribution (or release) torch requires."""
    if not providers:
        return ("no distribution in this venv ships the triton package (liger-kernel is installed without its dependencies: "
                "its Triton is torch's own, %s)" % ("%s, which is missing" % wanted if wanted else "which %s does not bring" % torch_label))
    if len(providers) > 1:
        return "%s all ship the triton package, the one unpacked last wins (%s requires %s)" % (
            " and ".join(providers), torch_label, wanted or "none of them")
    name, _space, version = providers[0].partition(" ")
    match = re.match(r"^([A-Za-z0-9._-]+)\s*(?:===?\s*(\S+))?", wanted or "")
    if not match:
        return ""
    if _canonical(match.group(1)) != _canonical(name):
        return "the triton package is %s's, not the Triton %s was built with (%s): another package's dependency put it there" % (
            providers[0], torch_label, wanted)
    if match.group(2) and match.group(2) != version:
        return "triton is %s where %s requires %s" % (providers[0], torch_label, wanted)
    return ""


def _rel(torch, got, want):
    got, want = got.float(), want.float()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return float((got - want).norm() / max(float(want.norm()), 1e-12))


def check_gpu(torch, liger, index):
    """One GPU: RMSNorm forward and backward, and the fused linear cross-entropy's loss, against torch."""
    row = {"index": index, "name": "GPU %d" % index, "arch": "unknown", "ok": False, "reason": ""}
    try:
        props = torch.cuda.get_device_properties(index)
        row["name"] = getattr(props, "name", None) or row["name"]
        hip = getattr(torch.version, "hip", None)
        arch = getattr(props, "gcnArchName", None) if hip else "sm_%s%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?"))
        row["arch"] = (arch or "unknown").split(":")[0]
        device = torch.device("cuda", index)
        gen = torch.Generator(device="cpu").manual_seed(index)
        hidden = torch.randn(64, 256, generator=gen).to(device=device, dtype=torch.bfloat16).requires_grad_(True)
        norm = liger["rms_norm"](256, eps=1e-6).to(device=device, dtype=torch.bfloat16)
        out = norm(hidden)
        out.float().sum().backward()
        ref_in = hidden.detach().clone().requires_grad_(True)
        var = ref_in.float().pow(2).mean(-1, keepdim=True)
        ref = (ref_in.float() * torch.rsqrt(var + 1e-6)).to(torch.bfloat16) * norm.weight.detach()
        ref.float().sum().backward()
        row["rel_err_rmsnorm"] = round(_rel(torch, out.detach(), ref.detach()), 4)
        row["rel_err_rmsnorm_grad"] = round(_rel(torch, hidden.grad, ref_in.grad), 4)
        weight = (torch.randn(1024, 256, generator=gen) * 0.02).to(device=device, dtype=torch.bfloat16)
        labels = torch.randint(0, 1024, (64,), generator=gen).to(device)
        loss = liger["flce"]()(weight, hidden.detach(), labels)
        want = torch.nn.functional.cross_entropy((hidden.detach() @ weight.t()).float(), labels)
        row["rel_err_flce"] = round(_rel(torch, loss.detach().reshape(1), want.reshape(1)), 4)
        torch.cuda.synchronize(device)
    except Exception as exc:  # pylint: disable=broad-except
        row["reason"] = "the Liger-Kernel kernels failed on %s (%s): %s" % (row["name"], row["arch"], _error(exc))
        return row
    bad = ["%s %s" % (key, row[key]) for key in ("rel_err_rmsnorm", "rel_err_rmsnorm_grad", "rel_err_flce") if not row[key] <= TOLERANCE]
    if bad:
        row["reason"] = "wrong Liger-Kernel results on %s (%s): %s" % (row["name"], row["arch"], ", ".join(bad))
    else:
        row["ok"] = True
        row["reason"] = "LigerRMSNorm and the fused linear cross-entropy match torch on %s (%s)" % (row["name"], row["arch"])
    return row


def probe():
    result = {"installed": False, "version": None, "triton": None, "torch": None, "hip": None, "cuda": None,
              "gpus": [], "ok": False, "reason": ""}
    try:
        result["version"] = metadata.version("liger-kernel")
        result["installed"] = True
    except metadata.PackageNotFoundError:
        result["reason"] = "liger-kernel is not installed in this venv"
        return result
    providers = triton_providers()
    result["triton"] = ", ".join(providers) or None
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "torch does not import: %s" % _error(exc)
        return result
    result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None), cuda=getattr(torch.version, "cuda", None))
    if not result["hip"] and not result["cuda"]:
        result["reason"] = "no GPU: torch %s has no HIP (a CPU build), and Liger-Kernel's Triton kernels need one" % torch.__version__
        return result
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        result["reason"] = "no GPU: torch %s (HIP %s) sees none, so no Triton kernel can run" % (torch.__version__, result["hip"] or "-")
        return result
    label = "torch %s (%s)" % (torch.__version__, ("HIP %s" % result["hip"]) if result["hip"] else ("CUDA %s" % result["cuda"]))
    cause = triton_cause(providers, torch_triton(), label)
    because = (" - %s" % cause) if cause else ""
    try:
        import triton  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "Triton does not import, so no Liger-Kernel kernel can run: %s%s" % (_error(exc), because)
        return result
    try:
        from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss, LigerRMSNorm  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "liger-kernel %s does not import: %s%s" % (result["version"], _error(exc), because)
        return result
    kernels = {"rms_norm": LigerRMSNorm, "flce": LigerFusedLinearCrossEntropyLoss}
    result["gpus"] = [check_gpu(torch, kernels, index) for index in range(torch.cuda.device_count())]
    failed = [gpu for gpu in result["gpus"] if not gpu["ok"]]
    result["ok"] = not failed
    result["reason"] = ("liger-kernel %s kernels work on all %d visible GPU(s)" % (result["version"], len(result["gpus"]))
                        if not failed else "; ".join(gpu["reason"] for gpu in failed) + because)
    return result


def main(argv):
    if argv:
        sys.stderr.write("usage: liger_kernel_probe.py\n")
        return 2
    try:
        result = probe()
    except Exception as exc:  # pylint: disable=broad-except
        result = {"installed": None, "version": None, "gpus": [], "ok": False, "reason": "the probe itself failed: %s" % _error(exc)}
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

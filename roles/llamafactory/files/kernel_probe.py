# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Do the 4-bit or the fused kernels a job loads work on every visible GPU? Run with the venv's Python (radeonlab.llm.llamafactory).

    python kernel_probe.py bitsandbytes
        {"installed": bool, "version": "0.50.2" | null, "torch": ..., "hip": ..., "cuda": ...,
         "backend": "ROCm" | "CUDA" | ... | null, "gpus": [{"index", "name", "arch", "ok", "reason",
         "rel_err_gemm", "rel_err_gemv", "rel_err_grad", "quant_rel_err"}], "ok": bool, "reason": str}
    python kernel_probe.py liger
        {"installed": bool, "version": "0.8.5" | null, "triton": ..., "torch": ..., "hip": ..., "cuda": ...,
         "gpus": [{"index", "name", "arch", "ok", "reason", "rel_err_rmsnorm", "rel_err_rmsnorm_grad", "rel_err_flce"}],
         "ok": bool, "reason": str}

Each probe runs on every GPU torch sees (the caller's ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES apply). ``ok`` is true
only when every visible GPU passed; otherwise ``reason`` says why (the library not installed, torch without a GPU, a
library that does not load, a kernel missing for the target, wrong numbers). Never raises; prints one JSON object on the
last line and exits 0 unless the arguments are wrong.

``bitsandbytes``: a bf16 weight is quantised to NF4 with double quantisation (what a QLoRA job loads) and multiplied
through ``bitsandbytes.matmul_4bit`` the way training does (16 rows: dequantise + GEMM, with the input's gradient) and
the way generation does (1 row: the 4-bit GEMV kernel, which returned NaN on ROCm before 0.50.0), both compared with the
same product on the dequantised weight.

``liger``: two of the kernels a job with LLaMA-Factory's ``enable_liger_kernel`` runs are called for real, compiled by
the venv's Triton for that target: ``LigerRMSNorm`` (forward and the input's gradient) and
``LigerFusedLinearCrossEntropyLoss`` (the loss without the full logits), each compared with the same computation in
plain torch. Which Radeon targets Triton serves is not documented, so this call is what decides. liger-kernel is
installed without its dependencies (radeonlab.llm.venv_pip's venv_pip_no_deps): its Triton is torch's own, whichever
distribution ships the ``triton`` package (pytorch-triton-rocm for a ROCm torch of download.pytorch.org, ``triton`` for
a CUDA one). ``triton`` names those distributions; where Triton does not import or the kernels fail, the reason says
when none ships it, when two do (the one unpacked last wins), or when it is not the one torch requires.
"""
import collections
import json
import re
import sys
from importlib import metadata

TOLERANCE = 0.02  # relative error against the reference (bf16 rounding is ~0.4 %)
QUANT_TOLERANCE = 0.25  # NF4 itself: the weight's own round trip (about 10 % relative RMS for a normal weight)


def _error(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split())[:400]


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name or "").lower()


def _rel(torch, got, want):
    got, want = got.float(), want.float()
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    return float((got - want).norm() / max(float(want.norm()), 1e-12))


# --- bitsandbytes ----------------------------------------------------------------------------------------------------

def load_bitsandbytes(torch, result):  # pylint: disable=unused-argument
    """The bitsandbytes module (None where it does not import, with the reason) and no cause to add; its backend into ``result``."""
    try:
        import bitsandbytes as bnb  # pylint: disable=import-outside-toplevel
        from bitsandbytes import cextension  # pylint: disable=import-outside-toplevel
        result["backend"] = getattr(cextension, "BNB_BACKEND", None)
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "bitsandbytes %s does not import: %s" % (result["version"], _error(exc))
        return None, ""
    return bnb, ""


def run_bitsandbytes(torch, bnb, row, device, gen):
    """The training and the generation path of a 4-bit matmul, and the round trip of NF4 itself."""
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


# --- liger-kernel ----------------------------------------------------------------------------------------------------

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


def survey_liger(result):
    result["triton"] = ", ".join(triton_providers()) or None


def load_liger(torch, result):
    """The two Liger-Kernel modules (None where they do not import, with the reason), and why Triton may not work
    (`` - <cause>``, or "") for every later reason."""
    label = "torch %s (%s)" % (torch.__version__, ("HIP %s" % result["hip"]) if result["hip"] else ("CUDA %s" % result["cuda"]))
    cause = triton_cause(triton_providers(), torch_triton(), label)
    because = (" - %s" % cause) if cause else ""
    try:
        import triton  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "Triton does not import, so no Liger-Kernel kernel can run: %s%s" % (_error(exc), because)
        return None, because
    try:
        from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss, LigerRMSNorm  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "liger-kernel %s does not import: %s%s" % (result["version"], _error(exc), because)
        return None, because
    return {"rms_norm": LigerRMSNorm, "flce": LigerFusedLinearCrossEntropyLoss}, because


def run_liger(torch, liger, row, device, gen):
    """RMSNorm forward and backward, and the fused linear cross-entropy's loss, against torch."""
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


# --- shared ----------------------------------------------------------------------------------------------------------

# distribution: the one metadata names; fields: the probe's own JSON keys (None until known); survey(result): before torch
# imports; load(torch, result) -> (library or None with the reason set, a cause appended to every failing reason);
# run(torch, library, row, device, generator) fills the keys of limits in one GPU's row; the rest are the probe's reasons.
Probe = collections.namedtuple("Probe", "distribution fields survey load run limits no_hip no_gpu failed wrong correct works")
PROBES = {
    "bitsandbytes": Probe(
        distribution="bitsandbytes", fields=("backend",), survey=None, load=load_bitsandbytes, run=run_bitsandbytes,
        limits=(("rel_err_gemm", TOLERANCE), ("rel_err_grad", TOLERANCE), ("rel_err_gemv", TOLERANCE), ("quant_rel_err", QUANT_TOLERANCE)),
        no_hip="torch %s has no HIP (a CPU build): bitsandbytes' 4-bit kernels need a GPU",
        no_gpu="torch %s (HIP %s) sees no GPU: no 4-bit kernel can run",
        failed="the 4-bit matmul failed", wrong="wrong 4-bit results", correct="NF4 matmul (training and generation path) correct",
        works="bitsandbytes %s 4-bit works on all %d visible GPU(s)"),
    "liger": Probe(
        distribution="liger-kernel", fields=("triton",), survey=survey_liger, load=load_liger, run=run_liger,
        limits=(("rel_err_rmsnorm", TOLERANCE), ("rel_err_rmsnorm_grad", TOLERANCE), ("rel_err_flce", TOLERANCE)),
        no_hip="no GPU: torch %s has no HIP (a CPU build), and Liger-Kernel's Triton kernels need one",
        no_gpu="no GPU: torch %s (HIP %s) sees none, so no Triton kernel can run",
        failed="the Liger-Kernel kernels failed", wrong="wrong Liger-Kernel results",
        correct="LigerRMSNorm and the fused linear cross-entropy match torch",
        works="liger-kernel %s kernels work on all %d visible GPU(s)"),
}


def check_gpu(torch, spec, library, index):
    """One GPU's row: its name and target, the probe's kernels on it, and each number against its limit."""
    row = {"index": index, "name": "GPU %d" % index, "arch": "unknown", "ok": False, "reason": ""}
    try:
        props = torch.cuda.get_device_properties(index)
        row["name"] = getattr(props, "name", None) or row["name"]
        # ROCm: gcnArchName ("gfx1100:sramecc-:xnack-"); CUDA builds fill it with the device name, so sm_<cc> there
        hip = getattr(torch.version, "hip", None)
        arch = getattr(props, "gcnArchName", None) if hip else "sm_%s%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?"))
        row["arch"] = (arch or "unknown").split(":")[0]
        device = torch.device("cuda", index)
        spec.run(torch, library, row, device, torch.Generator(device="cpu").manual_seed(index))
        torch.cuda.synchronize(device)
    except Exception as exc:  # pylint: disable=broad-except
        row["reason"] = "%s on %s (%s): %s" % (spec.failed, row["name"], row["arch"], _error(exc))
        return row
    bad = ["%s %s" % (key, row[key]) for key, limit in spec.limits if not row[key] <= limit]
    if bad:
        row["reason"] = "%s on %s (%s): %s" % (spec.wrong, row["name"], row["arch"], ", ".join(bad))
    else:
        row["ok"] = True
        row["reason"] = "%s on %s (%s)" % (spec.correct, row["name"], row["arch"])
    return row


def probe(spec):
    result = {"installed": False, "version": None, "torch": None, "hip": None, "cuda": None, "gpus": [], "ok": False, "reason": ""}
    result.update(dict.fromkeys(spec.fields))
    try:
        result["version"] = metadata.version(spec.distribution)
        result["installed"] = True
    except metadata.PackageNotFoundError:
        result["reason"] = "%s is not installed in this venv" % spec.distribution
        return result
    if spec.survey:
        spec.survey(result)
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        result["reason"] = "torch does not import: %s" % _error(exc)
        return result
    result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None), cuda=getattr(torch.version, "cuda", None))
    if not result["hip"] and not result["cuda"]:
        result["reason"] = spec.no_hip % torch.__version__
        return result
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        result["reason"] = spec.no_gpu % (torch.__version__, result["hip"] or "-")
        return result
    library, because = spec.load(torch, result)
    if library is None:
        return result
    result["gpus"] = [check_gpu(torch, spec, library, index) for index in range(torch.cuda.device_count())]
    failed = [gpu for gpu in result["gpus"] if not gpu["ok"]]
    result["ok"] = not failed
    result["reason"] = (spec.works % (result["version"], len(result["gpus"])) if not failed
                        else "; ".join(gpu["reason"] for gpu in failed) + because)
    return result


def main(argv):
    if len(argv) != 1 or argv[0] not in PROBES:
        sys.stderr.write("usage: kernel_probe.py %s\n" % "|".join(sorted(PROBES)))
        return 2
    try:
        result = probe(PROBES[argv[0]])
    except Exception as exc:  # pylint: disable=broad-except
        result = {"installed": None, "version": None, "gpus": [], "ok": False, "reason": "the probe itself failed: %s" % _error(exc)}
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

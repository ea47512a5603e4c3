# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which attention backend LLaMA-Factory should use on a ROCm host, as one pure function.

No Ansible import; Python 3.8 compatible. The filter ``radeonlab.llm.attention_backend``
(``plugins/filter/attention.py``) is a thin wrapper around :func:`attention_backend`; the role
``radeonlab.llm.llamafactory`` applies the result (``llamafactory_facts.attention``) and the LoRA job
role reads ``backend`` from there.

LLaMA-Factory's knob is ``flash_attn: auto|disabled|sdpa|fa2`` (``hparams/model_args.py``; there is
no ``--disable_flash_attn`` flag): ``disabled`` = eager attention, ``sdpa`` = PyTorch
scaled_dot_product_attention (torch > 2.1.1), ``fa2`` = the ``flash_attn`` package, ``auto`` = leave
transformers' choice (SDPA when available). Facts used (rocm_facts.md section 6):

* ROCm/flash-attention, CK backend (the default build, ``flash_attn_2_cuda`` extension): MI200/MI300
  (gfx90a, gfx942); newer READMEs add MI355X (gfx950). No general CK support on Navi (ROCm/flash-attention#93).
* ROCm/flash-attention, Triton backend (``flash_attn.flash_attn_triton_amd``, built and selected with
  ``FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE``): CDNA and RDNA3 (gfx1100/1101/1102).
* Everything else (RDNA2, RDNA4, APUs, CPU-only hosts) uses SDPA, which PyTorch serves on ROCm through
  AOTriton where it can and through its math kernel otherwise. Which one runs is :func:`sdpa_kernel`
  (data: ``support_matrix.SDPA_KERNELS``): ``flash`` (AOTriton flash / memory-efficient, no score matrix)
  or ``math`` (keeps the seq x seq scores; the LoRA runner sizes it so). Targets AOTriton ships as
  experimental run ``flash`` only with ``TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1``, returned in ``env``
  like the Triton FA2 switch (unless the caller turns experimental kernels off).

A GPU running under ``HSA_OVERRIDE_GFX_VERSION`` executes the kernels of the target it borrows
(gfx1031 with 10.3.0 runs gfx1030 code), so the borrowed target is what decides.
"""

from __future__ import annotations

import re

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

__all__ = (
    "AttentionPolicyError",
    "REQUESTS",
    "CK_TARGETS",
    "TRITON_TARGETS",
    "TRITON_ENV",
    "SDPA_KERNELS",
    "effective_target",
    "sdpa_kernel",
    "apply_environment",
    "attention_backend",
)

REQUESTS = sm.VOCABULARY["attention_requests"]

# Targets with a ROCm FlashAttention-2 build, per backend.
CK_TARGETS = {
    "gfx90a": "MI200 (CK backend, ROCm/flash-attention README)",
    "gfx942": "MI300 (CK backend, ROCm/flash-attention README)",
    "gfx950": "MI350 (CK backend in newer ROCm/flash-attention READMEs; UNVERIFIED for v2.8.0-cktile)",
}
TRITON_TARGETS = {
    "gfx90a": "MI200 (Triton backend)",
    "gfx942": "MI300 (Triton backend)",
    "gfx1100": "RDNA3 Navi31 (Triton backend)",
    "gfx1101": "RDNA3 Navi32 (Triton backend)",
    "gfx1102": "RDNA3 Navi33 (Triton backend)",
}
TRITON_ENV = {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
SDPA_KERNELS = sm.VOCABULARY["sdpa_kernels"]

_SDPA_MIN_TORCH = (2, 1, 2)  # LLaMA-Factory: sdpa needs torch > 2.1.1
_GFX_RE = re.compile(r"^gfx([0-9]{1,2})([0-9a-f])([0-9a-f])$")
_OVERRIDE_RE = re.compile(r"^(\d{1,2})\.(\d{1,3})\.(\d{1,3})$")
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


class AttentionPolicyError(ValueError):
    """An input the policy cannot interpret (the filter turns it into AnsibleFilterError)."""


def _normalize_gfx(name):
    if not isinstance(name, str):
        raise AttentionPolicyError("a GPU target must be a string such as 'gfx1100', got %r" % (name,))
    base = name.strip().lower().split(":", 1)[0].split("+", 1)[0]
    if base.startswith("amdgcn-amd-amdhsa--"):
        base = base[len("amdgcn-amd-amdhsa--"):]
    if not _GFX_RE.match(base):
        raise AttentionPolicyError("%r is not a gfx target (expected e.g. 'gfx1100' or 'gfx90a:xnack-')" % (name,))
    return base


def _target_of_override(value):
    match = _OVERRIDE_RE.match(str(value).strip())
    if not match:
        raise AttentionPolicyError("override %r is not major.minor.stepping (e.g. '10.3.0')" % (value,))
    major, minor, stepping = (int(g) for g in match.groups())
    if minor > 15 or stepping > 15:
        raise AttentionPolicyError("override %r has no gfx target (minor and stepping must be < 16)" % (value,))
    return "gfx%d%x%x" % (major, minor, stepping)


def effective_target(gpu):
    """(target whose kernels run, reported target) for a GPU given as a string or a dict.

    Dicts are items of ``ansible_facts.rocm.gpus`` or of the ``gpus`` list that radeonlab.llm.gpu_env returns
    (``name`` and, when overridden, ``override``). Returns None for a GPU that gpu_env hid (``visible: false``).
    """
    if isinstance(gpu, dict):
        if gpu.get("visible") is False:
            return None
        if "name" not in gpu:
            raise AttentionPolicyError("GPU entry without 'name': %r" % (gpu,))
        reported = _normalize_gfx(gpu["name"])
        override = gpu.get("override")
        if override:
            return _target_of_override(override), reported
        return reported, reported
    reported = _normalize_gfx(gpu)
    return reported, reported


def apply_environment(gpus, env):
    """GPU dicts as training sees them under ``env`` (the gpu_env module's env dict).

    ``HSA_OVERRIDE_GFX_VERSION_<node>`` (then the global ``HSA_OVERRIDE_GFX_VERSION``) sets ``override`` and
    ``ROCR_VISIBLE_DEVICES`` (indices or ``GPU-<uuid>``) sets ``visible``, unless the dict already says.
    Strings are returned unchanged (they carry no node, index or UUID).
    """
    if not env:
        return list(gpus)
    if not isinstance(env, dict):
        raise AttentionPolicyError("env must be a dict of environment variables, got %r" % (env,))
    mask = env.get("ROCR_VISIBLE_DEVICES")
    allowed = None
    if mask is not None and str(mask).strip() != "":
        allowed = {item.strip() for item in str(mask).split(",") if item.strip()}
    result = []
    for position, gpu in enumerate(gpus):
        if not isinstance(gpu, dict):
            result.append(gpu)
            continue
        gpu = dict(gpu)
        if "override" not in gpu:
            node = gpu.get("node")
            value = env.get("HSA_OVERRIDE_GFX_VERSION_%s" % node) if node is not None else None
            gpu["override"] = value or env.get("HSA_OVERRIDE_GFX_VERSION") or None
        if "visible" not in gpu and allowed is not None:
            index = gpu.get("index", position)
            uuid = gpu.get("uuid")
            names = {str(index)}
            if uuid:
                names.add(str(uuid) if str(uuid).startswith("GPU-") else "GPU-%s" % uuid)
            gpu["visible"] = bool(names & allowed)
        result.append(gpu)
    return result


def _flash_attn_info(flash_attn):
    """Normalise the flash_attn probe: {installed, ck, triton, version}."""
    if flash_attn is None or flash_attn is False:
        return {"installed": False, "ck": False, "triton": False, "version": None}
    if flash_attn is True:
        raise AttentionPolicyError("flash_attn must say which backend is installed: {'ck': bool, 'triton': bool}")
    if not isinstance(flash_attn, dict):
        raise AttentionPolicyError("flash_attn must be a dict such as {'installed': true, 'ck': true}, got %r" % (flash_attn,))
    ck = bool(flash_attn.get("ck"))
    triton = bool(flash_attn.get("triton"))
    installed = bool(flash_attn.get("installed", ck or triton)) and (ck or triton)
    return {"installed": installed, "ck": ck and installed, "triton": triton and installed,
            "version": flash_attn.get("version")}


def _sdpa_ok(torch_version):
    if not torch_version:
        return True
    match = _VERSION_RE.match(str(torch_version))
    if not match:
        raise AttentionPolicyError("torch_version %r is not a version such as '2.9.1+rocm6.4'" % (torch_version,))
    parts = tuple(int(g or 0) for g in match.groups())
    return parts >= _SDPA_MIN_TORCH


def sdpa_kernel(targets, torch_version, experimental=True):
    """Which kernel PyTorch's SDPA runs for these (effective) targets: dict ``kernel``, ``env``, ``reason``.

    ``kernel`` is ``flash`` (AOTriton flash / memory-efficient) when every target has native AOTriton kernels on
    that torch line, or experimental ones and ``experimental`` is true (then ``env`` carries
    ``TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1``); else ``math``. No target (CPU-only): ``flash`` (torch's CPU
    SDPA has its own fused kernel; sized as before). Unknown torch: ``math``, the larger (safe) size.
    """
    targets = sorted(set(targets))
    if not targets:
        return _kernel("flash", "no GPU: torch's CPU SDPA kernel, sized without a score matrix")
    if not torch_version:
        return _kernel("math", "torch version unknown: sized as SDPA's math kernel")
    try:
        row = sm.sdpa_kernels_for_torch(torch_version)
    except ValueError as exc:
        raise AttentionPolicyError(str(exc))
    if row is None:
        return _kernel("math", "torch %s ships no AOTriton (needs >= %s): SDPA runs its math kernel"
                       % (torch_version, sm.SDPA_KERNELS_BEFORE))
    line = "torch %s (AOTriton %s)" % (row["torch"], row["aotriton"])
    missing = [t for t in targets if t not in row["native"] and t not in row["experimental"]]
    if missing:
        return _kernel("math", "%s has no AOTriton SDPA kernels for %s: math kernel (keeps the score matrix)"
                       % (line, ", ".join(missing)))
    unsafe = [t for t in targets if t in row.get("unsafe", ())]
    if unsafe:
        return _kernel("math", "%s: AOTriton SDPA for %s is experimental because its kernels give wrong results on this "
                       "line (experimental switch not set): math kernel" % (line, ", ".join(unsafe)))
    trial = [t for t in targets if t in row["experimental"]]
    if not trial:
        return _kernel("flash", "%s: AOTriton flash/memory-efficient SDPA for %s" % (line, ", ".join(targets)))
    env_text = " ".join("%s=%s" % item for item in sorted(sm.AOTRITON_EXPERIMENTAL_ENV.items()))
    if not experimental:
        return _kernel("math", "%s: AOTriton SDPA for %s is experimental and experimental kernels are off (%s not "
                       "set): math kernel" % (line, ", ".join(trial), env_text))
    return _kernel("flash", "%s: AOTriton SDPA for %s is experimental, enabled with %s" % (line, ", ".join(trial), env_text),
                   sm.AOTRITON_EXPERIMENTAL_ENV)


def _kernel(kernel, reason, env=None):
    return {"kernel": kernel, "reason": reason, "env": dict(env or {})}


def _result(backend, requested, reason, env=None, gpus=None, fallback=False, sdpa=None):
    """The decision; ``sdpa`` (from :func:`sdpa_kernel`) only for the sdpa backend, whose env it adds."""
    env = dict(env or {})
    if backend == "sdpa" and sdpa:
        env.update(sdpa["env"])
    return {
        "backend": backend,
        "requested": requested,
        "reason": reason,
        "env": env,
        "gpus": gpus or [],
        "fallback": fallback,
        "sdpa_kernel": sdpa["kernel"] if backend == "sdpa" and sdpa else None,
        "sdpa_reason": sdpa["reason"] if backend == "sdpa" and sdpa else "",
    }


def attention_backend(gpus, flash_attn=None, requested="auto", torch_version=None, env=None, aotriton_experimental=True):
    """Decide LLaMA-Factory's ``flash_attn`` value for a host.

    :param gpus: the GPUs training will see: gfx strings, or dicts from ``ansible_facts.rocm.gpus`` / gpu_env's
        ``gpus`` (hidden ones are skipped, overridden ones count as the target they borrow). Empty = CPU only.
    :param flash_attn: what the venv has: None/False (not importable) or a dict ``{installed, ck, triton, version}``
        where ``ck`` = the CK extension (flash_attn_2_cuda) is present and ``triton`` = the AMD Triton backend is.
    :param requested: ``auto`` | ``disabled`` | ``sdpa`` | ``fa2`` (llamafactory_attention).
    :param torch_version: optional; SDPA needs torch > 2.1.1, older torch gets eager attention.
    :param env: optional gpu_env env dict; applied to GPU dicts with :func:`apply_environment`.
    :param aotriton_experimental: let SDPA use AOTriton kernels AOTriton marks experimental for the target
        (adds TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 to ``env``); false = those targets run the math kernel.
    :returns: dict ``backend`` (fa2|sdpa|disabled), ``requested``, ``reason``, ``env`` (variables training and the
        WebUI must carry, e.g. FLASH_ATTENTION_TRITON_AMD_ENABLE), ``gpus`` (per GPU: target, reported, fa2 route),
        ``fallback`` (true when an explicit fa2/sdpa request could not be honoured) and, for the sdpa backend,
        ``sdpa_kernel`` (flash|math, else None) with ``sdpa_reason``.
    """
    if not isinstance(requested, str) or requested.strip().lower() not in REQUESTS:
        raise AttentionPolicyError("requested attention %r is not one of %s" % (requested, ", ".join(REQUESTS)))
    requested = requested.strip().lower()
    if gpus is None:
        gpus = []
    if isinstance(gpus, (str, dict)) or not isinstance(gpus, (list, tuple)):
        raise AttentionPolicyError("gpus must be a list (of gfx strings or GPU dicts), got %r" % (gpus,))
    gpus = apply_environment(gpus, env)
    fa = _flash_attn_info(flash_attn)
    sdpa_ok = _sdpa_ok(torch_version)
    fallback_backend = "sdpa" if sdpa_ok else "disabled"
    no_sdpa = "torch %s has no usable SDPA for LLaMA-Factory (needs > 2.1.1), so eager attention" % torch_version

    per_gpu = []
    for gpu in gpus:
        targets = effective_target(gpu)
        if targets is None:
            continue
        target, reported = targets
        routes = []
        if target in CK_TARGETS:
            routes.append("ck")
        if target in TRITON_TARGETS:
            routes.append("triton")
        per_gpu.append({"target": target, "reported": reported, "fa2_routes": routes})
    if not isinstance(aotriton_experimental, bool):
        raise AttentionPolicyError("aotriton_experimental must be true or false, got %r" % (aotriton_experimental,))
    sdpa = sdpa_kernel([g["target"] for g in per_gpu], torch_version, aotriton_experimental)

    if requested == "disabled":
        return _result("disabled", requested, "disabled on request (llamafactory_attention=disabled): eager attention",
                       gpus=per_gpu)
    if requested == "sdpa":
        if sdpa_ok:
            return _result("sdpa", requested, "sdpa on request (llamafactory_attention=sdpa)", gpus=per_gpu, sdpa=sdpa)
        return _result("disabled", requested, "sdpa requested but " + no_sdpa, gpus=per_gpu, fallback=True)

    def _fallback(why):
        text = "%s; %s" % (why, "using sdpa" if sdpa_ok else no_sdpa)
        if requested == "fa2":
            text = "fa2 requested but " + text
        else:
            text = "auto: " + text
        return _result(fallback_backend, requested, text, gpus=per_gpu, fallback=requested == "fa2", sdpa=sdpa)

    if not per_gpu:
        return _fallback("no GPU visible (CPU-only host), FlashAttention-2 needs a ROCm GPU")
    targets = sorted({g["target"] for g in per_gpu})
    without = sorted({g["target"] for g in per_gpu if not g["fa2_routes"]})
    if without:
        return _fallback("no ROCm FlashAttention-2 build exists for %s (CK: %s; Triton: %s)" % (
            ", ".join(without), "/".join(sorted(CK_TARGETS)), "/".join(sorted(TRITON_TARGETS))))
    if not fa["installed"]:
        return _fallback("flash_attn is not installed in the venv (a ROCm build exists for %s: "
                         "set llamafactory_flash_attn_install)" % ", ".join(targets))
    on = ", ".join(targets)
    version = (" %s" % fa["version"]) if fa["version"] else ""
    if fa["ck"] and all("ck" in g["fa2_routes"] for g in per_gpu):
        return _result("fa2", requested, "fa2: flash_attn%s CK backend is installed and supports %s" % (version, on),
                       gpus=per_gpu)
    if fa["triton"] and all("triton" in g["fa2_routes"] for g in per_gpu):
        return _result("fa2", requested, "fa2: flash_attn%s Triton backend (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE) "
                       "supports %s" % (version, on), env=TRITON_ENV, gpus=per_gpu)
    installed = "CK" if fa["ck"] else "Triton"
    return _fallback("the installed flash_attn%s has only the %s backend, which does not support %s" % (
        version, installed, ", ".join(sorted({g["target"] for g in per_gpu
                                              if installed.lower() not in g["fa2_routes"]}))))

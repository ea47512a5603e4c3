# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU support and HSA_OVERRIDE_GFX_VERSION decisions, as pure functions over ``support_matrix``.

No Ansible import; Python 3.8 compatible. The module ``radeonlab.llm.gpu_env`` and the filters in
``plugins/filter/gfx.py`` are thin wrappers around :func:`gpu_support`, :func:`hsa_override_for`,
:func:`gpu_environment` and :func:`torch_for`.

Facts this code relies on (sources in ``support_matrix.SOURCES``):

* libhsakmt reads ``HSA_OVERRIDE_GFX_VERSION_<node_id>`` before the global variable, where ``node_id`` is the
  topology node id the thunk hands to ROCr (``HSA_AGENT_INFO_NODE``, which rocminfo prints as ``Node:``; CPU
  agents come first, so a single GPU is usually node 1). The value is ``major.minor.stepping`` in decimal,
  parsed with ``sscanf("%u.%u.%u%c")`` and range-checked (major<=63, minor<=255, stepping<=255).
* The per-node variable exists from ROCm 6.2 (ROCT-Thunk-Interface PR #104). Older runtimes only know the
  global variable, which applies to every GPU node.
* ``ROCR_VISIBLE_DEVICES`` takes indices or ``GPU-<uuid>`` values and is the recommended Linux mask.
"""

from __future__ import annotations

import re

from ansible_collections.radeonlab.llm.plugins.module_utils import apu_kernel
from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

__all__ = (
    "UnsupportedGpuError",
    "normalize_gfx",
    "gfx_version",
    "parse_rocm_version",
    "rocm_line",
    "validate_override_value",
    "gpu_support",
    "hsa_override_for",
    "resolve_reported_target",
    "gpu_environment",
    "torch_for",
)

_ISA_PREFIX = "amdgcn-amd-amdhsa--"
_GFX_FULL_RE = re.compile(r"^(gfx[0-9a-f]+)((?::[a-z0-9_]+[+-])*|(?:\+[a-z0-9_]+)*)$")
_GFX_RE = re.compile(r"^gfx(\d{1,2})([0-9a-f])([0-9a-f])$")
_ROCM_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
_OVERRIDE_RE = re.compile(r"^(\d{1,10})\.(\d{1,10})\.(\d{1,10})$")
_UUID_RE = re.compile(r"^GPU-[0-9a-fA-F]{4,32}$")


class UnsupportedGpuError(ValueError):
    """Raised for a well-formed GPU target that no override can rescue on the given ROCm line.

    ``support`` holds the :func:`gpu_support` dict (status ``unsupported``, reason, source).
    """

    def __init__(self, message, support=None):
        super(UnsupportedGpuError, self).__init__(message)
        self.support = support or {}


# ---------------------------------------------------------------------------------------------
# Input normalisation
# ---------------------------------------------------------------------------------------------
def normalize_gfx(name):
    """Return the bare lowercase target: ``' GFX90a:sramecc+:xnack- '`` -> ``'gfx90a'``.

    Accepts the ISA form ``amdgcn-amd-amdhsa--gfx1100``, feature suffixes (``:xnack-``) and the old ``+xnack``
    form. Raises ValueError for anything that is not one concrete gfx target (``'gfx10xx'``, ``''``, ``'1031'``,
    ``'gfx11-generic'``).
    """
    if not isinstance(name, str):
        raise ValueError("gfx target must be a string such as 'gfx1031', got %r" % (name,))
    text = name.strip().lower()
    if text.startswith(_ISA_PREFIX):
        text = text[len(_ISA_PREFIX):]
    if "generic" in text:
        raise ValueError("%r is a generic ISA, not a device target; use the agent's Name: (e.g. 'gfx1100')" % (name,))
    match = _GFX_FULL_RE.match(text)
    if not match or not _GFX_RE.match(match.group(1)):
        raise ValueError(
            "malformed gfx target %r: expected 'gfx' + major + minor + stepping hex digits, e.g. 'gfx1031', "
            "'gfx90a:sramecc+:xnack-' or 'gfx902+xnack'" % (name,)
        )
    return match.group(1)


def gfx_version(gfx):
    """HSA version string of a target as HSA_OVERRIDE_GFX_VERSION spells it: gfx1031 -> '10.3.1', gfx90a -> '9.0.10'."""
    target = normalize_gfx(gfx)
    major, minor, step = _GFX_RE.match(target).groups()
    return "%d.%d.%d" % (int(major), int(minor, 16), int(step, 16))


def _version_tuple(value):
    return tuple(int(p) for p in value.split("."))


def _target_for_version(value):
    """'10.3.0' -> 'gfx1030' (None when minor/stepping exceed one hex digit, e.g. 9.0.16)."""
    major, minor, step = _version_tuple(value)
    if minor > 15 or step > 15:
        return None
    return "gfx%d%x%x" % (major, minor, step)


def parse_rocm_version(version):
    """'6.2' / '6.2.4' / ' 7.0.0 ' -> (6, 2, 4); ValueError for '', 'six', '6', '6.x'."""
    if isinstance(version, bool) or not isinstance(version, (str, int, float)):
        raise ValueError("ROCm version must be a string such as '6.2' or '6.2.4', got %r" % (version,))
    text = str(version).strip()
    match = _ROCM_RE.match(text)
    if not match:
        raise ValueError("malformed ROCm version %r: expected 'X.Y' or 'X.Y.Z', e.g. '6.2' or '6.2.4'" % (version,))
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def rocm_line(version):
    """Release line of a ROCm version ('6.2.4' -> '6.2'); ValueError when the matrix does not cover it."""
    major, minor, _patch = parse_rocm_version(version)
    line = "%d.%d" % (major, minor)
    if line not in sm.RELEASES:
        raise ValueError(
            "ROCm %s is not covered by support matrix %s (release lines: %s)"
            % (str(version).strip(), sm.MATRIX_VERSION, ", ".join(sm.RELEASE_LINES))
        )
    return line


def validate_override_value(value):
    """Validate an explicit HSA_OVERRIDE_GFX_VERSION the way libhsakmt does; return it normalised ('10.03.0' -> '10.3.0')."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not text:
        raise ValueError(
            "HSA_OVERRIDE_GFX_VERSION value %r is invalid: an empty value makes libhsakmt fall back to gfx000; "
            "expected decimal major.minor.stepping such as '10.3.0'" % (value,)
        )
    match = _OVERRIDE_RE.match(text)
    hint = ""
    if match is None:
        try:
            hint = " (did you mean %s?)" % gfx_version(text)
        except ValueError:
            hint = ""
        raise ValueError(
            "HSA_OVERRIDE_GFX_VERSION value %r is invalid: libhsakmt expects decimal major.minor.stepping, "
            "e.g. '10.3.0' or '9.0.10' for gfx90a%s" % (value, hint)
        )
    major, minor, step = (int(p) for p in match.groups())
    if major > 63 or minor > 255 or step > 255:
        raise ValueError(
            "HSA_OVERRIDE_GFX_VERSION value %r is out of range: libhsakmt requires major<=63, minor<=255, "
            "stepping<=255" % (value,)
        )
    return "%d.%d.%d" % (major, minor, step)


# ---------------------------------------------------------------------------------------------
# Matrix lookups
# ---------------------------------------------------------------------------------------------
def _sources(*keys):
    seen = []
    for key in keys:
        if key and key not in seen:
            seen.append(key)
    return "; ".join(sm.SOURCES[key] for key in seen)


def _has_kernels(target, rel):
    return target in rel["rocblas"] and (rel["torch"] is None or target in rel["torch"])


def _kernel_verified(rel):
    return bool(rel["rocblas_verified"] and (rel["torch"] is None or rel["torch_verified"]))


def _family_of(target):
    for family in sm.OVERRIDE_FAMILIES:
        if target in family["members"]:
            return family
    return None


def _kernel_phrase(rel, joiner="and"):
    if rel["torch"] is None:
        return "rocBLAS"
    return "rocBLAS %s the PyTorch ROCm wheel" % joiner


def gpu_support(gfx, rocm_version):
    """Decide how a GPU runs on a ROCm release line.

    Returns a dict: ``status`` ('native' | 'override' | 'unsupported'), ``override`` (HSA_OVERRIDE_GFX_VERSION
    value or None), ``emulates`` (target whose kernels the override borrows), ``reason``, ``source``, ``verified``
    (False when an entry behind the decision is UNVERIFIED), ``official``, ``deprecated``, ``gfx``, ``rocm_line``
    and ``matrix_version``. Raises ValueError on malformed input or an uncovered ROCm line.
    """
    target = normalize_gfx(gfx)
    line = rocm_line(rocm_version)
    rel = sm.RELEASES[line]
    listed = target in rel["official_radeon"] or target in rel["official_instinct"]
    added_in = rel.get("official_from", {}).get(target)
    bare_line = str(rocm_version).strip().count(".") < 2  # 6.4 names no point release
    too_early = bool(listed and added_in and not bare_line and parse_rocm_version(rocm_version) < _version_tuple(added_in))
    official = listed and not too_early
    result = {
        "gfx": target,
        "rocm_line": line,
        "matrix_version": sm.MATRIX_VERSION,
        "official": official,
        "deprecated": target in rel["deprecated"],
        "status": "unsupported",
        "override": None,
        "emulates": None,
        "verified": True,
    }
    major = int(_GFX_RE.match(target).group(1))

    if major < 9:
        extra = ""
        if target in rel["rocblas"]:
            extra = " (rocBLAS %s still ships %s kernels, PyTorch ROCm wheels do not)" % (line, target)
        result.update(reason="%s on ROCm %s: %s%s" % (target, line, sm.PRE_GFX9_REASON, extra),
                      source=_sources("riol_never", "rocblas", "torch_arch", "cross_major"))
        return result

    if _has_kernels(target, rel):
        if official:
            stance = "officially supported on ROCm %s%s" % (line, " (deprecated)" if result["deprecated"] else "")
        elif too_early:
            stance = "AMD supports it from ROCm %s on, not on %s (works, unsupported by AMD; its release notes, %s)" % (
                added_in, rocm_version, rel["official_from_source"])
        else:
            stance = "not in AMD's official Linux list for ROCm %s (works, unsupported by AMD)" % line
        result.update(
            status="native",
            # AMD listing a target on a verified line implies its kernels ship, whatever the lists say.
            verified=_kernel_verified(rel) or bool(official and rel["official_verified"]),
            reason="%s has kernels in %s for ROCm %s; no override needed; %s" % (target, _kernel_phrase(rel), line, stance),
            source=_sources("riol", "rocblas", "torch_arch"),
        )
        return result

    family = _family_of(target)
    if family is not None:
        for candidate in family["candidates"]:
            if candidate == target or not _has_kernels(candidate, rel):
                continue
            value = gfx_version(candidate)
            result.update(
                status="override",
                override=value,
                emulates=candidate,
                verified=bool(family["verified"] and _kernel_verified(rel)),
                reason=(
                    "%s lacks kernels in %s for ROCm %s; it runs the %s kernels with HSA_OVERRIDE_GFX_VERSION=%s "
                    "(family %s: %s)" % (target, _kernel_phrase(rel, "or"), line, candidate, value, family["family"], family["notes"])
                ),
                source=_sources(family["source"], "rocblas", "torch_arch", "libhsakmt"),
            )
            return result
        result.update(
            verified=bool(family["verified"] and _kernel_verified(rel)),
            reason=(
                "%s has no kernels on ROCm %s and no member of family %s (%s) has any either; %s"
                % (target, line, family["family"], ", ".join(family["candidates"]), family["notes"])
            ),
            source=_sources(family["source"], "rocblas", "torch_arch"),
        )
        return result

    if target in sm.NO_RESCUE:
        why, key = sm.NO_RESCUE[target]
        result.update(reason="%s on ROCm %s: %s" % (target, line, why), source=_sources(key, "rocblas", "torch_arch"))
        return result

    result.update(
        verified=False,
        reason=(
            "%s has no kernels on ROCm %s and is not in support matrix %s, so no override value can be chosen "
            "safely" % (target, line, sm.MATRIX_VERSION)
        ),
        source=_sources("rocblas", "torch_arch"),
    )
    return result


def hsa_override_for(gfx, rocm_version):
    """The HSA_OVERRIDE_GFX_VERSION a GPU needs on that ROCm, or None when it runs natively.

    Raises ValueError on malformed input and :class:`UnsupportedGpuError` (with the reason) when no override can
    rescue the GPU on that ROCm line.
    """
    support = gpu_support(gfx, rocm_version)
    if support["status"] == "unsupported":
        raise UnsupportedGpuError(support["reason"], support)
    return support["override"]


def torch_for(rocm_version, torch=None):
    """PyTorch wheel for a ROCm version: dict(index_tag, index_url, torch, torchvision, torchaudio, numpy_pin, ...)."""
    line = "%d.%d" % parse_rocm_version(rocm_version)[:2]
    return sm.torch_for_line(line, torch)


# ---------------------------------------------------------------------------------------------
# Overridden captures
# ---------------------------------------------------------------------------------------------
def _chip_int(chip_id):
    if chip_id is None or isinstance(chip_id, bool):
        return None
    if isinstance(chip_id, int):
        return chip_id
    text = str(chip_id).strip().lower()
    match = re.match(r"^(\d+)\s*(?:\(0x[0-9a-f]+\))?$", text)
    if match:
        return int(match.group(1))
    match = re.match(r"^0x([0-9a-f]+)$", text)
    if match:
        return int(match.group(1), 16)
    return None


def resolve_reported_target(name, chip_id=None):
    """Undo an override visible in the facts.

    rocminfo run with HSA_OVERRIDE_GFX_VERSION set reports the overridden target (an RX 6700 XT, Chip ID 0x73df,
    shows as gfx1030). When ``chip_id`` is a chip of ``support_matrix.CHIP_IDS`` whose real target belongs to a
    family that borrows the reported target's kernels, return ``(real_target, note)``; otherwise
    ``(reported_target, note_or_None)``. Unknown chips are trusted as reported.
    """
    reported = normalize_gfx(name)
    chip = _chip_int(chip_id)
    if chip is None or chip not in sm.CHIP_IDS:
        return reported, None
    real, what = sm.CHIP_IDS[chip]
    if real == reported:
        return reported, None
    family = _family_of(real)
    if family is not None and reported in family["candidates"]:
        note = (
            "rocminfo reported %s, but Chip ID 0x%04x is %s (%s): the facts were gathered with "
            "HSA_OVERRIDE_GFX_VERSION set, so the decision uses the real target" % (reported, chip, real, what)
        )
        return real, note
    note = "Chip ID 0x%04x is %s (%s) on current drivers, reported here as %s" % (chip, real, what, reported)
    return reported, note


# ---------------------------------------------------------------------------------------------
# Environment for a whole host
# ---------------------------------------------------------------------------------------------
def _parse_policy(policy):
    if policy is None:
        return "auto", None
    if not isinstance(policy, str):
        raise ValueError("override policy must be 'auto', 'off' or an x.y.z string, got %r" % (policy,))
    low = policy.strip().lower()
    if low in ("auto", "off"):
        return low, None
    return "explicit", validate_override_value(policy)


def _as_int(value, what, gpu_label):
    if isinstance(value, bool):
        raise ValueError("%s of %s must be an integer, got %r" % (what, gpu_label, value))
    if isinstance(value, int):
        result = value
    elif isinstance(value, str) and value.strip().isdigit():
        result = int(value.strip())
    else:
        raise ValueError("%s of %s must be a non-negative integer, got %r" % (what, gpu_label, value))
    if result < 0:
        raise ValueError("%s of %s must be a non-negative integer, got %r" % (what, gpu_label, value))
    return result


def _as_bool(value, what, gpu_label):
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0", ""):
        return False
    raise ValueError("%s of %s must be a boolean, got %r" % (what, gpu_label, value))


def _normalise_gpus(gpus):
    if not isinstance(gpus, (list, tuple)):
        raise ValueError("gpus must be a list of GPU dicts (ansible_facts.rocm.gpus), got %s" % type(gpus).__name__)
    rows = []
    for position, gpu in enumerate(gpus):
        label = "gpus[%d]" % position
        if not isinstance(gpu, dict):
            raise ValueError("%s must be a dict with at least 'name' and 'node', got %r" % (label, gpu))
        if "name" not in gpu:
            raise ValueError("%s must have 'name' (gfx target) and 'node' (KFD node id), got keys %s" % (label, sorted(gpu)))
        try:
            reported = normalize_gfx(gpu["name"])
        except ValueError as exc:
            raise ValueError("%s: %s" % (label, exc))
        rows.append({
            "position": position,
            "node": None if gpu.get("node") is None else _as_int(gpu["node"], "node", label),
            "index": None if gpu.get("index") is None else _as_int(gpu["index"], "index", label),
            "reported": reported,
            "marketing_name": gpu.get("marketing_name") or "",
            "vram_kb": gpu.get("vram_kb") if isinstance(gpu.get("vram_kb"), int) else None,
            "uuid": (gpu.get("uuid") or "").strip() if isinstance(gpu.get("uuid"), str) else "",
            "integrated": _as_bool(gpu.get("integrated", False), "integrated", label),
            "chip_id": gpu.get("chip_id"),
            "compute_units": gpu.get("compute_units") if isinstance(gpu.get("compute_units"), int) else 0,
        })
    nodes = [row["node"] for row in rows if row["node"] is not None]
    if len(set(nodes)) != len(nodes):
        raise ValueError("gpus list two GPUs on the same KFD node %s; per-node overrides would be ambiguous" % sorted(nodes))
    # ROCR_VISIBLE_DEVICES indices: given, else the ordinal by node (the order ROCr enumerates GPU agents).
    by_node = sorted(rows, key=lambda r: (r["node"] is None, r["node"] or 0, r["position"]))
    for ordinal, row in enumerate(by_node):
        if row["index"] is None:
            row["index"] = ordinal
    indices = [row["index"] for row in rows]
    if len(set(indices)) != len(indices):
        raise ValueError("gpus list duplicate 'index' values %s" % sorted(indices))
    return sorted(rows, key=lambda r: r["index"])


def _decide(row, line, mode, explicit):
    """Per-GPU decision before the host-level rules (integrated GPUs, runtime limits)."""
    target, chip_note = resolve_reported_target(row["reported"], row["chip_id"])
    support = gpu_support(target, line)
    decision = {
        "node": row["node"],
        "index": row["index"],
        "name": target,
        "reported_name": row["reported"],
        "marketing_name": row["marketing_name"],
        "vram_kb": row["vram_kb"],
        "uuid": row["uuid"],
        "integrated": row["integrated"],
        "status": support["status"],
        "recommended_override": support["override"],
        "override": None,
        "visible": False,
        "official": support["official"],
        "verified": support["verified"],
        "source": support["source"],
        "reasons": [support["reason"]],
        "compute_units": row["compute_units"],
    }
    if chip_note:
        decision["reasons"].insert(0, chip_note)
        decision["source"] = "%s; %s" % (decision["source"], sm.SOURCES["corpus"])
    status = support["status"]
    if status == "native":
        decision["visible"] = True
        if mode == "explicit":
            decision["reasons"].append("explicit override %s not applied: never override a GPU that runs natively" % explicit)
        return decision
    if mode == "auto":
        if status == "override":
            decision["override"] = support["override"]
            decision["visible"] = True
        else:
            decision["reasons"].append("hidden: no kernels and no override can rescue it")
        return decision
    if mode == "off":
        if status == "override":
            decision["visible"] = True
            decision["reasons"].append(
                "override policy 'off': HSA_OVERRIDE_GFX_VERSION=%s not set; this GPU only works with kernels built "
                "for %s (custom wheels)" % (support["override"], target)
            )
        else:
            decision["reasons"].append("hidden: no kernels and no override can rescue it")
        return decision
    # explicit value
    own = gfx_version(target)
    if explicit == own:
        decision["reasons"].append(
            "explicit override %s is %s's own version: a no-op that cannot help (the classic 8.0.3-on-RX-580 mistake)"
            % (explicit, target)
        )
    elif _version_tuple(explicit)[0] != _version_tuple(own)[0]:
        decision["reasons"].append(
            "explicit override %s not applied: cross-generation override of a major-%d target (not ISA-compatible; "
            "rejected by newer libhsakmt, ROCm/rocm-systems#5686)" % (explicit, _version_tuple(own)[0])
        )
        decision["source"] = "%s; %s" % (decision["source"], sm.SOURCES["cross_major"])
    else:
        decision["override"] = explicit
        decision["visible"] = True
        borrowed = _target_for_version(explicit)
        note = "explicit override %s applied (matrix recommends %s)" % (explicit, support["override"] or "nothing")
        rel = sm.RELEASES[line]
        if borrowed is None or not _has_kernels(borrowed, rel):
            note += "; warning: %s has no kernels on ROCm %s either" % (borrowed or explicit, line)
        decision["reasons"].append(note)
        return decision
    if status == "override":
        decision["reasons"].append("hidden: without a usable override it has no kernels on ROCm %s" % line)
    else:
        decision["reasons"].append("hidden: no kernels and no override can rescue it")
    return decision


def _hide(decision, why):
    decision["visible"] = False
    decision["override"] = None
    decision["reasons"].append(why)


def _env_overrides(decisions, rel, line, warnings):
    """Choose global vs per-node override variables; may hide GPUs an old runtime cannot serve."""
    targets = [d for d in decisions if d["visible"] and d["override"]]
    if not targets:
        return {}, "none"
    values = sorted({d["override"] for d in targets}, key=_version_tuple)
    others = [d for d in decisions if not (d["visible"] and d["override"])]

    def global_is_harmless(value):
        # A global value touches every node; it is harmless for hidden GPUs (ROCr creates no agent for them)
        # and for GPUs whose own version it is.
        return all((not d["visible"]) or gfx_version(d["name"]) == value for d in others)

    if len(values) == 1 and not others:
        return {"HSA_OVERRIDE_GFX_VERSION": values[0]}, "global"
    per_node = rel["per_node_override"] and all(d["node"] is not None for d in targets)
    if rel["per_node_override"] and not per_node:
        warnings.append("a GPU without a KFD node id needs an override: per-node variables cannot be used")
    if per_node:
        env = {}
        for d in targets:
            env["HSA_OVERRIDE_GFX_VERSION_%d" % d["node"]] = d["override"]
            d["reasons"].append("set as per-node HSA_OVERRIDE_GFX_VERSION_%d (KFD node %d) so no other GPU is touched"
                                % (d["node"], d["node"]))
        return env, "per_node"
    if len(values) == 1 and global_is_harmless(values[0]):
        for d in others:
            if d["visible"]:
                d["reasons"].append("the global HSA_OVERRIDE_GFX_VERSION=%s equals its own version (no effect)" % values[0])
        return {"HSA_OVERRIDE_GFX_VERSION": values[0]}, "global"
    # ROCm < 6.2: one global value for every node. Keep what can run together, hide the rest.
    native_visible = [d for d in others if d["visible"]]
    if rel["per_node_override"]:
        why = ("hidden: needs HSA_OVERRIDE_GFX_VERSION=%s, but without KFD node ids in the facts ROCm %s can only "
               "take the global variable, which would also override %s")
    else:
        why = ("hidden: needs HSA_OVERRIDE_GFX_VERSION=%s, but ROCm %s only has the global variable (per-node "
               "HSA_OVERRIDE_GFX_VERSION_<node> arrived in ROCm 6.2) and it would also override %s")
    if native_visible:
        names = ", ".join(sorted({d["name"] for d in native_visible}))
        for d in targets:
            _hide(d, why % (d["override"], line, names))
        warnings.append("ROCm %s cannot give GPUs different gfx overrides; kept the natively supported GPU(s) %s" % (line, names))
        return {}, "none"
    groups = {}
    for d in targets:
        groups.setdefault(d["override"], []).append(d)
    keep = sorted(groups, key=lambda v: (len(groups[v]), sum(d["compute_units"] for d in groups[v]),
                                         -min(d["index"] for d in groups[v])), reverse=True)[0]
    for value, members in groups.items():
        if value != keep:
            for d in members:
                _hide(d, why % (value, line, "the GPU(s) that need %s" % keep))
    warnings.append("ROCm %s cannot give GPUs different gfx overrides; kept the GPU(s) that need %s" % (line, keep))
    return {"HSA_OVERRIDE_GFX_VERSION": keep}, "global"


def parse_selection(select):
    """``all``, a count N (the first N usable GPUs) or a list of ROCr indices; raises ValueError otherwise."""
    if select is None or select == "all":
        return "all"
    if isinstance(select, (list, tuple)):
        if not select or not all(isinstance(i, int) and not isinstance(i, bool) or (isinstance(i, str) and i.isdigit()) for i in select):
            raise ValueError("select must be 'all', a number of GPUs or a list of GPU indices, got %r" % (select,))
        return sorted({int(i) for i in select})
    if isinstance(select, bool) or not (isinstance(select, int) or (isinstance(select, str) and select.isdigit())) or int(select) < 1:
        raise ValueError("select must be 'all', a number of GPUs (1 or more) or a list of GPU indices, got %r" % (select,))
    return int(select)


def _apply_selection(decisions, select):
    """Hide the usable GPUs that ``select`` leaves out; refuse a selection the usable GPUs cannot meet."""
    chosen = parse_selection(select)
    if chosen == "all":
        return
    usable = sorted((d for d in decisions if d["visible"]), key=lambda d: d["index"])
    indices = [d["index"] for d in usable]
    if isinstance(chosen, int):
        if chosen > len(usable):
            raise ValueError("select asks for %d GPU(s) but %d are usable (indices %s)" % (chosen, len(usable), indices or "none"))
        keep = set(indices[:chosen])
    else:
        missing = [i for i in chosen if i not in indices]
        if missing:
            raise ValueError("select names GPU index(es) %s that are not usable; the usable GPUs are %s" % (missing, indices or "none"))
        keep = set(chosen)
    for d in usable:
        if d["index"] not in keep:
            _hide(d, "hidden: not selected (select %s)" % (select,))


def gpu_environment(gpus, rocm_version, policy="auto", include_integrated=False, select="all", kernel=None):
    """Environment for the training job / WebUI service of one host, plus a per-GPU explanation.

    ``gpus`` are the dicts of ``ansible_facts.rocm.gpus`` (``name``, ``node`` required; ``index``, ``uuid``,
    ``integrated``, ``chip_id``, ``marketing_name``, ``compute_units`` used when present). ``policy`` is 'auto',
    'off' or an explicit 'x.y.z'. Returns ``dict(env, gpus, override_mode, usable_gpus, warnings, rocm_line,
    matrix_version, apu_kernel)``; raises ValueError on malformed input. ``kernel`` (``release``, ``version``,
    ``distribution``, ``distribution_version``: the running kernel) feeds ``apu_kernel``, AMD's verdict on a visible Ryzen
    AI Max GPU with this ROCm release and kernel (:func:`apu_kernel.check`), a warning unless it is supported.

    Rules: a natively supported GPU is never overridden; GPUs with no rescue are hidden; integrated GPUs are
    hidden next to a usable discrete GPU unless ``include_integrated``; one global HSA_OVERRIDE_GFX_VERSION is
    used when it only touches GPUs that need that value (or whose own version it is), else per-node variables
    (ROCm >= 6.2); ROCR_VISIBLE_DEVICES (UUID where known, else index) only when a GPU is hidden. ``select``
    ('all', a count N or a list of ROCr indices) then keeps only those of the usable GPUs (the first N by index).
    """
    line = rocm_line(rocm_version)
    rel = sm.RELEASES[line]
    mode, explicit = _parse_policy(policy)
    include = _as_bool(include_integrated, "include_integrated", "the host")
    rows = _normalise_gpus(gpus)
    warnings = []
    decisions = [_decide(row, line, mode, explicit) for row in rows]

    if not include:
        discrete_usable = [d for d in decisions if d["visible"] and not d["integrated"]]
        if discrete_usable:
            for d in decisions:
                if d["integrated"] and d["visible"]:
                    _hide(d, "hidden: integrated GPU next to a usable discrete GPU (ROCm asks to disable the IGP; "
                             "the runtime may crash otherwise); set include_integrated to use it")
                    d["source"] = "%s; %s" % (d["source"], sm.SOURCES["igp"])

    _apply_selection(decisions, select)
    env, override_mode = _env_overrides(decisions, rel, line, warnings)

    visible = [d for d in decisions if d["visible"]]
    hidden = [d for d in decisions if not d["visible"]]
    if visible and hidden:
        env["ROCR_VISIBLE_DEVICES"] = ",".join(
            d["uuid"] if _UUID_RE.match(d["uuid"] or "") else str(d["index"]) for d in visible
        )
    if not visible and decisions:
        warnings.append("no GPU is usable with ROCm %s: %s" % (
            line, "; ".join("%s (node %s)" % (d["name"], d["node"]) for d in decisions)))
    if mode == "explicit" and not any(d["override"] for d in decisions):
        warnings.append("explicit override %s was not applied to any GPU" % explicit)
    if line in ("7.1", "7.2") and override_mode != "none":
        warnings.append("ROCm %s: overrides assumed to work as on 7.0 (UNVERIFIED); TheRock-based 7.14+/10.x "
                        "runtimes reportedly fail HSA init with an override" % line)

    apu = apu_kernel.check([d["name"] for d in visible], rocm_version, kernel)
    if apu["applies"] and apu["status"] != "supported":
        warnings.append(apu["message"])

    explained = []
    for d in decisions:
        explained.append({
            "node": d["node"],
            "index": d["index"],
            "name": d["name"],
            "reported_name": d["reported_name"],
            "marketing_name": d["marketing_name"],
            "vram_kb": d["vram_kb"],
            "integrated": d["integrated"],
            "status": d["status"],
            "override": d["override"],
            "recommended_override": d["recommended_override"],
            "visible": d["visible"],
            "official": d["official"],
            "verified": d["verified"],
            "reason": "; ".join(d["reasons"]),
            "source": d["source"],
        })
    return {
        "env": dict(sorted(env.items())),
        "gpus": explained,
        "override_mode": override_mode,
        "usable_gpus": len(visible),
        "warnings": warnings,
        "rocm_line": line,
        "matrix_version": sm.MATRIX_VERSION,
        "apu_kernel": apu,
    }

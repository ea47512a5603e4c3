# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Pure parser for the text output of ROCm's ``rocminfo`` tool.

No Ansible import: modules, filters and plain pytest use it alike. Runs on Python 3.8+.

``parse_rocminfo(text)`` returns::

    {
        "runtime_version": "1.14" | None,       # "Runtime Version:" of the HSA System Attributes
        "driver": {"state": "loaded" | "not_loaded" | "not_live",
                   "version": "6.10.5" | None} | None,   # the "ROCk module ..." line; None without one
        "agents": [                              # in output order (Agent 1, Agent 2, ...)
            {
                "node": 1,                       # "Node:" (int or None)
                "type": "GPU",                   # "Device Type:" as printed: CPU, GPU, DSP, ...
                "name": "gfx1100",               # agent "Name:" (the CPU model for CPUs)
                "marketing_name": "...",         # "" when blank or absent
                "compute_units": 96,             # "Compute Unit:" (int or None)
                "uuid": "GPU-69e905a91bab9202",  # None when absent or blank (ROCm 2.x)
                "chip_id": 29772,                # "Chip ID:" decimal part (int or None)
                "isa": ["amdgcn-amd-amdhsa--gfx1100"],  # every ISA "Name:" of the agent
                "vram_kb": 25149440,             # see below
            },
        ],
        "error": None | {"kind": ..., "message": ..., "hint": ...},
    }

``vram_kb`` is the ``Size`` of the agent's first pool whose segment is exactly
``GLOBAL; FLAGS: COARSE GRAINED``, for GPU agents only; None for other agents or when there
is no such pool.

``error`` is None whenever at least one agent was enumerated (a "ROCk module is NOT loaded"
banner followed by agents is not an error). Otherwise ``kind`` is the first that applies of
``rock_not_loaded`` / ``rock_not_live`` > ``kfd_permission_denied`` /
``kfd_operation_not_permitted`` / ``kfd_cannot_allocate_memory`` > ``hsa_out_of_resources`` >
``segfault`` > ``unknown``; ``message`` is the tool's own line (ANSI codes removed, stripped; ""
when the text is empty) and ``hint`` says what to do (``ERROR_HINTS``).

Robustness: fixed-column padding or none, ANSI colour codes (also with the ESC byte lost in
a paste), CRLF or CR line ends, any uniform or mixed indentation (8-space doc copies), blank
marketing names, truncation anywhere (no ``*** Done ***``), several ISAs per agent, DSP (NPU)
agents, several CPU agents, terminal scroll markers such as ``[12/1815]`` at line ends, lost
``Agent N`` / ``Pool Info:`` / ``Pool N`` / ``ISA N`` header lines, ``N(0xHEX)`` numbers with a
missing parenthesis, labels that overflow their column (``Alloc Recommended Granule:4KB``).
The parser never depends on column widths or indentation, only on labels and headers.

Errors: any ``str`` (or ``bytes``, decoded as UTF-8 with replacement) is accepted and yields a
result dict; garbage text gives no agents and an ``unknown`` error. The only exception this
module raises is ``RocminfoParseError`` (a ``ValueError``), for input that is not text at all
(``None``, numbers, ...) or, defensively, if parsing ever failed internally.
"""

from __future__ import annotations

import re

__all__ = [
    "ERROR_HINTS",
    "ERROR_KINDS",
    "APU_GFX_TARGETS",
    "RocminfoParseError",
    "gpu_is_integrated",
    "make_error",
    "parse_rocminfo",
]


class RocminfoParseError(ValueError):
    """Raised by :func:`parse_rocminfo` for input that is not rocminfo text.

    This is the only exception the parser raises: for a value that is neither ``str`` nor
    ``bytes``, and as a guard should parsing fail internally. Text without any agent is *not*
    an exception; it gives a result whose ``error`` describes the failure.
    """


# Error kinds, in priority order (the first that applies wins).
ERROR_KINDS = (
    "rock_not_loaded",
    "rock_not_live",
    "kfd_permission_denied",
    "kfd_operation_not_permitted",
    "kfd_cannot_allocate_memory",
    "hsa_out_of_resources",
    "segfault",
    "unknown",
)

_OVERRIDE_EXAMPLES = (
    "HSA_OVERRIDE_GFX_VERSION set to the nearest supported target of the same family "
    "(for example 10.3.0 for gfx1031/gfx1032/gfx1034/gfx1035/gfx1036, 11.0.0 for gfx1101/gfx1102/gfx1103)"
)

ERROR_HINTS = {
    "rock_not_loaded": (
        "The amdgpu kernel driver is not loaded. Load it ('sudo modprobe amdgpu', then check "
        "'dmesg | grep -i amdgpu'); right after installing amdgpu-dkms, reboot so the DKMS-built "
        "module is the one in use ('dkms status' must show it installed for the running kernel). "
        "With Secure Boot enabled an unsigned DKMS module is refused at load time: enroll the DKMS "
        "MOK key (mokutil --import) or disable Secure Boot. Without a supported AMD GPU this "
        "message is expected."
    ),
    "rock_not_live": (
        "The amdgpu module is present but not live: its initialisation is still running or "
        "failed. Check 'dmesg | grep -i amdgpu' for firmware or init errors, reboot after the "
        "amdgpu-dkms build, check Secure Boot (the DKMS module must be signed with an enrolled MOK "
        "key) and that the GPU is supported by this driver version."
    ),
    "kfd_permission_denied": (
        "This user may not open /dev/kfd: add it to the render and video groups "
        "('sudo usermod -aG render,video <user>') and log in again, because new groups only apply "
        "to new sessions. In a container also pass '--device /dev/kfd --device /dev/dri' and "
        "'--group-add' the render and video groups."
    ),
    "kfd_operation_not_permitted": (
        "Opening /dev/kfd was refused by policy (EPERM). In a container pass "
        "'--device /dev/kfd --device /dev/dri' (and '--security-opt seccomp=unconfined') or allow "
        "the devices in the cgroup, SELinux or AppArmor policy; on a host check that the user is in "
        "the render and video groups and has logged in again."
    ),
    "kfd_cannot_allocate_memory": (
        "The KFD could not set up this GPU (ENOMEM when opening /dev/kfd): usually the GPU is "
        "unsupported or masked by this kernel driver (see 'dmesg | grep -i kfd'). Use a supported "
        "GPU or a newer amdgpu-dkms and reboot after the DKMS build; for a close relative of a "
        "supported target try " + _OVERRIDE_EXAMPLES + "."
    ),
    "hsa_out_of_resources": (
        "The ROCm runtime could not initialise (HSA_STATUS_ERROR_OUT_OF_RESOURCES). Usual causes: "
        "an unsupported or masked GPU - try " + _OVERRIDE_EXAMPLES + ", or unset a wrong or "
        "malformed override; no access to /dev/kfd - join the render and video groups and log in "
        "again (containers need '--device /dev/kfd --device /dev/dri'); the amdgpu driver not "
        "loaded or left in a bad state - load it or reboot after the amdgpu-dkms build."
    ),
    "segfault": (
        "rocminfo crashed (segmentation fault). Usual causes: ROCm user space that does not match "
        "the kernel driver (reinstall matching ROCm and amdgpu-dkms packages and reboot), an "
        "unsupported GPU (see HSA_OVERRIDE_GFX_VERSION), or an integrated GPU next to a discrete "
        "one (hide it with ROCR_VISIBLE_DEVICES or disable it in the firmware setup)."
    ),
    "unknown": (
        "rocminfo listed no agent and printed no recognised error. Run it by hand, check "
        "'dmesg | grep -i -e amdgpu -e kfd', that the amdgpu driver is loaded ('lsmod | grep amdgpu'), "
        "that the user is in the render and video groups, and that ROCm is installed consistently."
    ),
}

# Kinds that parse_rocminfo never returns, used by the rocm_facts module around the tool run.
ERROR_HINTS.update({
    "rocminfo_not_found": (
        "rocminfo is not installed or not where expected: install the ROCm 'rocminfo' package "
        "(it lands in /opt/rocm/bin) or set rocminfo_path; use source=auto or source=sysfs to read "
        "the KFD topology instead."
    ),
    "timeout": (
        "rocminfo did not finish in time: the GPU or the driver may be hung (check "
        "'dmesg | grep -i -e amdgpu -e kfd' for GPU resets, reboot if needed) or the host is very "
        "busy; raise the timeout option to wait longer."
    ),
})

_KFD_NO_DEVICE_HINT = (
    " /dev/kfd does not exist here: load the amdgpu driver, or in a container pass "
    "'--device /dev/kfd --device /dev/dri'."
)

# ESC-based sequences: CSI (colours, cursor), OSC (titles), two-byte escapes.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?")
# Colour codes whose ESC byte was lost in a paste: "[37mROCk module is loaded[0m".
_BARE_SGR_RE = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*)?m")
# Other control characters (TAB kept, expanded later).
_CTRL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# tmux/screen scroll position indicators at line end: "[12/1815]".
_SCROLL_RE = re.compile(r"\s*\[\d+/\d+\]\s*$")

_AGENT_RE = re.compile(r"^agent\s+(\d+)$", re.IGNORECASE)
_POOL_RE = re.compile(r"^pool\s+(\d+)$", re.IGNORECASE)
_ISA_RE = re.compile(r"^isa\s+(\d+)$", re.IGNORECASE)
_STARS_RE = re.compile(r"^\*{3,}$")
_DONE_RE = re.compile(r"^\*+\s*done\s*\*+", re.IGNORECASE)
_LABEL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ._()/+'-]{0,60}?)\s*:(.*)$")
# ISA names: "amdgcn-amd-amdhsa--gfx1100", old ROCm "AMD:AMDGPU:9:0:0".
_ISA_NAME_RE = re.compile(r"^(?:amdgcn-|amd:amdgpu:)", re.IGNORECASE)
_INT_RE = re.compile(r"^\+?(\d+)")
_HEXINT_RE = re.compile(r"^0[xX]([0-9a-fA-F]+)")
_WS_RE = re.compile(r"\s+")

_ROCK_RE = re.compile(
    r"ROCk\s+module\s+(?:version\s+(?P<version>\S+)\s+)?is\s+(?P<neg>NOT\s+)?(?P<what>loaded|live)",
    re.IGNORECASE,
)
_KFD_ERRNO_KINDS = (
    ("permission denied", "kfd_permission_denied"),
    ("operation not permitted", "kfd_operation_not_permitted"),
    ("cannot allocate memory", "kfd_cannot_allocate_memory"),
)
_NOT_MEMBER_RE = re.compile(r"\bis not member of\b.*\bgroup\b", re.IGNORECASE)
_HSA_OOR_RE = re.compile(r"HSA_STATUS_ERROR_OUT_OF_RESOURCES")
_SEGV_RE = re.compile(r"segmentation fault|\bSIGSEGV\b|\bsegfault\b", re.IGNORECASE)
_ERRORISH_RE = re.compile(
    r"call returned|hsa_status_error|\berror\b|fail|not found|cannot|unable|no such|denied|abort|killed",
    re.IGNORECASE,
)

_VRAM_SEGMENT = "GLOBAL; FLAGS: COARSE GRAINED"
_TOP_SECTION = "agent"


# gfx targets that only exist as integrated GPUs (APUs): Carrizo, Stoney, Raven/Picasso, Raven2,
# Renoir/Cezanne/Lucienne/Barcelo, Cyan Skillfish, Van Gogh, Rembrandt, Raphael/Dragon Range/
# Granite Ridge, Mendocino, Phoenix/Hawk Point, Strix Point, Strix Halo, Krackan Point, gfx1153.
APU_GFX_TARGETS = frozenset((
    "gfx801", "gfx810", "gfx902", "gfx909", "gfx90c", "gfx1013", "gfx1033", "gfx1035", "gfx1036",
    "gfx1037", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
))

_GIB_KB = 1024 * 1024


def gpu_is_integrated(name, vram_kb, compute_units, memory_properties=None, gtt_kb=None):
    """Decide whether a GPU agent is an integrated GPU (shares system memory with the CPU).

    True when any of these holds (first match wins, documented in ``rocm_facts``):

    1. rocminfo lists ``APU`` in the agent's ``Memory Properties`` (ROCm 6.x and later);
    2. the gfx target only exists in APUs (``APU_GFX_TARGETS``; e.g. gfx1036, gfx1103, gfx1151);
    3. no device-local VRAM pool is reported (``vram_kb`` None or 0, e.g. gfx902 on ROCm 2.x);
    4. at most 12 compute units (no discrete Radeon with more than 4 GiB is that small; catches an
       iGPU whose name was changed by HSA_OVERRIDE_GFX_VERSION, e.g. a 780M reported as gfx1100);
    5. VRAM <= 4 GiB with at most 16 compute units (ollama's iGPU VRAM threshold, plus a CU bound
       so that 4 GiB discrete cards with more CUs stay discrete);
    6. when the GTT size is known (sysfs): ollama's rule, VRAM <= 4 GiB and GTT >= 8 GiB and
       GTT >= 4 x VRAM.

    So a Strix Halo (gfx1151, 40 CUs, 64 GiB) is integrated: its "VRAM" is a carve-out of the same
    system RAM the CPU uses, which is what callers planning memory must know. Small 4 GiB discrete
    cards (RX 6400/6500 XT, RX 550/560) are reported as integrated by rules 5/6, as ollama does.
    """
    if memory_properties and any(str(p).strip().upper() == "APU" for p in memory_properties):
        return True
    if name and str(name).split(":", 1)[0].lower() in APU_GFX_TARGETS:
        return True
    if not vram_kb:
        return True
    if compute_units and compute_units <= 12:
        return True
    if compute_units and compute_units <= 16 and vram_kb <= 4 * _GIB_KB:
        return True
    if gtt_kb is not None and vram_kb <= 4 * _GIB_KB and gtt_kb >= 8 * _GIB_KB and gtt_kb >= 4 * vram_kb:
        return True
    return False


def make_error(kind, message):
    """Build an ``error`` dict ``{kind, message, hint}`` for ``kind`` (one of ERROR_KINDS or any
    other string, which gets the ``unknown`` hint)."""
    return {
        "kind": kind,
        "message": message or "",
        "hint": ERROR_HINTS.get(kind, ERROR_HINTS["unknown"]),
    }


def _to_int(value):
    """Decimal part of ``N``, ``N(0xHEX)``, ``N(0xHEX`` or ``N KB``; ``0xHEX`` alone; else None."""
    value = value.strip()
    m = _HEXINT_RE.match(value)
    if m:
        return int(m.group(1), 16)
    m = _INT_RE.match(value)
    if m:
        return int(m.group(1))
    return None


def _clean_lines(text):
    """Yield cleaned lines: no ANSI codes, control characters, scroll markers or trailing space."""
    text = _ANSI_RE.sub("", text)
    text = _BARE_SGR_RE.sub("", text)
    # splitlines() handles \n, \r\n and a lone \r.
    for raw in text.splitlines():
        line = _CTRL_RE.sub("", raw).expandtabs(8)
        line = _SCROLL_RE.sub("", line)
        yield line.rstrip()


class _Agent:
    __slots__ = ("node", "type", "name", "marketing_name", "compute_units", "uuid",
                 "chip_id", "isa", "pools", "memory_properties")

    def __init__(self):
        self.node = None
        self.type = None
        self.name = None
        self.marketing_name = None
        self.compute_units = None
        self.uuid = None
        self.chip_id = None
        self.isa = []
        self.pools = []  # [segment, size_kb]
        self.memory_properties = None

    def vram_kb(self):
        if (self.type or "").upper() != "GPU":
            return None
        for segment, size in self.pools:
            if segment == _VRAM_SEGMENT:
                return size
        return None

    def as_dict(self, details=False):
        result = {
            "node": self.node,
            "type": self.type,
            "name": self.name,
            "marketing_name": self.marketing_name or "",
            "compute_units": self.compute_units,
            "uuid": self.uuid,
            "chip_id": self.chip_id,
            "isa": list(self.isa),
            "vram_kb": self.vram_kb(),
        }
        if details:
            result["memory_properties"] = list(self.memory_properties or [])
        return result


def _normalize_segment(value):
    return _WS_RE.sub(" ", value.strip().rstrip("\\").strip()).upper()


def _parse_driver(line):
    m = _ROCK_RE.search(line)
    if not m:
        return None
    what = m.group("what").lower()
    if m.group("neg"):
        state = "not_live" if what == "live" else "not_loaded"
    else:
        state = "loaded"
    return {"state": state, "version": m.group("version")}


def _classify_error(lines, driver_line):
    """Return the error dict for output that enumerated no agent."""
    stripped = [ln.strip() for ln in lines if ln.strip()]

    if driver_line is not None:
        drv = _parse_driver(driver_line)
        if drv and drv["state"] == "not_loaded":
            return make_error("rock_not_loaded", driver_line)
        if drv and drv["state"] == "not_live":
            return make_error("rock_not_live", driver_line)

    # "/dev/kfd" lines: rocminfo's "Unable to open /dev/kfd read-write: <strerror>", or the
    # thunk's own wording in other tools' output.
    kfd_lines = [ln for ln in stripped if "/dev/kfd" in ln.lower()]
    for needle, kind in _KFD_ERRNO_KINDS:
        for ln in kfd_lines:
            if needle in ln.lower():
                return make_error(kind, ln)
    kfd_missing = any("no such file" in ln.lower() for ln in kfd_lines)
    for ln in stripped:
        if _NOT_MEMBER_RE.search(ln):
            # the group check rocminfo prints after a failed open; the open line itself was lost
            return make_error("kfd_permission_denied", ln)

    for ln in stripped:
        if _HSA_OOR_RE.search(ln):
            err = make_error("hsa_out_of_resources", ln)
            if kfd_missing:
                err["hint"] += _KFD_NO_DEVICE_HINT
            return err

    for ln in stripped:
        if _SEGV_RE.search(ln):
            return make_error("segfault", ln)

    message = None
    for candidates in ([ln for ln in stripped if ln.lower().startswith("call returned")], kfd_lines,
                       [ln for ln in stripped if _ERRORISH_RE.search(ln)], stripped):
        if candidates:
            message = candidates[0]
            break
    err = make_error("unknown", message or "")
    if kfd_missing:
        err["hint"] += _KFD_NO_DEVICE_HINT
    return err


def _parse(text, details=False):
    runtime_version = None
    driver = None
    driver_line = None
    agents = []
    agent = None
    section = _TOP_SECTION
    pool = None
    seen_agent_marker = False  # "HSA Agents" header or a "*******" separator was seen
    done = False  # "*** Done ***" seen
    lines = list(_clean_lines(text))

    for line in lines:
        s = line.strip()
        if not s:
            continue

        if driver_line is None and "rock" in s.lower():
            drv = _parse_driver(s)
            if drv is not None:
                driver = drv
                driver_line = s
                continue

        if _STARS_RE.match(s):
            # "*******" lines only frame "Agent N" headers.
            seen_agent_marker = not done
            section = _TOP_SECTION
            pool = None
            continue
        if _DONE_RE.match(s):
            agent = None
            done = True  # after this only an explicit "Agent N" starts an agent
            seen_agent_marker = False
            continue
        if s.lower() == "hsa agents":
            seen_agent_marker = not done
            continue

        m = _AGENT_RE.match(s)
        if m:
            done = False
            agent = _Agent()
            agents.append(agent)
            section = _TOP_SECTION
            pool = None
            continue

        if agent is not None:
            if _POOL_RE.match(s):
                pool = [None, None]
                agent.pools.append(pool)
                section = "pool"
                continue
            if _ISA_RE.match(s):
                section = "isa"
                pool = None
                continue

        m = _LABEL_RE.match(s)
        if not m:
            continue
        label = _WS_RE.sub(" ", m.group(1)).strip().lower()
        value = m.group(2).strip()

        if agent is None:
            if label == "runtime version" and runtime_version is None and not agents:
                runtime_version = value or None
                continue
            if label == "name" and seen_agent_marker and not _ISA_NAME_RE.match(value):
                # The "Agent N" header line was lost.
                agent = _Agent()
                agents.append(agent)
                section = _TOP_SECTION
                pool = None
            else:
                continue

        if label == "name":
            if section == "isa" or _ISA_NAME_RE.match(value):
                if value:
                    agent.isa.append(value)
                continue
            if agent.name is not None:
                # A second agent-level name: the next agent's header was lost.
                agent = _Agent()
                agents.append(agent)
                pool = None
            section = _TOP_SECTION
            agent.name = value
            continue

        if label in ("pool info", "isa info", "cache info"):
            section = label
            pool = None
            continue

        if label == "segment":
            if pool is None or pool[0] is not None:
                # "Pool N" line lost: a new segment starts a new pool.
                pool = [None, None]
                agent.pools.append(pool)
            pool[0] = _normalize_segment(value)
            section = "pool"
            continue
        if label == "size":
            if pool is not None and section == "pool" and pool[1] is None:
                pool[1] = _to_int(value)
            continue

        if label == "uuid":
            section = _TOP_SECTION
            if agent.uuid is None:
                agent.uuid = value or None
        elif label == "marketing name":
            section = _TOP_SECTION
            if agent.marketing_name is None:
                agent.marketing_name = value
        elif label == "node":
            section = _TOP_SECTION
            if agent.node is None:
                agent.node = _to_int(value)
        elif label == "device type":
            section = _TOP_SECTION
            if agent.type is None:
                agent.type = value.rstrip("\\").strip() or None
        elif label == "chip id":
            section = _TOP_SECTION
            if agent.chip_id is None:
                agent.chip_id = _to_int(value)
        elif label == "compute unit":
            section = _TOP_SECTION
            if agent.compute_units is None:
                agent.compute_units = _to_int(value)
        elif label == "memory properties":
            section = _TOP_SECTION
            if agent.memory_properties is None:
                agent.memory_properties = [p.strip() for p in value.rstrip("\\").split(",") if p.strip()]

    result = {
        "runtime_version": runtime_version,
        "driver": driver,
        "agents": [a.as_dict(details=details) for a in agents],
        "error": None,
    }
    if not agents:
        result["error"] = _classify_error(lines, driver_line)
    return result


def parse_rocminfo(text, details=False):
    """Parse rocminfo output; see the module docstring for the result.

    ``details=True`` adds ``memory_properties`` (list, e.g. ``['APU']``) to every agent; the
    default gives exactly the documented shape.

    Raises RocminfoParseError (and nothing else) when ``text`` is not ``str``/``bytes``.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise RocminfoParseError("rocminfo output must be text, got %s" % type(text).__name__)
    try:
        return _parse(text, details=details)
    except Exception as exc:  # pragma: no cover - defensive: never leak another exception type
        raise RocminfoParseError("cannot parse rocminfo output: %s" % exc) from exc

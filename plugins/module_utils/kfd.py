# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Pure reader of the amdgpu KFD topology in sysfs, for hosts where rocminfo is missing or broken.

No Ansible import; every path is taken relative to ``root`` (default ``/``) so tests run on
fixture trees. Runs on Python 3.8+. Follows ollama's discovery (discover/amd_linux.go):

* driver: present iff ``/sys/module/amdgpu`` exists; ``initstate`` (``live`` once initialised,
  absent when built in) and ``version`` (absent for the in-tree driver) are read when there.
* nodes: ``/sys/class/kfd/kfd/topology/nodes/<N>/properties`` in numeric order. A node with
  ``gfx_target_version`` 0 (or none) is a CPU node; otherwise the decimal value is split into
  stepping (last 2 digits), minor (next 2) and major (the rest) and named ``gfx%d%x%x``
  (90010 -> gfx90a, 90012 -> gfx90c, 110501 -> gfx1151). A node with both CPU cores and a
  gfx target (old APUs) gives a CPU agent and a GPU agent with the same node, like rocminfo.
  A node with neither CPU cores nor a gfx target (masked) is skipped.
* memory: the DRM device of a GPU node is ``/sys/class/drm/renderD<drm_render_minor>/device``
  when that exists and its vendor/device match, otherwise the first unused
  ``/sys/class/drm/card<N>/device`` whose ``vendor``/``device`` (hex) equal the node's
  ``vendor_id``/``device_id`` and, when both sides have one, whose ``unique_id`` (hex) equals
  the node's ``unique_id``. Its ``mem_info_vram_total`` and ``mem_info_gtt_total`` (bytes) give
  ``vram_kb`` and ``gtt_kb``.

``read_kfd_topology(root)`` returns agents in the same shape as
``rocminfo.parse_rocminfo`` so callers treat both sources alike:

* ``node``, ``type`` (``CPU``/``GPU``), ``name`` (gfx target; the CPU model from
  ``/proc/cpuinfo`` for CPU nodes, else None), ``marketing_name`` (the DRM ``product_name``
  when the board exposes one, else ""), ``compute_units`` (``simd_count // simd_per_cu`` for GPUs,
  ``cpu_cores_count`` for CPUs), ``uuid`` (``GPU-%016x`` of a non-zero ``unique_id``, as rocminfo
  prints it), ``chip_id`` (``device_id``), ``isa`` (``["amdgcn-amd-amdhsa--<gfx>"]``, derived:
  sysfs has no xnack/sramecc feature flags), ``vram_kb``.

plus ``driver``, ``topology`` (whether the topology directory exists), ``devices`` (per GPU
agent, same order: raw ids, ``drm_render_minor``, ``card``, ``gtt_kb``, ``gfx_target_version``,
``simd_count``, ``simd_per_cu``, ``array_count``, ``unique_id``, ``location_id``) and ``error``
(None when any agent was found, else ``{kind, message, hint}`` with the rocminfo kinds
``rock_not_loaded``, ``rock_not_live`` or ``unknown``).

Unreadable or malformed files never raise: the value is treated as absent.
"""

from __future__ import annotations

import os
import re

from ansible_collections.radeonlab.llm.plugins.module_utils.rocminfo import make_error

__all__ = [
    "gfx_target_name",
    "parse_properties",
    "read_driver",
    "read_kfd_topology",
]

TOPOLOGY_NODES = "sys/class/kfd/kfd/topology/nodes"
DRM_CLASS = "sys/class/drm"
AMDGPU_MODULE = "sys/module/amdgpu"

_CARD_RE = re.compile(r"^card(\d+)$")
_MODEL_NAME_RE = re.compile(r"^model name\s*:\s*(.*)$", re.MULTILINE)


def _path(root, rel):
    return os.path.join(root or "/", rel)


def _read(path):
    """File content stripped, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except (OSError, ValueError):
        return None
    return data.decode("utf-8", errors="replace").strip()


def _read_hex(path):
    value = _read(path)
    if not value:
        return None
    try:
        return int(value, 16)
    except ValueError:
        return None


def _read_int(path):
    value = _read(path)
    if not value:
        return None
    try:
        return int(value.split()[0], 10)
    except ValueError:
        return None


def parse_properties(text):
    """Parse a KFD ``properties`` file (``key value`` lines) into ``{key: int | str}``."""
    props = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        value = parts[1]
        try:
            props[parts[0]] = int(value, 10)
        except ValueError:
            props[parts[0]] = value
    return props


def gfx_target_name(version):
    """``gfx_target_version`` (int or decimal string) to ``gfxNNNN``; None for 0 or garbage.

    Like ollama: stepping = last 2 decimal digits, minor = next 2, major = the rest; minor and
    stepping are printed in hex (``gfx%d%x%x``).
    """
    try:
        value = int(version)
    except (TypeError, ValueError):
        return None
    if value <= 0:
        return None
    stepping = value % 100
    minor = (value // 100) % 100
    major = value // 10000
    if major == 0:
        return None
    return "gfx%d%x%x" % (major, minor, stepping)


def read_driver(root="/"):
    """State of the amdgpu module: ``{present, loaded, state, version}``.

    ``loaded`` is true when ``/sys/module/amdgpu`` exists and its ``initstate`` is ``live`` or
    absent (driver built into the kernel).
    """
    base = _path(root, AMDGPU_MODULE)
    present = os.path.isdir(base)
    state = _read(os.path.join(base, "initstate")) if present else None
    version = _read(os.path.join(base, "version")) if present else None
    return {
        "present": present,
        "loaded": bool(present and (not state or state == "live")),
        "state": state or None,
        "version": version or None,
    }


def _cpu_model(root):
    text = _read(_path(root, "proc/cpuinfo"))
    if not text:
        return None
    m = _MODEL_NAME_RE.search(text)
    return m.group(1).strip() if m else None


def _numeric_dirs(path, pattern=None):
    try:
        names = os.listdir(path)
    except OSError:
        return []
    found = []
    for name in names:
        if pattern is not None:
            m = pattern.match(name)
            if not m:
                continue
            key = int(m.group(1))
        elif name.isdigit():
            key = int(name)
        else:
            continue
        found.append((key, name))
    found.sort()
    return [(key, os.path.join(path, name)) for key, name in found]


def _drm_info(devdir):
    return {
        "vendor": _read_hex(os.path.join(devdir, "vendor")),
        "device": _read_hex(os.path.join(devdir, "device")),
        "unique_id": _read_hex(os.path.join(devdir, "unique_id")),
        "vram_total": _read_int(os.path.join(devdir, "mem_info_vram_total")),
        "gtt_total": _read_int(os.path.join(devdir, "mem_info_gtt_total")),
        "product_name": _read(os.path.join(devdir, "product_name")) or "",
    }


def _matches(info, vendor_id, device_id, unique_id):
    if info["vendor"] is None or info["device"] is None:
        return False
    if info["vendor"] != vendor_id or info["device"] != device_id:
        return False
    if unique_id and info["unique_id"] and info["unique_id"] != unique_id:
        return False
    return True


def _find_drm(root, props, used):
    """Return (name, info) of the DRM device of a GPU node, or (None, None).

    ``used`` holds the real paths of devices already given to a node; on a real system
    ``renderD<N>/device`` and ``card<N>/device`` are links to the same PCI device directory.
    """
    vendor_id = props.get("vendor_id")
    device_id = props.get("device_id")
    unique_id = props.get("unique_id") if isinstance(props.get("unique_id"), int) and props.get("unique_id") > 0 else 0
    drm = _path(root, DRM_CLASS)
    minor = props.get("drm_render_minor")
    if isinstance(minor, int) and minor > 0:
        devdir = os.path.join(drm, "renderD%d" % minor, "device")
        if os.path.isdir(devdir) and os.path.realpath(devdir) not in used:
            info = _drm_info(devdir)
            if vendor_id is None or _matches(info, vendor_id, device_id, unique_id):
                used.add(os.path.realpath(devdir))
                return "renderD%d" % minor, info
    if vendor_id is None or device_id is None:
        return None, None
    for _key, carddir in _numeric_dirs(drm, _CARD_RE):
        devdir = os.path.join(carddir, "device")
        if not os.path.isdir(devdir) or os.path.realpath(devdir) in used:
            continue
        info = _drm_info(devdir)
        if _matches(info, vendor_id, device_id, unique_id):
            used.add(os.path.realpath(devdir))
            return os.path.basename(carddir), info
    return None, None


def _as_int(value):
    return value if isinstance(value, int) else None


def read_kfd_topology(root="/"):
    """Read KFD topology, DRM memory sizes and driver state under ``root``; never raises."""
    driver = read_driver(root)
    nodes_dir = _path(root, TOPOLOGY_NODES)
    topology = os.path.isdir(nodes_dir)
    agents = []
    devices = []
    used_devices = set()
    cpu_model = None
    cpu_model_read = False

    for node, nodedir in _numeric_dirs(nodes_dir):
        text = _read(os.path.join(nodedir, "properties"))
        if text is None:
            continue
        props = parse_properties(text)
        gfx_version = _as_int(props.get("gfx_target_version")) or 0
        gfx = gfx_target_name(gfx_version)
        cpu_cores = _as_int(props.get("cpu_cores_count")) or 0

        if cpu_cores > 0:
            if not cpu_model_read:
                cpu_model = _cpu_model(root)
                cpu_model_read = True
            agents.append({
                "node": node,
                "type": "CPU",
                "name": cpu_model,
                "marketing_name": cpu_model or "",
                "compute_units": cpu_cores,
                "uuid": None,
                "chip_id": None,
                "isa": [],
                "vram_kb": None,
            })
        if gfx is None:
            continue

        simd_count = _as_int(props.get("simd_count"))
        simd_per_cu = _as_int(props.get("simd_per_cu"))
        compute_units = None
        if simd_count is not None and simd_per_cu:
            compute_units = simd_count // simd_per_cu
        unique_id = _as_int(props.get("unique_id")) or 0
        if not 0 < unique_id < (1 << 64):
            unique_id = 0
        card, info = _find_drm(root, props, used_devices)
        vram_kb = None
        gtt_kb = None
        product_name = ""
        if info is not None:
            if info["vram_total"] is not None:
                vram_kb = info["vram_total"] // 1024
            if info["gtt_total"] is not None:
                gtt_kb = info["gtt_total"] // 1024
            product_name = info["product_name"]
        agents.append({
            "node": node,
            "type": "GPU",
            "name": gfx,
            "marketing_name": product_name,
            "compute_units": compute_units,
            "uuid": ("GPU-%016x" % unique_id) if unique_id else None,
            "chip_id": _as_int(props.get("device_id")),
            "isa": ["amdgcn-amd-amdhsa--" + gfx],
            "vram_kb": vram_kb,
        })
        devices.append({
            "node": node,
            "gfx_target_version": gfx_version,
            "vendor_id": _as_int(props.get("vendor_id")),
            "device_id": _as_int(props.get("device_id")),
            "unique_id": unique_id or None,
            "location_id": _as_int(props.get("location_id")),
            "drm_render_minor": _as_int(props.get("drm_render_minor")),
            "simd_count": simd_count,
            "simd_per_cu": simd_per_cu,
            "array_count": _as_int(props.get("array_count")),
            "card": card,
            "gtt_kb": gtt_kb,
        })

    error = None
    if not agents:
        if not driver["present"]:
            error = make_error(
                "rock_not_loaded",
                "ROCk module is NOT loaded, possibly no GPU devices (%s does not exist)" % _path(root, AMDGPU_MODULE),
            )
        elif not driver["loaded"]:
            error = make_error(
                "rock_not_live",
                "ROCk module is NOT live, possibly no GPU devices (initstate: %s)" % driver["state"],
            )
        else:
            error = make_error(
                "unknown",
                "amdgpu is loaded but %s lists no KFD node" % nodes_dir,
            )
    return {
        "driver": driver,
        "topology": topology,
        "agents": agents,
        "devices": devices,
        "error": error,
    }

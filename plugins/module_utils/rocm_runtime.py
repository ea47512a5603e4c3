# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which ROCm user space radeonlab.llm.pytorch_rocm installs on a host: apt or pip (pytorch_rocm_runtime).

apt: ROCm from repo.radeon.com (rocm_driver) and torch from download.pytorch.org (TORCH_WHEELS). pip: AMD's
pip-delivered ROCm (TheRock), rocm[libraries] and a matching torch as wheels in the venv (ROCM_PIP). Pure: no Ansible
import, Python 3.8 compatible; the data lives in support_matrix.py (ROCM_PIP, ROCM_PIP_TARGETS).

``auto`` picks pip only where every GPU target is sourced ``stable`` for pip, AMD pairs that target with the kernel's own
driver and the host runs it (rocm_driver_facts.kernel_driver ``inbox``), AMD lists the host's distribution release for
it, and the wheels do not have to pass the fleet wheelhouse (which cannot carry the rocm selector sdist). Everything else
stays apt. An explicit ``pip`` is refused (never silently downgraded) where a target is not stable or the OS is not
listed, unless ``allow_preview``; and always with the wheelhouse.
"""

from __future__ import annotations

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

RUNTIMES = ("apt", "pip", "auto")
DRIVERS = ("inbox", "dkms")


def pip_target(gfx):
    """The ROCM_PIP_TARGETS row of a gfx target (with ``status`` and a ``source`` text), or an ``unknown`` row."""
    name = str(gfx or "").strip().lower().split(":", 1)[0]
    for row in sm.ROCM_PIP_TARGETS:
        if name in row["targets"]:
            found = dict(row)
            found["target"] = name
            found["source"] = "; ".join(sm.SOURCES[key] for key in row["sources"])
            return found
    return {"target": name, "family": "-", "targets": (name,), "status": "unknown", "driver": None, "os": {},
            "sources": (), "source": "", "notes": "no row in ROCM_PIP_TARGETS"}


def _os_listed(row, distribution, distribution_version):
    major_minor = ".".join(str(distribution_version or "").split(".")[:2])
    return major_minor in row["os"].get(str(distribution or ""), ())


def pip_requirements(targets, torch=None):
    """The pip requirements of ROCM_PIP for these gfx targets: torch / torchvision with one device extra per target,
    torchaudio and rocm[libraries,...]. ``torch`` ('' / '2.13' / '2.13.0') must name the recorded release."""
    wheel = sm.ROCM_PIP["torch"]
    wanted = str(torch or "").strip()
    if wanted and not (wheel["torch"] == wanted or wheel["torch"].startswith(wanted + ".")):
        raise ValueError("torch %s has no ROCm %s pip wheel recorded (known: %s)" % (wanted, sm.ROCM_PIP["release"], wheel["torch"]))
    devices = ",".join("device-%s" % name for name in sorted(set(targets)))
    suffix = "+" + wheel["local"]
    return [
        "torch[%s]==%s%s" % (devices, wheel["torch"], suffix),
        "torchvision[%s]==%s%s" % (devices, wheel["torchvision"], suffix),
        "torchaudio==%s%s" % (wheel["torchaudio"], suffix),
        sm.ROCM_PIP["rocm_requirement"].format(devices=devices, release=sm.ROCM_PIP["release"]),
    ]


def runtime_plan(requested="auto", targets=(), kernel_driver=None, distribution="", distribution_version="",
                 wheelhouse=False, allow_preview=False, torch=None):
    """Decide apt or pip for one host.

    ``targets``: the gfx targets of the GPUs the host trains on (gpu_environment_facts.visible_gpus names);
    ``kernel_driver``: rocm_driver_facts.kernel_driver (``inbox``/``dkms``, None when unknown). Returns a dict: runtime,
    requested, reason, refused (bool), message (why refused and the fix, '' otherwise), targets (one pip_target row
    each), and for pip: index_url, requirements, release. Raises ValueError only for a requested value not in RUNTIMES.
    """
    requested = str(requested or "").strip()
    if requested not in RUNTIMES:
        raise ValueError("pytorch_rocm_runtime must be one of %s, got %r" % (", ".join(RUNTIMES), requested))
    names = sorted({str(t).strip().lower().split(":", 1)[0] for t in (targets or ()) if str(t).strip()})
    rows = [pip_target(name) for name in names]
    plan = {"requested": requested, "runtime": "apt", "reason": "", "refused": False, "message": "", "targets": rows,
            "index_url": None, "requirements": [], "release": sm.ROCM_PIP["release"]}
    if requested == "apt":
        plan["reason"] = "pytorch_rocm_runtime: apt"
        return plan

    host = "%s %s" % (distribution or "?", distribution_version or "?")
    not_stable = ["%s (%s)" % (row["target"], row["status"]) for row in rows if row["status"] != "stable"]
    os_missing = [row["target"] for row in rows if row["status"] == "stable" and not _os_listed(row, distribution, distribution_version)]
    problems = []  # (text, opt-in may lift it)
    if not rows:
        problems.append(("no GPU target is known for this host (gpu_environment_facts.visible_gpus is empty)", False))
    if not_stable:
        problems.append(("AMD's pip ROCm %s is not stable for %s" % (sm.ROCM_PIP["release"], ", ".join(not_stable)), True))
    if os_missing:
        problems.append(("AMD lists no pip ROCm %s for %s on %s" % (sm.ROCM_PIP["release"], ", ".join(os_missing), host), True))
    if wheelhouse and not sm.ROCM_PIP["wheelhouse"]:
        problems.append(("the fleet wheelhouse cannot carry it (torch needs the rocm selector, an sdist, which pip download "
                         "--only-binary=:all: --platform cannot fetch)", False))

    if requested == "auto":
        not_inbox = [row["target"] for row in rows if row["status"] == "stable" and row["driver"] != "inbox"]
        if not problems and not_inbox:
            problems.append(("AMD pairs %s with its amdgpu driver, not the kernel's own" % ", ".join(not_inbox), False))
        if not problems and kernel_driver != "inbox":
            problems.append(("the host's kernel driver is %s, not the kernel's own (rocm_driver_facts.kernel_driver)"
                             % (kernel_driver or "unknown"), False))
        if problems:
            plan["reason"] = "auto: apt, because " + "; ".join(text for text, _lift in problems)
            return plan
        plan["reason"] = "auto: pip, AMD's pip ROCm %s is stable for %s with the kernel's own driver on %s" % (
            sm.ROCM_PIP["release"], ", ".join(names), host)
    else:
        blocking = [text for text, lift in problems if not (lift and allow_preview)]
        if blocking:
            plan["refused"] = True
            plan["reason"] = "pip refused"
            plan["message"] = (
                "pytorch_rocm_runtime: pip is refused on this host: %s. Nothing was changed. Fix: set pytorch_rocm_runtime "
                "to apt (or auto)%s%s; docs/support_matrix.md, 'ROCm user space: apt or pip', lists the targets."
                % ("; ".join(blocking),
                   ", or pytorch_rocm_runtime_allow_preview: true to install a target or OS AMD does not list anyway"
                   if any(lift for _text, lift in problems) and not allow_preview else "",
                   ", or pytorch_rocm_wheelhouse: false (each host installs from the index)"
                   if wheelhouse and not sm.ROCM_PIP["wheelhouse"] else ""))
            return plan
        plan["reason"] = "pytorch_rocm_runtime: pip%s" % (
            " (pytorch_rocm_runtime_allow_preview: %s)" % "; ".join(t for t, _l in problems) if problems else "")
    try:
        requirements = pip_requirements(names, torch)
    except ValueError as exc:
        if requested == "auto":
            plan["reason"] = "auto: apt, because %s" % exc
            return plan
        plan.update(refused=True, reason="pip refused", message=(
            "pytorch_rocm_runtime: pip is refused on this host: %s. Nothing was changed. Fix: leave "
            "pytorch_rocm_torch_version empty, or set pytorch_rocm_runtime to apt." % exc))
        return plan
    plan.update(runtime="pip", index_url=sm.ROCM_PIP["index_url"], requirements=requirements)
    return plan

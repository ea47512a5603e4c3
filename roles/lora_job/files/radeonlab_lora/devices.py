# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where training runs: the GPU facts (what the role saw) against what torch sees in the training environment.

- ``torch_view()``      what torch sees in *this* process (imports torch; never raises)
- ``probe(env)``        ``torch_view()`` in a child process with the trainer's environment
                        (``python -m radeonlab_lora.devices``), so the long-lived runner neither imports
                        torch nor holds a HIP context while its trainer uses the card
- ``gpus_from_facts``   the visible GPUs of a facts dict (``gpus``/``agents`` list, or a flat ``vram_kb``)
- ``decide(...)``       pure: train on the GPU, on the CPU, or refuse with both sides and the likely causes

Cards are paired by index (the facts' ``index``, torch's device index); their VRAM (rocminfo KiB vs torch
``total_memory``) must agree within 10 %. Integrated GPUs are counted (torch sees them too) but their memory
is not compared (torch reports the shared memory of an APU). ``trainable`` says which GPUs a job trains on, for
the decision and for sizing: the discrete cards with VRAM, else the integrated ones the facts left visible (the
gpu_environment role hides an integrated GPU next to a usable discrete card, and one its ROCm line does not run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass

from .spec import DEVICE_CHOICES

VRAM_TOLERANCE = 0.10
MIN_INTEGRATED_POOL_KIB = 1 << 20  # 1 GiB
PROBE_TIMEOUT_S = 180
VISIBILITY_ENV = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION")


@dataclass(frozen=True)
class Decision:
    requested: str  # auto | gpu | cpu
    train_on: str  # gpu | cpu
    ok: bool
    reason: str  # short, for tables
    message: str  # the whole story (both sides and the likely causes when not ok)
    facts_gpus: tuple = ()

    def as_dict(self) -> dict:
        data = asdict(self)
        data["facts_gpus"] = [dict(gpu) for gpu in self.facts_gpus]
        return data


# --------------------------------------------------------------------------------------------- torch side
def torch_view() -> dict:
    """What torch sees: version, HIP/CUDA build, device count, names, memory, gfx arch. Never raises."""
    view: dict = {"env": {name: os.environ.get(name) for name in VISIBILITY_ENV}}
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except Exception as exc:  # pylint: disable=broad-except
        # ImportError, or a broken install failing to load its libraries (OSError, RuntimeError)
        return {**view, "torch": None, "hip": None, "cuda": None, "count": 0, "devices": [], "error": f"{type(exc).__name__}: {exc}"}
    view.update(torch=str(torch.__version__), hip=getattr(torch.version, "hip", None), cuda=getattr(torch.version, "cuda", None),
                count=0, devices=[], error=None)
    try:
        view["count"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
        for index in range(view["count"]):
            props = torch.cuda.get_device_properties(index)
            view["devices"].append({"index": index, "name": torch.cuda.get_device_name(index), "total_kib": int(props.total_memory) // 1024,
                                    "arch": getattr(props, "gcnArchName", None)})
    except Exception as exc:  # pylint: disable=broad-except
        # a runtime that fails while enumerating: report what was seen so far
        view["error"] = f"{type(exc).__name__}: {exc}"
    return view


def child_env(env: dict) -> dict:
    """``env`` with this package's parent directory on PYTHONPATH (for ``python -m radeonlab_lora.*`` children)."""
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [path for path in env.get("PYTHONPATH", "").split(os.pathsep) if path]
    if home not in paths:
        paths.insert(0, home)
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


def probe(env: dict | None = None) -> dict:
    """``torch_view()`` run by this interpreter in a child process with ``env`` (default: this process's)."""
    argv = [sys.executable, "-m", "radeonlab_lora.devices"]
    failed = {"torch": None, "hip": None, "cuda": None, "count": 0, "devices": [], "env": {}}
    try:
        done = subprocess.run(argv, env=child_env(dict(os.environ if env is None else env)), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {**failed, "error": f"the torch probe did not finish: {type(exc).__name__}: {exc}"}
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        return json.loads(lines[-1])
    except (ValueError, IndexError):
        return {**failed, "error": f"the torch probe printed no result (exit {done.returncode}, stderr: {done.stderr.strip()[-300:]!r})"}


def view_summary(view: dict) -> dict:
    """The part of a view that goes into the status: version, HIP, CUDA, count, names, error."""
    view = view or {}
    return {"version": view.get("torch"), "hip": view.get("hip"), "cuda": view.get("cuda"), "count": view.get("count", 0),
            "devices": [device.get("name") for device in view.get("devices") or []], "error": view.get("error")}


# --------------------------------------------------------------------------------------------- facts side
def _kib(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def gpus_from_facts(facts: dict | None) -> list[dict]:
    """The visible GPUs of a facts dict, sorted by index: ``{index, gfx, name, vram_kb, integrated}`` each."""
    facts = dict(facts or {})
    if isinstance(facts.get("rocm"), dict):
        facts = {**facts.pop("rocm"), **facts}
    listed = facts.get("gpus") or facts.get("agents") or []
    if not listed and _kib(facts.get("vram_kb", facts.get("vram_kib"))):
        listed = [{"index": 0, "vram_kb": _kib(facts.get("vram_kb", facts.get("vram_kib"))), "marketing_name": facts.get("marketing_name"),
                   "name": facts.get("name")}]
    gpus = []
    for position, gpu in enumerate(item for item in listed if str(item.get("type", "GPU")).upper() == "GPU"):
        gpus.append({
            "index": gpu["index"] if isinstance(gpu.get("index"), int) else position,
            "gfx": gpu.get("gfx") or (gpu.get("name") if str(gpu.get("name") or "").startswith("gfx") else None),
            "name": gpu.get("marketing_name") or gpu.get("name") or f"GPU {position}",
            "vram_kb": _kib(gpu.get("vram_kb")),
            "integrated": bool(gpu.get("integrated")),
        })
    return sorted(gpus, key=lambda gpu: gpu["index"])


def trainable(gpus: list[dict]) -> list[dict]:
    """The GPUs of ``gpus_from_facts`` a job trains on: the discrete ones with VRAM, else the integrated ones whose pool
    is at least MIN_INTEGRATED_POOL_KIB (below that it is a bare carve-out, as older kernels report an APU's pool)."""
    discrete = [gpu for gpu in gpus if gpu["vram_kb"] and not gpu["integrated"]]
    return discrete or [gpu for gpu in gpus if gpu["vram_kb"] >= MIN_INTEGRATED_POOL_KIB]


# --------------------------------------------------------------------------------------------- the decision
def _gib(kib) -> str:
    return f"{(kib or 0) / (1 << 20):.2f} GiB"


def describe_facts(gpus: list[dict]) -> str:
    if not gpus:
        return "the GPU facts show no visible GPU"
    if not trainable(gpus):
        return ("the GPU facts show no visible GPU to train on (no discrete card with VRAM; an integrated GPU needs a pool "
                "of at least 1 GiB)")
    cards = "; ".join(f"#{g['index']} {g['gfx'] or '?'} {g['name']} {_gib(g['vram_kb'])}" + (" (integrated)" if g["integrated"] else "") for g in gpus)
    return f"the GPU facts show {len(gpus)} visible GPU(s): {cards}"


def describe_torch(view: dict) -> str:
    if not view.get("torch"):
        return f"torch cannot be imported here ({view.get('error') or 'unknown error'})"
    text = f"torch {view['torch']} (HIP {view.get('hip') or 'none'}, CUDA {view.get('cuda') or 'none'}) sees {view.get('count', 0)} GPU(s)"
    devices = view.get("devices") or []
    if devices:
        text += ": " + "; ".join(f"#{d['index']} {d.get('name')} {_gib(d.get('total_kib'))}" + (f" ({d['arch']})" if d.get("arch") else "") for d in devices)
    if view.get("error"):
        text += f" (error: {view['error']})"
    env = {name: value for name, value in (view.get("env") or {}).items() if value is not None}
    return text + (" with " + ", ".join(f"{name}={value}" for name, value in sorted(env.items())) if env else "")


def vram_mismatches(gpus: list[dict], view: dict) -> list[str]:
    """Pairs (by index order) whose VRAM differs by more than VRAM_TOLERANCE; integrated GPUs are not compared."""
    found = []
    for gpu, device in zip(gpus, sorted(view.get("devices") or [], key=lambda d: d.get("index", 0))):
        facts_kib, torch_kib = gpu["vram_kb"], int(device.get("total_kib") or 0)
        if not gpu["integrated"] and facts_kib and abs(torch_kib - facts_kib) > VRAM_TOLERANCE * facts_kib:
            found.append(f"#{gpu['index']} {gpu['name']} {_gib(facts_kib)} in the facts but torch's #{device.get('index')} "
                         f"{device.get('name')} has {_gib(torch_kib)}")
    return found


CAUSE_IMPORT = "torch cannot be imported by the training venv's python: install it (role radeonlab.llm.pytorch_rocm)"
CAUSE_WHEEL = ("torch is a CPU or CUDA wheel (torch.version.hip is None): reinstall it from the ROCm index "
               "(role radeonlab.llm.pytorch_rocm)")
CAUSE_GROUPS = ("the training user is not in the render and video groups, so /dev/kfd and /dev/dri/renderD* are closed to it "
                "(role radeonlab.llm.gpu_groups; log in again after adding the groups)")
CAUSE_OVERRIDE = ("HSA_OVERRIDE_GFX_VERSION is missing or wrong for this gfx target "
                  "(gpu_environment_facts.env of the role radeonlab.llm.gpu_environment is the unit's environment)")
CAUSE_HIDING = "ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES hide cards that the facts count as visible"
CAUSE_UNHIDDEN = ("ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES are not set in this environment the way they were when the facts were "
                  "taken: torch sees cards that the facts leave out "
                  "(gpu_environment_facts.env of the role radeonlab.llm.gpu_environment is the unit's environment)")
CAUSE_ORDER = ("a different card is visible to torch than the facts say, or the visible cards are numbered in another order "
               "(ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES)")


def likely_causes(gpus: list[dict], view: dict) -> list[str]:
    """Only the causes that fit what was seen, most likely first."""
    count = view.get("count", 0)
    if not view.get("torch"):
        return [CAUSE_IMPORT]
    if view.get("hip") is None:
        return [CAUSE_WHEEL]
    if count == 0:
        return [CAUSE_GROUPS, CAUSE_OVERRIDE, CAUSE_HIDING]
    if count < len(gpus):
        return [CAUSE_HIDING, CAUSE_OVERRIDE]
    if count > len(gpus):
        return [CAUSE_UNHIDDEN]
    return [CAUSE_ORDER]


def mismatch_message(gpus: list[dict], view: dict, requested: str) -> str:
    causes = likely_causes(gpus, view)
    details = vram_mismatches(gpus, view) if view.get("count", 0) == len(gpus) else []
    text = ("the GPU facts and torch disagree, so the job was not started (it would train on the wrong device or fail): "
            f"{describe_facts(gpus)}; {describe_torch(view)}")
    if details:
        text += f"; VRAM differs by more than {VRAM_TOLERANCE:.0%}: " + "; ".join(details)
    text += ". Likely causes: " + " ".join(f"({number}) {cause};" for number, cause in enumerate(causes, 1)).rstrip(";")
    if requested != "gpu":
        text += ". To train on the CPU on purpose, set lora_job_device: cpu"
    return text + "."


def decide(facts_gpus: list, requested: str, view: dict, torch_without_hip: bool) -> Decision:
    """Pure. ``facts_gpus`` as from ``gpus_from_facts``; ``view`` as from ``torch_view``."""
    if requested not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {list(DEVICE_CHOICES)}, got {requested!r}")
    view = view or {}
    gpus = list(facts_gpus or [])
    frozen = tuple({"index": g["index"], "gfx": g["gfx"], "name": g["name"], "vram_gib": round(g["vram_kb"] / (1 << 20), 2)} for g in gpus)

    def make(train_on: str, ok: bool, reason: str, message: str) -> Decision:
        return Decision(requested, train_on, ok, reason, message, frozen)

    if requested == "cpu":
        return make("cpu", True, "lora_job_device: cpu asked for", f"training on the CPU: lora_job_device: cpu asked for ({describe_facts(gpus)})")
    if not trainable(gpus):
        if requested == "gpu":
            return make("gpu", False, "no visible GPU", f"lora_job_device is gpu but {describe_facts(gpus)} ({describe_torch(view)})")
        note = f" (but {describe_torch(view)}: are the facts stale?)" if view.get("count") else ""
        return make("cpu", True, "the GPU facts show no visible GPU", f"training on the CPU: {describe_facts(gpus)}{note}")
    if view.get("count", 0) == len(gpus) and not vram_mismatches(gpus, view):
        return make("gpu", True, "torch sees the GPUs of the facts", f"training on the GPU: {describe_facts(gpus)}; {describe_torch(view)}")
    if view.get("count", 0) == 0 and view.get("hip") is None and torch_without_hip:
        reason = "torch has no HIP here (torch_without_hip)"
        if requested == "gpu":
            return make("gpu", False, reason, f"lora_job_device is gpu but {reason}: {describe_facts(gpus)}; {describe_torch(view)}. "
                        "lora_job_device: auto trains on the CPU instead")
        return make("cpu", True, reason, f"training on the CPU: {reason}; {describe_facts(gpus)}; {describe_torch(view)}")
    return make("gpu", False, "the GPU facts and torch disagree", mismatch_message(gpus, view, requested))


if __name__ == "__main__":
    print(json.dumps(torch_view(), sort_keys=True))

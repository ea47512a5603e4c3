# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora render|plan|run|status|check|api-config``.

GPU facts (``--gpu-facts facts.json``, else the job's ``gpu`` object, else a sysfs probe): a JSON object
with a ``gpus`` list of the *visible* GPUs (rocm_facts style: node, index, name (gfx), marketing_name,
vram_kb, integrated; ``[]`` = no GPU) or a flat ``vram_kb`` (KiB as rocminfo prints it; 0/null = CPU),
optionally ``reserve_gib``, ``ram_kb`` and ``bitsandbytes_ok``. A facts object that says nothing about GPUs
(no ``gpus``/``agents``/``vram_kb`` key) gets its cards from the sysfs probe.

- ``render --job J --out DIR``   DIR/train.yaml (JSON text), DIR/data/dataset_info.json, DIR/plan.json; prints hash and paths
- ``plan --job J``               the sizing decision for the facts' device as JSON (no torch involved); exit 2
                                 with the numbers on stderr when refused
- ``run --job J``                the whole job (see ``runner``); the systemd unit's command
- ``status --job J [--run-dir D] [--wait S] [--unit U]``
                                 the status JSON plus ``verdict`` (succeeded|failed|running|died), then one line
                                 ``<state>: <progress>``; exit 0 whatever the state. ``--run-dir`` (a run directory
                                 ``check`` named): that config's own status, not the last run's. ``--wait``: poll
                                 once a second for up to S seconds until the verdict is not ``running``. ``--unit``:
                                 the systemd unit that runs the job (an active unit is a live job)
- ``api-config --job J --run-dir D``
                                 the ``llamafactory-cli api`` config serving run D's adapter with the job's base model
                                 (JSON; the play writes it for the API service); nothing is probed
- ``check --job J``              read-only: device decision, config hash, plan and whether this exact config
                                 already succeeded (what the Ansible role decides "train or skip" from); exit 2
                                 when refused (``refusal``: ``device`` or ``memory``)

``render``, ``run`` and ``check`` ask torch what it sees (``devices.probe``) in the trainer's environment (this
process's environment plus the job's ``env``) before deciding anything.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import time

from . import devices, export, inference, progress, render, runner, sizing, spec as jobspec, state
from .modelshape import ModelShapeError, shape_for_job


GPU_FACT_KEYS = ("gpus", "agents", "vram_kb", "vram_kib", "rocm")
UNIT_ALIVE = ("active", "activating", "deactivating", "reloading", "refreshing")


def _facts(args, spec: dict) -> dict:
    if args.gpu_facts:
        with open(args.gpu_facts, encoding="utf-8") as handle:
            facts = json.load(handle)
    elif spec.get("gpu") is not None:
        facts = spec["gpu"]
    else:
        return sizing.probe_device()
    if isinstance(facts, dict) and not any(key in facts for key in GPU_FACT_KEYS):
        return {**sizing.probe_device(), **facts}  # only ram_kb/bitsandbytes_ok/reserve_gib given: the cards from sysfs
    return facts


def _prepare(args, spec: dict) -> runner.Prepared:
    return runner.prepare(spec, _facts(args, spec), devices.probe(runner.trainer_env(spec)))


def _print_json(data) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))


def cmd_plan(args, spec: dict) -> int:
    shape = shape_for_job(spec["model"], spec["model_params_b"], spec["model_config"])
    plan = runner.make_plan(spec, shape, sizing.device_from_facts(_facts(args, spec)))
    data = plan.as_dict()
    data["model_shape"] = shape.as_dict()
    _print_json(data)
    if plan.refused:
        print(plan.message, file=sys.stderr)
        return runner.EXIT_REFUSED
    return 0


def cmd_render(args, spec: dict) -> int:
    try:
        prepared = _prepare(args, spec)
    except (runner.Refused, runner.DeviceMismatch) as refused:
        print(str(refused), file=sys.stderr)
        return runner.EXIT_REFUSED
    out = os.path.abspath(args.out)
    changed = runner.write_run_files(prepared, out)
    _print_json({"config_hash": prepared.config_hash, "run_dir": prepared.run_dir, "out": out, "changed": changed, "plan": prepared.plan.message})
    return 0


def cmd_run(args, spec: dict) -> int:
    def out(line: str) -> None:
        try:
            print(line, flush=True)
        except OSError:  # stdout gone (a closed SSH terminal): keep training, the status file has it all
            pass

    return runner.run_job(spec, _facts(args, spec), out)


def unit_active(name: str) -> bool:
    """systemd says the unit runs (or is starting or stopping); a missing systemctl counts as not active."""
    try:
        done = subprocess.run(["systemctl", "is-active", name], capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() in UNIT_ALIVE


def verdict(status: dict | None, root: str, unit: str | None) -> str:
    """succeeded | failed | running | died. A ``failed`` left by an earlier run counts once no runner is alive."""
    current = (status or {}).get("state")
    if current == "succeeded":
        return "succeeded"
    if state.JobLock.held_by_other(root) or (unit is not None and unit_active(unit)):
        return "running"
    return "failed" if current == "failed" else "died"


def _status_dir(args, root: str) -> str:
    if not args.run_dir:
        return root
    where = os.path.abspath(args.run_dir)
    if os.path.dirname(where) != os.path.abspath(root):
        raise jobspec.SpecError(f"--run-dir {args.run_dir} is not a run directory of this job ({root})")
    return where


def cmd_status(args, spec: dict) -> int:
    root = spec["output_dir"]
    where = _status_dir(args, root)
    deadline = time.monotonic() + max(0.0, args.wait or 0.0)
    while True:
        status = state.read_json(os.path.join(where, state.STATUS_FILE))
        found = verdict(status, root, args.unit)
        left = deadline - time.monotonic()
        if found != "running" or left <= 0:
            break
        time.sleep(min(1.0, left))
    if status is None:
        _print_json({"state": None, "verdict": found, "message": f"no status in {where}: never run"})
        print("none: never run")
        return 0
    if found == "died" and status.get("state") != "failed":
        status["stale"] = True
        status["message"] = f"status says {status.get('state')} but no runner holds the job: it was killed; run again to resume"
    output_dir = status.get("output_dir")
    line = progress.progress_line(progress.read_progress(output_dir)) if output_dir else "no progress yet"
    status["progress"] = line
    status["verdict"] = found
    _print_json(status)
    print(f"{status.get('state')}: {line}")
    return 0


def cmd_api_config(args, spec: dict) -> int:
    if not args.run_dir:
        raise jobspec.SpecError("api-config needs --run-dir (a run directory of this job, from check)")
    _print_json(inference.api_config(spec, _status_dir(args, spec["output_dir"])))
    return 0


def cmd_check(args, spec: dict) -> int:
    try:
        prepared = _prepare(args, spec)
    except runner.DeviceMismatch as mismatch:
        message = mismatch.decision.message
        _print_json({"refused": True, "refusal": "device", "done": False, "device": mismatch.device_info, "message": message, "plan": None})
        print(message, file=sys.stderr)
        return runner.EXIT_REFUSED
    except runner.Refused as refused:
        _print_json({"refused": True, "refusal": "memory", "done": False, "device": refused.device_info, "message": refused.plan.message,
                     "plan": refused.plan.as_dict()})
        print(refused.plan.message, file=sys.stderr)
        return runner.EXIT_REFUSED
    if export.pending(prepared.spec, prepared.run_dir, prepared.config_hash, prepared.node_rank):
        refusal = export.refusal(prepared.spec, prepared.run_dir, prepared.shape.params)
        if refusal:  # before anything trains: the merged model would not fit the disk
            _print_json({"refused": True, "refusal": "disk", "done": False, "device": prepared.device_info, "message": refusal,
                         "plan": prepared.plan.as_dict()})
            print(refusal, file=sys.stderr)
            return runner.EXIT_REFUSED
    trained = state.is_done(prepared.run_dir, prepared.config_hash)  # this config trained earlier
    _print_json({
        "refused": False,
        # done: trained, and (rank 0) the sample prompts answered and the export written; a new prompt or export starts the
        # unit, which trains nothing
        "done": trained and not runner.after_training_owed(prepared),
        "trained": trained,
        "config_hash": prepared.config_hash,
        "run_dir": prepared.run_dir,
        "output_dir": prepared.output_dir,
        "message": prepared.plan.message,
        "plan": prepared.plan.as_dict(),
        "device": prepared.device_info,
        "gpu_plan": prepared.gpu_plan.as_dict() if prepared.gpu_plan else None,
        "distributed": node_identity(prepared),
    })
    return 0


def node_identity(prepared: runner.Prepared) -> dict:
    """What the nodes of one job must agree on before any starts (the play compares them), and where each would resume."""
    checkpoint = state.last_checkpoint(prepared.output_dir)
    agree = {"config_hash": prepared.config_hash, "torch": prepared.view.get("torch"), "llamafactory": _version("llamafactory"),
             "model": prepared.spec["model"], "dataset_sha256": prepared.dataset_sha256,
             "done": state.is_done(prepared.run_dir, prepared.config_hash), "resume_from": os.path.basename(checkpoint) if checkpoint else None}
    return {
        "world_size": prepared.world_size, "nproc_per_node": prepared.nproc_per_node, "nnodes": prepared.nnodes, "node_rank": prepared.node_rank,
        "agree": [f"{key}={value}" for key, value in sorted(agree.items())],  # "name=value": two lists show what differs
        "resume_from": agree["resume_from"],
    }


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


COMMANDS = {"plan": cmd_plan, "render": cmd_render, "run": cmd_run, "status": cmd_status, "check": cmd_check, "api-config": cmd_api_config}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m radeonlab_lora", description="LoRA fine-tuning job runner for LLaMA-Factory")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        command = sub.add_parser(name)
        command.add_argument("--job", required=True, help="job spec (JSON)")
        if name in ("status", "api-config"):
            command.add_argument("--run-dir", help="a run directory of this job (from check): that config's own status or adapter")
        if name == "status":
            command.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                                 help="poll once a second for up to SECONDS until the job succeeded, failed or died")
            command.add_argument("--unit", help="the systemd unit running the job: while it is active the job counts as running")
        elif name != "api-config":
            command.add_argument("--gpu-facts", help="GPU facts (JSON); default: the job's 'gpu' object, else a sysfs probe")
        if name == "render":
            command.add_argument("--out", required=True, help="directory for train.yaml, data/dataset_info.json, plan.json")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        spec = jobspec.load(args.job)
        return COMMANDS[args.command](args, spec)
    except (jobspec.SpecError, ModelShapeError, sizing.SizingError, render.RenderError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return runner.EXIT_REFUSED
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return runner.EXIT_REFUSED

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora render|plan|run|status``.

GPU facts (``--gpu-facts facts.json``, else the job's ``gpu`` object, else a sysfs probe): a JSON object
with ``vram_kb`` (KiB as rocminfo prints it; 0/null = CPU) or a ``gpus``/``agents`` list in rocm_facts
style, optionally ``reserve_gib``, ``ram_kb`` and ``bitsandbytes_ok``.

- ``render --job J --out DIR``   DIR/train.yaml, DIR/data/dataset_info.json, DIR/plan.json; prints hash and paths
- ``plan --job J``               the sizing decision as JSON; exit 2 with the numbers on stderr when refused
- ``run --job J``                the whole job (see ``runner``); the systemd unit's command
- ``status --job J [--run-dir D]`` the job's status JSON and a progress line; exit 0 whatever the state. With
                                 ``--run-dir`` (a run directory ``check`` named) that config's own status, not
                                 the status of whichever config ran last
- ``check --job J``              read-only: config hash, plan and whether this exact config already succeeded
                                 (what the Ansible role decides "train or skip" from); exit 2 when refused
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import progress, render, runner, sizing, spec as jobspec, state
from .modelshape import ModelShapeError, shape_for_job


def _facts(args, spec: dict) -> dict:
    if args.gpu_facts:
        with open(args.gpu_facts, encoding="utf-8") as handle:
            return json.load(handle)
    if spec.get("gpu") is not None:
        return spec["gpu"]
    return sizing.probe_device()


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
        prepared = runner.prepare(spec, _facts(args, spec))
    except runner.Refused as refused:
        print(refused.plan.message, file=sys.stderr)
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


def cmd_status(args, spec: dict) -> int:
    root = spec["output_dir"]
    where = root
    if args.run_dir:
        where = os.path.abspath(args.run_dir)
        if os.path.dirname(where) != os.path.abspath(root):
            raise jobspec.SpecError(f"--run-dir {args.run_dir} is not a run directory of this job ({root})")
    status = state.read_json(os.path.join(where, state.STATUS_FILE))
    if status is None:
        _print_json({"state": None, "message": f"no status in {where}: never run"})
        return 0
    if status.get("state") == "running" and not state.JobLock.held_by_other(root):
        status["stale"] = True
        status["message"] = "status says running but no runner holds the job: it was killed; run again to resume"
    output_dir = status.get("output_dir")
    line = progress.progress_line(progress.read_progress(output_dir)) if output_dir else "no progress yet"
    status["progress"] = line
    _print_json(status)
    print(f"{status.get('state')}: {line}")
    return 0


def cmd_check(args, spec: dict) -> int:
    try:
        prepared = runner.prepare(spec, _facts(args, spec))
    except runner.Refused as refused:
        _print_json({"refused": True, "done": False, "message": refused.plan.message, "plan": refused.plan.as_dict()})
        print(refused.plan.message, file=sys.stderr)
        return runner.EXIT_REFUSED
    _print_json({
        "refused": False,
        "done": state.is_done(prepared.run_dir, prepared.config_hash),
        "config_hash": prepared.config_hash,
        "run_dir": prepared.run_dir,
        "output_dir": prepared.output_dir,
        "message": prepared.plan.message,
        "plan": prepared.plan.as_dict(),
    })
    return 0


COMMANDS = {"plan": cmd_plan, "render": cmd_render, "run": cmd_run, "status": cmd_status, "check": cmd_check}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m radeonlab_lora", description="LoRA fine-tuning job runner for LLaMA-Factory")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        command = sub.add_parser(name)
        command.add_argument("--job", required=True, help="job spec (JSON)")
        if name == "status":
            command.add_argument("--run-dir", help="a run directory of this job (from check): that config's own status")
        else:
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

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``run``: render, plan, train with ``llamafactory-cli train``, retry per the failure policy, resume, record.

Meant to be the ``ExecStart`` of a systemd unit (so an SSH drop does not end it), and safe to kill:

- SIGTERM/SIGINT: the trainer's process group gets SIGTERM (SIGKILL after a grace period), the attempt is
  recorded as interrupted, the status says ``failed`` with "re-run resumes from checkpoint-N", exit 128+sig.
- SIGHUP is ignored (nohup semantics, for a run started by hand in an SSH session).
- SIGKILL of the runner: the status still says ``running``; the trainer (own session) keeps the job lock
  until it ends, so no second runner can start on the same output; the next run, once the lock is free,
  marks the attempt interrupted and resumes from the last complete checkpoint.
- A trainer that finished but whose runner died before recording it is recognised (final adapter +
  trainer_state.json) and recorded as succeeded without training again.

Before anything is planned the device is decided (``devices.decide``: the GPU facts against what torch sees
in the trainer's environment); the plan is made for the device training will use. A disagreement refuses
the job (``DeviceMismatch``) before the first step. Each attempt runs as
``python -m radeonlab_lora.launch --peak-file <run_dir>/peak-attempt-N.json <cli> train attempt-N.yaml``,
which records the trainer's peak memory. The configs are JSON text (``render.config_text``) in files named with
``vocabulary.CONFIG_SUFFIX``, the suffix LLaMA-Factory reads them by.

Exit codes: 0 succeeded or already done, 1 training failed, 2 refused (memory or device) or invalid job,
75 another runner holds the job, 128+N interrupted by signal N.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from . import devices, export, failures, measurements, progress, render, samples, sizing, stages, state, upstream
from .modelshape import ModelShape, shape_for_job
from .spec import SpecError
from .trainer import Signals, find_cli, run_trainer
from .vocabulary import CONFIG_SUFFIX

TRAIN_CONFIG = f"train{CONFIG_SUFFIX}"  # the canonical config; attempt-N<suffix> is what attempt N ran

EXIT_OK, EXIT_FAILED, EXIT_REFUSED, EXIT_LOCKED = 0, 1, 2, 75


@dataclass
class Prepared:
    spec: dict
    shape: ModelShape
    device: sizing.Device
    plan: sizing.Plan
    dataset_entry: dict
    dataset_sha256s: dict  # the local data set files' sha256 by data set name
    config_hash: str
    run_dir: str
    decision: devices.Decision
    view: dict  # what torch saw (devices.torch_view)
    gpu_plan: sizing.Plan | None = None  # what the facts' GPU would get, when training goes to the CPU instead
    nproc_per_node: int = 1  # data-parallel processes on this host: one per GPU trained on, one on the CPU

    @property
    def nnodes(self) -> int:
        return (self.spec.get("distributed") or {}).get("nnodes", 1)

    @property
    def node_rank(self) -> int:
        return (self.spec.get("distributed") or {}).get("node_rank", 0)

    @property
    def world_size(self) -> int:
        return self.nproc_per_node * self.nnodes

    @property
    def device_info(self) -> dict:
        return device_record(self.decision, self.view)

    @property
    def dataset_sha256(self) -> str | None:
        """The one local data set file's sha256 (as jobs of one data set always had), else name:sha256 of each."""
        if len(self.spec["datasets"]) == 1:
            return next(iter(self.dataset_sha256s.values()), None)
        return ",".join(f"{name}:{sha}" for name, sha in sorted(self.dataset_sha256s.items())) or None

    @property
    def root(self) -> str:
        return self.spec["output_dir"]

    @property
    def output_dir(self) -> str:
        return state.output_dir_for(self.run_dir)

    def train_config(self, run_dir: str | None = None) -> dict:
        run_dir = run_dir or self.run_dir
        return render.training_config(self.spec, self.plan, output_dir=state.output_dir_for(run_dir), dataset_dir=os.path.join(run_dir, "data"))


class Refused(Exception):
    """The plan does not fit the device training would use."""

    def __init__(self, plan: sizing.Plan, device_info: dict | None = None):
        super().__init__(plan.message)
        self.plan = plan
        self.device_info = device_info


class DeviceMismatch(Exception):
    """The GPU facts and torch disagree (or the job asks for a GPU there is none of): not started."""

    def __init__(self, decision: devices.Decision, view: dict, intended_hash: str | None = None):
        super().__init__(decision.message)
        self.decision = decision
        self.view = view
        self.intended_hash = intended_hash  # the config hash of the facts' GPU plan (whose run dir a check may have named)

    @property
    def device_info(self) -> dict:
        return device_record(self.decision, self.view)


def device_record(decision: devices.Decision, view: dict | None) -> dict:
    """What the status and ``check`` say about the device: the decision and a summary of torch's view."""
    return {**decision.as_dict(), "torch": devices.view_summary(view or {})}


def trainer_env(spec: dict) -> dict:
    """The trainer's environment (the torch probe runs in the same one)."""
    return {**os.environ, **spec["env"], "PYTHONUNBUFFERED": "1"}


LOOPBACK_PREFIXES = ("127.", "localhost", "::1")


def launch_env(prepared: "Prepared", base: dict, route=None) -> dict:
    """What ``llamafactory-cli`` needs to start torchrun (its variables), added to ``base``.

    The venv's bin/ goes first on PATH: LLaMA-Factory starts ``torchrun`` by name, and a systemd unit's PATH does
    not hold the venv. Several nodes: the rendezvous variables, and the interface that reaches the master for gloo
    and RCCL/NCCL (unless ``base`` names one), because a host name that resolves to a loopback or a second network
    would make the peers dial an address they cannot reach. On the CPU, accelerate's device is ``cpu:<local rank>``,
    which transformers passes to ``torch.load`` when resuming the optimizer and torch refuses; naming the device
    ``cpu`` (accelerate's ``ACCELERATE_TORCH_DEVICE``) lets a cut job resume.
    """
    env = {**base, "PATH": os.pathsep.join([os.path.dirname(sys.executable), base.get("PATH") or os.defpath])}
    if prepared.world_size <= 1:
        return env
    env.update(FORCE_TORCHRUN="1", NPROC_PER_NODE=str(prepared.nproc_per_node))
    if prepared.decision.train_on == "cpu":
        env["ACCELERATE_TORCH_DEVICE"] = "cpu"
    dist = prepared.spec.get("distributed")
    if dist:
        env.update(NNODES=str(dist["nnodes"]), NODE_RANK=str(dist["node_rank"]), MASTER_ADDR=dist["master_addr"],
                   MASTER_PORT=str(dist["master_port"]))
        interface = (route or route_interface)(dist["master_addr"])
        for name in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
            if interface and not base.get(name):
                env[name] = interface
    return env


def route_interface(address: str) -> str | None:
    """The network interface this host reaches ``address`` through (``ip route get``), or None."""
    if address.startswith(LOOPBACK_PREFIXES):
        return "lo"
    try:
        done = subprocess.run(["ip", "-o", "route", "get", address], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = done.stdout.split()
    return words[words.index("dev") + 1] if "dev" in words[:-1] else None


def cpu_device(facts_device: sizing.Device) -> sizing.Device:
    return sizing.Device(vram_kib=None, ram_kib=facts_device.ram_kib, name="CPU")


def data_parallel_world(spec: dict, nproc_per_node: int) -> int:
    return max(1, nproc_per_node) * (spec.get("distributed") or {}).get("nnodes", 1)


def make_plan(spec: dict, shape: ModelShape, device: sizing.Device, attention: str | None = None, world: int = 1) -> sizing.Plan:
    return sizing.plan_job(
        shape,
        cutoff_len=spec["cutoff_len"],
        attention=attention or spec["attention"],
        device=device,
        effective_batch=spec["effective_batch_size"],
        lora_rank=spec["lora"]["rank"],
        allow_qlora=spec["allow_qlora"],
        sdpa_kernel=spec["sdpa_kernel"],
        world_size=world,
        fused_kernels=spec["fused_kernels"],
    )


def prepare(spec: dict, facts: dict | None, view: dict | None = None) -> Prepared:
    """Everything that decides the job, without writing anything (reads the dataset and model files).

    ``view``: what torch sees (``devices.torch_view``); None probes it in the trainer's environment.
    Raises DeviceMismatch or Refused.
    """
    _check_local_inputs(spec)
    rejected = upstream.problems(spec)
    if rejected:  # LLaMA-Factory would refuse these at start-up: say it before anything is written or stopped
        raise SpecError("; ".join(rejected))
    shape = shape_for_job(spec["model"], spec["model_params_b"], spec["model_config"])
    facts_device = sizing.device_from_facts(facts)
    if view is None:
        view = devices.probe(trainer_env(spec))
    decision = devices.decide(devices.gpus_from_facts(facts), spec["device"], view, spec["torch_without_hip"])
    identity = _hash_inputs(spec, view)
    gpu_count = len(decision.facts_gpus)
    if not decision.ok:
        raise DeviceMismatch(decision, view, _intended_hash(spec, shape, facts_device, identity, gpu_count))
    device = facts_device if decision.train_on == "gpu" else cpu_device(facts_device)
    nproc = gpu_count if decision.train_on == "gpu" else 1
    plan = make_plan(spec, shape, device, world=data_parallel_world(spec, nproc))
    if plan.refused:
        raise Refused(plan, device_record(decision, view))
    if (spec.get("distributed") or {}).get("node_rank", 0) == 0:  # the stages after training run on rank 0
        sized = stages.plan_stages(plan, shape, device, spec)
        plan.stages = [stage.as_dict() for stage in sized]
        refusal = stages.refusal(sized)
        if refusal:
            plan.decision, plan.message = "refuse", refusal
            raise Refused(plan, device_record(decision, view))
    gpu_plan = make_plan(spec, shape, facts_device, world=data_parallel_world(spec, gpu_count)) \
        if decision.train_on == "cpu" and facts_device.is_gpu else None
    config_hash = _config_hash(spec, plan, identity)
    return Prepared(spec, shape, device, plan, identity[0], identity[1], config_hash, state.run_dir_for(spec["output_dir"], config_hash),
                    decision, view, gpu_plan, nproc)


def _hash_inputs(spec: dict, view: dict | None = None) -> tuple:
    """(dataset_info entries, local data set files' sha256 by name, model fingerprint, the torch/HIP stack): what the hash
    covers besides the training config. The stack is what torch sees (``view``), so a ROCm upgrade that moved torch to
    another index trains the job again."""
    files = {dataset["name"]: render.file_sha256(dataset["file"]) for dataset in spec["datasets"] if dataset.get("file")}
    return render.dataset_info_entry(spec), files, render.model_fingerprint(spec["model"]), render.stack_identity(view)


def _config_hash(spec: dict, plan: sizing.Plan, identity: tuple) -> str:
    probe = render.training_config(spec, plan, output_dir="", dataset_dir="")
    return render.config_hash(probe, *identity)


def _intended_hash(spec: dict, shape: ModelShape, facts_device: sizing.Device, identity: tuple, gpu_count: int) -> str | None:
    """The config hash of the plan for the facts' GPU (its run dir is where a ``check`` that saw no mismatch pointed)."""
    if not facts_device.is_gpu:
        return None
    plan = make_plan(spec, shape, facts_device, world=data_parallel_world(spec, gpu_count))
    return None if plan.refused else _config_hash(spec, plan, identity)


def _check_local_inputs(spec: dict) -> None:
    """Fail before planning when a local input is missing (LLaMA-Factory would fail later, less clearly)."""
    for dataset in spec["datasets"]:
        if dataset.get("file") and not os.path.isfile(dataset["file"]):
            raise SpecError(f"dataset file {dataset['file']} does not exist")
    model = spec["model"]
    if model.startswith(("/", "./", "../", "~")) and not os.path.isdir(os.path.expanduser(model)):
        raise SpecError(f"model directory {model} does not exist (a hub model is named like 'Qwen/Qwen2.5-0.5B-Instruct')")


def write_run_files(prepared: Prepared, run_dir: str | None = None) -> dict:
    """The training config (TRAIN_CONFIG), data/dataset_info.json and plan.json into ``run_dir`` (default: the job's run
    directory). JSON has no comments: the config hash is status.json's (and the run dir's name), the plan's message plan.json's."""
    run_dir = run_dir or prepared.run_dir
    files = {
        TRAIN_CONFIG: render.config_text(prepared.train_config(run_dir)),
        os.path.join("data", "dataset_info.json"): render.canonical_json(prepared.dataset_entry) + "\n",
        "plan.json": render.canonical_json(prepared.plan.as_dict()) + "\n",
    }
    changed = {}
    for name, text in files.items():
        changed[name] = state.write_text_if_changed(os.path.join(run_dir, name), text)
    return changed


def base_settings(plan: sizing.Plan, spec: dict) -> dict:
    return {
        "flash_attn": spec["attention"],
        "packing": bool(spec["packing"]),
        "neat_packing": False,
        "per_device_train_batch_size": plan.per_device_train_batch_size,
        "gradient_accumulation_steps": plan.gradient_accumulation_steps,
        "gradient_checkpointing": bool(plan.gradient_checkpointing),
    }


def attempt_config(train_cfg: dict, settings: dict, resume: str | None) -> dict:
    cfg = dict(train_cfg)
    cfg.update({
        "flash_attn": settings["flash_attn"],
        "packing": settings["packing"],
        "neat_packing": settings["neat_packing"],
        "per_device_train_batch_size": settings["per_device_train_batch_size"],
        "gradient_accumulation_steps": settings["gradient_accumulation_steps"],
        "disable_gradient_checkpointing": not settings["gradient_checkpointing"],
        "resume_from_checkpoint": resume,
    })
    return cfg


def refit_for_attention(prepared: Prepared, settings: dict) -> tuple[dict, str | None]:
    """After an attention fallback, make sure the settings still fit (eager needs more memory than sdpa)."""
    plan = make_plan(prepared.spec, prepared.shape, prepared.device, settings["flash_attn"], prepared.world_size)
    if plan.refused:
        return settings, plan.message
    adjusted = dict(settings)
    if plan.gradient_checkpointing and not settings["gradient_checkpointing"]:
        adjusted["gradient_checkpointing"] = True
    if plan.per_device_train_batch_size < settings["per_device_train_batch_size"]:
        adjusted["per_device_train_batch_size"] = plan.per_device_train_batch_size
        adjusted["gradient_accumulation_steps"] = plan.gradient_accumulation_steps
    return adjusted, None


SAMPLES_TIMEOUT_S = 3600


def after_training_owed(prepared: Prepared) -> bool:
    return samples.pending(prepared.spec, prepared.run_dir, prepared.node_rank) or export.pending(
        prepared.spec, prepared.run_dir, prepared.config_hash, prepared.node_rank)


def answer_samples(prepared: Prepared, out=print) -> dict | None:
    """Rank 0 answers the sample prompts when its answers are missing or stale; returns what the status records.

    None: nothing to record (no prompts, another rank). A failure is recorded, not raised: the adapter is trained.
    """
    spec, run_dir = prepared.spec, prepared.run_dir
    if not spec["sample_prompts"] or prepared.node_rank != 0:
        return None
    answered = {"state": "answered", "count": len(spec["sample_prompts"]), "file": samples.SAMPLES_FILE}
    if not samples.pending(spec, run_dir, prepared.node_rank):
        return {**answered, "peak_memory": (state.read_json(os.path.join(run_dir, samples.SAMPLES_FILE)) or {}).get("peak_memory")}
    request_path, log_path = os.path.join(run_dir, samples.REQUEST_FILE), os.path.join(run_dir, "samples.log")
    state.write_json_atomic(request_path, samples.request(spec, run_dir))
    out(f"answering {len(spec['sample_prompts'])} sample prompt(s) with the base model, then with the adapter")
    argv = [sys.executable, "-m", "radeonlab_lora.samples", request_path, os.path.join(run_dir, samples.SAMPLES_FILE)]
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            returncode = subprocess.run(argv, env=devices.child_env(trainer_env(spec)), stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, timeout=SAMPLES_TIMEOUT_S, check=False).returncode
        except subprocess.TimeoutExpired:
            returncode = None
    if returncode == 0 and not samples.pending(spec, run_dir, prepared.node_rank):
        return {**answered, "peak_memory": (state.read_json(os.path.join(run_dir, samples.SAMPLES_FILE)) or {}).get("peak_memory")}
    with open(log_path, encoding="utf-8", errors="replace") as log:
        tail = log.read()[-2000:]
    why = f"timed out after {SAMPLES_TIMEOUT_S} s" if returncode is None else f"exited {returncode}"
    out(f"sample answers failed ({why}); the adapter is trained. Log: {log_path}\n{tail}")
    return {"state": "failed", "message": f"generating the sample answers {why} (samples.log)", "file": None}


EXPORT_TIMEOUT_S = 4 * 3600


def export_merged(prepared: Prepared, out=print) -> dict | None:
    """Rank 0 writes the merged model (``export: merged``) when it is missing or stale; returns what the status records."""
    spec, run_dir = prepared.spec, prepared.run_dir
    if not export.wanted(spec, prepared.node_rank):
        return None
    where = export.export_dir(run_dir)
    if not export.pending(spec, run_dir, prepared.config_hash, prepared.node_rank):
        done = state.read_json(os.path.join(where, export.MARKER)) or {}
        return {"state": "merged", "dir": where, "bytes": done.get("bytes"), "files": done.get("files"), "peak_memory": done.get("peak_memory")}
    refusal = export.refusal(spec, run_dir, prepared.shape.params)
    if refusal:
        out(refusal)
        return {"state": "failed", "message": refusal, "dir": None}
    env = launch_env(prepared, devices.child_env(trainer_env(spec)))
    cli = find_cli(spec["llamafactory_cli"], env)
    if cli is None:
        return {"state": "failed", "message": f"{spec['llamafactory_cli']} not found for the export", "dir": None}
    if os.path.isdir(where):
        shutil.rmtree(where)  # a stale or half-written export: its marker is written last
    config_path, log_path = os.path.join(run_dir, export.CONFIG_FILE), os.path.join(run_dir, "export.log")
    state.write_text_if_changed(config_path, render.config_text(export.config(spec, run_dir)))
    out(f"merging the adapter into the base model: {where}")
    peak_file = os.path.join(run_dir, "peak-export.json")
    argv = [sys.executable, "-m", "radeonlab_lora.launch", "--peak-file", peak_file, cli, "export", config_path]
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            returncode = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                        timeout=EXPORT_TIMEOUT_S, check=False).returncode
        except subprocess.TimeoutExpired:
            returncode = None
    if returncode == 0 and os.path.isdir(where) and any(name.endswith(".safetensors") for name in os.listdir(where)):
        done = export.mark_done(spec, run_dir, prepared.config_hash, measurements.attempt_peak(peak_file, where="cpu"))
        return {"state": "merged", "dir": where, "bytes": done["bytes"], "files": done["files"], "peak_memory": done["peak_memory"]}
    why = f"timed out after {EXPORT_TIMEOUT_S} s" if returncode is None else f"exited {returncode}"
    out(f"the export {why}; the adapter is trained. Log: {log_path}")
    return {"state": "failed", "message": f"llamafactory-cli export {why} (export.log)", "dir": None}


# ---------------------------------------------------------------------------------------------
class Job:
    """One ``run`` invocation: holds the status dict and writes it to the run dir and the job root."""

    def __init__(self, prepared: Prepared, out=print):
        self.p = prepared
        self.out = out
        self.status_path = os.path.join(prepared.run_dir, state.STATUS_FILE)
        self.root_status_path = os.path.join(prepared.root, state.STATUS_FILE)
        self.status = self._load_status()

    def _load_status(self) -> dict:
        status = state.read_json(self.status_path)
        if not status or status.get("config_hash") != self.p.config_hash:
            status = state.new_status(self.p.config_hash, self.p.run_dir)
        status["plan"] = self.p.plan.as_dict()
        status["device"] = self.p.device_info
        status["gpu_plan"] = self.p.gpu_plan.as_dict() if self.p.gpu_plan else None
        status["job"] = self.p.spec["name"]
        status["model"] = self.p.spec["model"]
        status["output_dir"] = self.p.output_dir
        status["distributed"] = {"world_size": self.p.world_size, "nproc_per_node": self.p.nproc_per_node, "nnodes": self.p.nnodes,
                                 "node_rank": self.p.node_rank}
        return status

    def save(self) -> None:
        state.write_json_atomic(self.status_path, self.status)
        state.write_json_atomic(self.root_status_path, self.status)

    def tick(self) -> None:
        summary = progress.read_progress(self.p.output_dir)
        line = progress.progress_line(summary)
        if line != self.status.get("progress"):
            self.status.update(progress=line, global_step=summary["step"], max_steps=summary["total_steps"], final_loss=summary["loss"])
            if self.status.get("first_loss") is None:
                self.status["first_loss"] = summary["first_loss"]
            self.save()
            self.out(f"progress: {line}")

    def finish(self, state_name: str, message: str) -> None:
        self.status.update(state=state_name, message=message, finished_at=state.now_iso(), pid=None)
        if state_name == "succeeded":
            metrics = state.final_metrics(self.p.output_dir)
            summary = progress.read_progress(self.p.output_dir)
            self.status.update(
                global_step=metrics["global_step"] if metrics["global_step"] is not None else summary["step"],
                max_steps=metrics["max_steps"] if metrics["max_steps"] is not None else summary["total_steps"],
                final_loss=metrics["final_loss"] if metrics["final_loss"] is not None else summary["loss"],
                first_loss=metrics["first_loss"] if metrics["first_loss"] is not None else summary["first_loss"],
                first_eval_loss=metrics["first_eval_loss"], final_eval_loss=metrics["final_eval_loss"],
                progress=progress.progress_line(summary),
                adapter_dir=self.p.output_dir,
            )
            attempts = self.status.get("attempts") or []
            resumed = bool(attempts and attempts[-1].get("resumed_from"))
            rate, basis = measurements.tokens_per_second(self.p.output_dir, self.p.spec["cutoff_len"], resumed)
            self.status.update(tokens_per_second=rate, tokens_per_second_basis=basis)
        self.save()
        self.out(f"{state_name}: {message}")

    def after_training(self) -> None:
        """Sample answers, then the merged model, before the job is recorded as succeeded: the play follows it until
        then, and fetches their files after."""
        p = self.p
        for key, owed, step, doing in (
                ("samples", samples.pending(p.spec, p.run_dir, p.node_rank), answer_samples, "answering the sample prompts"),
                ("export", export.pending(p.spec, p.run_dir, p.config_hash, p.node_rank), export_merged, "merging the adapter into the model")):
            if owed:
                self.status.update(state="running", pid=os.getpid(), message=f"trained; {doing}")
                self.save()
            record = step(p, self.out)
            if record is not None:
                self.status[key] = record

    def recover_stale(self) -> dict | None:
        """A ``running`` status with the lock free: the runner died. Returns the settings to continue with."""
        if self.status.get("state") != "running":
            return None
        attempts = self.status.get("attempts") or []
        if attempts and attempts[-1].get("outcome") is None:
            attempts[-1].update(outcome="interrupted", failure=None, evidence="runner died (killed or host rebooted)", finished_at=state.now_iso())
        self.status["message"] = "previous runner died; resuming"
        return dict(attempts[-1]["settings"]) if attempts else None


def run_job(spec: dict, facts: dict | None, out=print, view: dict | None = None) -> int:
    """The ``run`` command. ``view`` (what torch sees) defaults to a probe in the trainer's environment."""
    if view is None:
        view = devices.probe(trainer_env(spec))
    try:
        prepared = prepare(spec, facts, view)
    except Refused as refused:
        status = state.new_status(None, None, state="failed", message=refused.plan.message, plan=refused.plan.as_dict(),
                                  device=refused.device_info, job=spec["name"], model=spec["model"], finished_at=state.now_iso())
        state.write_json_atomic(os.path.join(spec["output_dir"], state.STATUS_FILE), status)
        out(refused.plan.message)
        return EXIT_REFUSED
    except DeviceMismatch as mismatch:
        return _record_device_refusal(spec, mismatch, out)

    lock = state.JobLock(prepared.root)
    if not lock.acquire():
        out(f"another runner (or its trainer) is working on {prepared.root}; not starting a second one")
        return EXIT_LOCKED
    signals = Signals()
    signals.install()
    try:
        return _run_locked(prepared, lock, signals, out)
    finally:
        signals.restore()
        lock.release()


def _record_device_refusal(spec: dict, mismatch: DeviceMismatch, out) -> int:
    """A failed status saying why (no attempt, no training), in the job root and in the run dir ``check`` named.

    Under the job lock (never over a live run's status); a run dir that already succeeded is left as it is.
    """
    root = spec["output_dir"]
    lock = state.JobLock(root)
    if not lock.acquire():
        out(f"another runner (or its trainer) is working on {root}; not starting a second one")
        return EXIT_LOCKED
    try:
        fields = {"state": "failed", "message": mismatch.decision.message, "device": mismatch.device_info,
                  "finished_at": state.now_iso(), "pid": None}
        config_hash = mismatch.intended_hash
        run_dir = state.run_dir_for(root, config_hash) if config_hash else None
        if run_dir and not _succeeded(run_dir):
            status = state.read_json(os.path.join(run_dir, state.STATUS_FILE))
            if not status or status.get("config_hash") != config_hash:
                status = state.new_status(config_hash, run_dir, job=spec["name"], model=spec["model"])
            status.update(fields)
            state.write_json_atomic(os.path.join(run_dir, state.STATUS_FILE), status)
        else:
            status = state.new_status(None, None, job=spec["name"], model=spec["model"], **fields)
        state.write_json_atomic(os.path.join(root, state.STATUS_FILE), status)
    finally:
        lock.release()
    out(mismatch.decision.message)
    return EXIT_REFUSED


def _succeeded(run_dir: str) -> bool:
    return (state.read_json(os.path.join(run_dir, state.STATUS_FILE)) or {}).get("state") == "succeeded"


def _run_locked(prepared: Prepared, lock: state.JobLock, signals: Signals, out) -> int:
    if state.is_done(prepared.run_dir, prepared.config_hash) and after_training_owed(prepared):
        job = Job(prepared, out)  # new prompts, or an export asked for later: done without training again
        job.after_training()
        job.finish("succeeded", f"after-training steps done; trained earlier, adapter in {prepared.output_dir}")
        return EXIT_OK
    if state.is_done(prepared.run_dir, prepared.config_hash):
        status = state.read_json(os.path.join(prepared.run_dir, state.STATUS_FILE))
        state.write_json_atomic(os.path.join(prepared.root, state.STATUS_FILE), status)
        out(f"already done: config {prepared.config_hash[:12]} succeeded, adapter in {prepared.output_dir}")
        return EXIT_OK

    job = Job(prepared, out)
    continued = job.recover_stale()
    if state.training_completed(prepared.output_dir, prepared.node_rank):
        job.after_training()
        job.finish("succeeded", "training had completed before the runner could record it")
        return EXIT_OK

    write_run_files(prepared)
    env = launch_env(prepared, devices.child_env(trainer_env(prepared.spec)))
    out(prepared.decision.message)
    cli = find_cli(prepared.spec["llamafactory_cli"], env)
    if cli is None:
        job.finish("failed", f"{prepared.spec['llamafactory_cli']} not found (PATH or beside {sys.executable})")
        return EXIT_FAILED
    try:
        env.update(render.tracker_env(prepared.spec, prepared.output_dir, env))
    except render.RenderError as exc:
        job.finish("failed", str(exc))
        return EXIT_FAILED

    previous = job.status.get("attempts") or []
    if continued:
        settings, reason = continued, "continuing after an interruption with the last attempt's settings"
    elif previous and previous[-1].get("outcome") == "interrupted":
        settings, reason = dict(previous[-1]["settings"]), "continuing after an interruption with the last attempt's settings"
    else:
        settings, reason = base_settings(prepared.plan, prepared.spec), f"planned: {prepared.plan.message}"
    session: list[dict] = []
    log_path = os.path.join(prepared.run_dir, "train.log")
    train_cfg = prepared.train_config()

    while True:
        resume = state.last_checkpoint(prepared.output_dir)
        if resume is None:
            state.clear_unresumable_output(prepared.output_dir)
        number = job.status["attempt"] + 1
        attempt_path = os.path.join(prepared.run_dir, f"attempt-{number}{CONFIG_SUFFIX}")
        state.write_text_if_changed(attempt_path, render.config_text(attempt_config(train_cfg, settings, resume)))
        record = {"number": number, "settings": dict(settings), "reason": reason, "resumed_from": resume and os.path.basename(resume),
                  "started_at": state.now_iso(), "finished_at": None, "duration_s": None, "returncode": None,
                  "outcome": None, "failure": None, "evidence": None, "peak_memory": None}
        job.status["attempts"].append(record)
        job.status.update(state="running", attempt=number, attention=settings["flash_attn"], pid=os.getpid(), finished_at=None,
                          message=f"attempt {number} running" + (f", resumed from {record['resumed_from']}" if resume else ""))
        job.status["started_at"] = job.status.get("started_at") or record["started_at"]
        job.save()
        out(f"attempt {number}: {reason}" + (f" (resuming from {resume})" if resume else ""))

        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"\n===== radeonlab_lora attempt {number} {record['started_at']} flash_attn={settings['flash_attn']} "
                      f"batch={settings['per_device_train_batch_size']}x{settings['gradient_accumulation_steps']} "
                      f"ckpt={settings['gradient_checkpointing']} resume={resume} env+={sorted(prepared.spec['env'])} =====\n")
        peak_file = os.path.join(prepared.run_dir, f"peak-attempt-{number}.json")
        if os.path.exists(peak_file):
            os.unlink(peak_file)  # left by an attempt of a status that was lost: not this attempt's
        argv = [sys.executable, "-m", "radeonlab_lora.launch", "--peak-file", peak_file, cli, "train", attempt_path]
        started = time.monotonic()
        returncode, tail = run_trainer(argv, env, log_path, lock.fd, signals, job.tick, prepared.spec["progress_interval_s"])
        elapsed = round(time.monotonic() - started, 2)
        record.update(finished_at=state.now_iso(), duration_s=elapsed, returncode=returncode, peak_memory=measurements.attempt_peak(peak_file))
        job.status["peak_memory"] = measurements.run_peak(job.status["attempts"])
        job.status["duration_s"] = round(float(job.status.get("duration_s") or 0) + elapsed, 2)
        job.tick()

        if signals.received is not None:
            record.update(outcome="interrupted", evidence=f"runner got signal {signals.received}")
            checkpoint = state.last_checkpoint(prepared.output_dir)
            job.finish("failed", f"interrupted by signal {signals.received}; re-run resumes from "
                       + (os.path.basename(checkpoint) if checkpoint else "the start (no checkpoint yet)"))
            return 128 + signals.received

        if returncode == 0 and state.training_completed(prepared.output_dir, prepared.node_rank):
            record["outcome"] = "succeeded"
            job.after_training()
            job.finish("succeeded", f"trained in {len(session) + 1} attempt(s) this run; adapter in {prepared.output_dir}")
            return EXIT_OK
        if returncode == 0:
            tail += "\nllamafactory-cli exited 0 without writing the adapter files\n"

        session.append(record)
        decision = failures.next_attempt(session, tail, returncode)
        record.update(outcome="failed", failure=decision.classification.kind, evidence=decision.classification.evidence)
        if decision.retry and prepared.nnodes > 1:  # new settings on this node alone would split the job
            decision = failures.Decision("stop", f"{decision.classification.kind} on node {prepared.node_rank}: not retried, because a retry here "
                                         f"would change this node's settings alone ({decision.classification.evidence}); re-run the play "
                                         "to start every node again from its last checkpoint", decision.classification)
        if not decision.retry:
            job.finish("failed", decision.reason)
            return EXIT_FAILED
        settings, reason = decision.settings, decision.reason
        if settings["flash_attn"] != record["settings"]["flash_attn"]:
            settings, refusal = refit_for_attention(prepared, settings)
            if refusal:
                job.finish("failed", f"{decision.reason}; but {refusal}")
                return EXIT_FAILED
        job.status["retry_reasons"].append(reason)
        job.save()

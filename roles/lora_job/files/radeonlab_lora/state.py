# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""On-disk state of a job: layout, status file, checkpoints, "already done", the job lock.

Layout under the job's ``output_dir`` (the *job root*)::

    <root>/status.json             copy of the status of the run the job last worked on (what `status` and the role read)
    <root>/.lock                   flock'ed while a runner - or a trainer it started - is alive
    <root>/<hash12>/               one *run directory* per config hash (first 12 hex digits)
        status.json                this config's own status (authoritative for "already done")
        train.yaml                 the canonical rendered config (JSON text); attempt-<n>.yaml what attempt n ran
        data/dataset_info.json
        train.log                  llamafactory-cli output of every attempt, with headers
        output/                    LLaMA-Factory's output_dir: checkpoint-<N>/, adapter, trainer_state.json, plots

A changed config therefore trains in a fresh run directory and never resumes from, or overwrites,
another config's checkpoints; the old run directories stay (adapters are small; delete them at will).
Switching back to an earlier config that had succeeded finds its run directory done and skips.

Statuses are written atomically (temp file, fsync, rename): a kill at any moment leaves the old or the
new status, never a torn one. A status that says ``running`` while the lock is free belongs to a
runner that was killed; the next run marks that attempt interrupted and resumes.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
import time
from datetime import datetime, timezone

from . import progress

STATUS_FILE = "status.json"
LOCK_FILE = ".lock"
OUTPUT_SUBDIR = "output"
ADAPTER_FILES = ("adapter_model.safetensors", "adapter_config.json")
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def run_dir_for(root: str, config_hash: str) -> str:
    return os.path.join(root, config_hash[:12])


def output_dir_for(run_dir: str) -> str:
    return os.path.join(run_dir, OUTPUT_SUBDIR)


def write_json_atomic(path: str, data: dict) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_if_changed(path: str, text: str) -> bool:
    """Write only when the content differs (keeps mtimes, and so the role's change reporting, honest)."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
    return True


def read_json(path: str) -> dict | None:
    """The JSON object at ``path``; None when missing or unreadable (a torn file is treated as absent)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def new_status(config_hash: str | None, run_dir: str | None, **fields) -> dict:
    status = {
        "state": "queued",
        "config_hash": config_hash,
        "run_dir": run_dir,
        "attempt": 0,
        "attempts": [],
        "retry_reasons": [],
        "started_at": None,
        "finished_at": None,
        "duration_s": 0.0,
        "final_loss": None,
        "first_loss": None,
        "global_step": None,
        "max_steps": None,
        "attention": None,
        "progress": None,
        "message": "",
        "pid": None,
        "device": None,
        "gpu_plan": None,
        "peak_memory": None,
        "tokens_per_second": None,
        "tokens_per_second_basis": None,
    }
    status.update(fields)
    return status


def checkpoints(output_dir: str) -> list[tuple[int, str]]:
    """Complete checkpoints (those with trainer_state.json, written last by the HF Trainer), by step."""
    found = []
    try:
        names = os.listdir(output_dir)
    except OSError:
        return []
    for name in names:
        match = _CHECKPOINT.match(name)
        path = os.path.join(output_dir, name)
        if match and os.path.isfile(os.path.join(path, "trainer_state.json")):
            found.append((int(match.group(1)), path))
    return sorted(found)


def last_checkpoint(output_dir: str) -> str | None:
    found = checkpoints(output_dir)
    return found[-1][1] if found else None


def adapter_complete(output_dir: str) -> bool:
    return all(os.path.isfile(os.path.join(output_dir, name)) and os.path.getsize(os.path.join(output_dir, name)) > 0 for name in ADAPTER_FILES)


def training_completed(output_dir: str, node_rank: int = 0) -> bool:
    """LLaMA-Factory saved the final adapter and then the trainer state: training ran to the end.

    Another node than rank 0 of a multi-node job saves the adapter but no final trainer state (only the job's
    first process does): there the trainer log's last step is the last of the run.
    """
    if not adapter_complete(output_dir):
        return False
    if node_rank == 0:
        return os.path.isfile(os.path.join(output_dir, "trainer_state.json"))
    summary = progress.read_progress(output_dir)
    return summary["step"] is not None and summary["step"] == summary["total_steps"]


def is_done(run_dir: str, config_hash: str) -> bool:
    status = read_json(os.path.join(run_dir, STATUS_FILE)) or {}
    return status.get("state") == "succeeded" and status.get("config_hash") == config_hash and adapter_complete(output_dir_for(run_dir))


def clear_unresumable_output(output_dir: str) -> bool:
    """Remove an output dir that holds no checkpoint (nothing to resume; stale logs would mix into progress)."""
    if os.path.isdir(output_dir) and os.listdir(output_dir) and last_checkpoint(output_dir) is None:
        shutil.rmtree(output_dir)
        return True
    return False


def final_metrics(output_dir: str) -> dict:
    """global_step / max_steps / losses from the trainer_state.json that LLaMA-Factory saves at the end.

    Eval losses (a job with held-out samples): the first one logged during training, and the final one from
    ``eval_results.json`` (LLaMA-Factory's evaluation after the last step) or else the last one logged.
    """
    state = read_json(os.path.join(output_dir, "trainer_state.json")) or {}
    history = state.get("log_history", [])
    losses = [entry["loss"] for entry in history if isinstance(entry.get("loss"), (int, float))]
    evals = [entry["eval_loss"] for entry in history if isinstance(entry.get("eval_loss"), (int, float))]
    final_eval = (read_json(os.path.join(output_dir, "eval_results.json")) or {}).get("eval_loss")  # after the last step
    if isinstance(final_eval, (int, float)):
        evals.append(final_eval)
    return {
        "global_step": state.get("global_step"),
        "max_steps": state.get("max_steps"),
        "first_loss": losses[0] if losses else None,
        "final_loss": losses[-1] if losses else None,
        "first_eval_loss": evals[0] if evals else None,
        "final_eval_loss": evals[-1] if evals else None,
    }


class JobLock:
    """An exclusive flock on ``<root>/.lock``.

    The trainer subprocess inherits the descriptor, so the lock outlives a runner killed with SIGKILL
    for as long as its orphaned trainer still runs: a second runner cannot start on the same output.
    """

    def __init__(self, root: str):
        self.path = os.path.join(root, LOCK_FILE)
        self.fd: int | None = None

    def acquire(self, timeout_s: float = 3.0) -> bool:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = None
                    return False
                time.sleep(0.1)

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    @staticmethod
    def held_by_other(root: str) -> bool:
        """True when some live process holds the lock (used by ``status`` to tell live from stale)."""
        path = os.path.join(root, LOCK_FILE)
        if not os.path.exists(path):
            return False
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora.launch --peak-file F CLI ARGS...``: run a Python console script in this process, then
write the process's measured peak memory to F.

``llamafactory-cli`` is a console script; with one visible device LLaMA-Factory trains in the process that
runs it, so running it here (``runpy``, as ``__main__``, ``sys.argv = [CLI, ARGS...]``, ``sys.path[0]`` = the
script's directory, as when it is started directly) lets an ``atexit`` handler read what the trainer used::

    {"gpu_max_allocated_bytes": 123 | null, "cpu_max_rss_kib": 456, "device": "gpu" | "cpu"}

``gpu_max_allocated_bytes`` is ``torch.cuda.max_memory_allocated()`` summed over the devices when the script
imported torch and initialised the GPU (torch is never imported here), else null. It counts tensors only
(what the sizing model estimates), not the HIP context or library workspaces. Several GPUs: LLaMA-Factory
starts torchrun workers, which this process does not see (null, and the RSS of the launcher only).

The exit status is the script's (SystemExit passes through unchanged). The script runs under this interpreter
(the runner's: the training venv's python, which the venv's ``llamafactory-cli`` belongs to). A CLI that is not
a Python script is exec'ed as it is, without a measurement. Forked children (dataloader workers) write nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import runpy
import signal
import sys


def peak_record(modules: dict | None = None) -> dict:
    modules = sys.modules if modules is None else modules
    gpu = None
    torch = modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                gpu = sum(int(torch.cuda.max_memory_allocated(index)) for index in range(torch.cuda.device_count()))
        except Exception:  # pylint: disable=broad-except
            gpu = None  # a half-torn-down runtime at exit: no measurement
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"gpu_max_allocated_bytes": gpu, "cpu_max_rss_kib": rss_kib, "device": "gpu" if gpu else "cpu"}


def write_peak(path: str, owner_pid: int) -> None:
    if os.getpid() != owner_pid:  # a forked child exiting through atexit
        return
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(peak_record(), handle, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        print(f"radeonlab_lora.launch: could not write {path}: {exc}", file=sys.stderr)


def stop_writes_peak(path: str, owner_pid: int) -> None:
    """SIGTERM (how the runner stops a trainer and the unit stops the API) writes the peak, then ends the process as the
    signal would have: atexit never runs on a signal's default action. A server that installs its own handler and, at
    shutdown, restores this one and raises the signal again (uvicorn) ends here too."""

    def on_term(signum, _frame):
        write_peak(path, owner_pid)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, on_term)


def is_python_script(path: str) -> bool:
    """A ``.py`` file, a ``#!...python`` script, or pip's ``#!/bin/sh`` + ``'''exec' python`` polyglot (long venv paths)."""
    if path.endswith(".py"):
        return True
    try:
        with open(path, "rb") as handle:
            first, second = handle.readline(512), handle.readline(512)
    except OSError:
        return False
    return first.startswith(b"#!") and (b"python" in first or second.startswith(b"'''exec'"))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3 or args[0] != "--peak-file":
        print("usage: python -m radeonlab_lora.launch --peak-file FILE CLI [ARGS...]", file=sys.stderr)
        raise SystemExit(2)
    peak_file, cli, rest = args[1], args[2], args[3:]
    if not is_python_script(cli):
        os.execv(cli, [cli, *rest])
    atexit.register(write_peak, os.path.abspath(peak_file), os.getpid())
    stop_writes_peak(os.path.abspath(peak_file), os.getpid())
    sys.argv = [cli, *rest]
    sys.path[0] = os.path.dirname(os.path.abspath(cli))
    runpy.run_path(cli, run_name="__main__")


if __name__ == "__main__":
    main()

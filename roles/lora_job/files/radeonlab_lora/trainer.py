# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One training attempt as a subprocess: find ``llamafactory-cli``, start it in its own session (holding the job
lock's descriptor), forward SIGTERM/SIGINT to its process group (SIGKILL after a grace period), collect its log tail.

Several GPUs or nodes: LLaMA-Factory runs ``torchrun``, whose workers each start a session of their own, so a
signal to the trainer's process group alone would leave them training as orphans. Signals go to the process group
of every descendant too (found in /proc before the first is signalled).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

KILL_GRACE_S = 30.0
LOG_TAIL_BYTES = 64 * 1024


def find_cli(name: str, env: dict) -> str | None:
    if os.path.isabs(name):
        return name if os.access(name, os.X_OK) else None
    found = shutil.which(name, path=env.get("PATH"))
    if found:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), name)  # the training venv's bin/, when PATH lacks it (systemd)
    return beside if os.access(beside, os.X_OK) else None


class Signals:
    """Records the first SIGTERM/SIGINT and forwards it to the trainer's process group."""

    def __init__(self):
        self.received: int | None = None
        self.at: float | None = None
        self.child: subprocess.Popen | None = None
        self._saved: dict = {}

    def install(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._saved[signum] = signal.signal(signum, self._handle)
        self._saved[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def restore(self) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    def _handle(self, signum, _frame) -> None:
        if self.received is None:
            self.received, self.at = signum, time.monotonic()
        self.kill_child(signal.SIGTERM)

    def kill_child(self, signum: int) -> None:
        if self.child is not None and self.child.poll() is None:
            signal_tree(self.child.pid, signum)


def descendants(pid: int, proc: str = "/proc") -> list[int]:
    """Every process below ``pid`` (children first), from the parent pids in /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "stat"), encoding="ascii", errors="replace") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])  # the command may hold spaces and ")"
        except (OSError, ValueError, IndexError):
            continue  # a process that ended while we looked
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in sorted(children.get(todo.pop(0), [])):
            found.append(child)
            todo.append(child)
    return found


def signal_tree(pid: int, signum: int) -> None:
    """``signum`` to the process group of ``pid`` and of each of its descendants (torchrun workers lead their own)."""
    groups = []
    for member in [pid, *descendants(pid)]:
        try:
            group = os.getpgid(member)
        except ProcessLookupError:
            continue
        if group not in groups and group != os.getpgrp():  # never the runner's own group
            groups.append(group)
    for group in groups:
        try:
            os.killpg(group, signum)
        except ProcessLookupError:
            pass


def _read_tail(path: str, offset: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        end = handle.tell()
        handle.seek(max(offset, end - LOG_TAIL_BYTES))
        return handle.read().decode("utf-8", errors="replace")


def run_trainer(argv: list[str], env: dict, log_path: str, lock_fd: int, signals: Signals, on_tick, tick_s: float) -> tuple[int, str]:
    """Run one attempt; stdout+stderr appended to ``log_path``. Returns (returncode, this attempt's log tail)."""
    with open(log_path, "ab") as log:
        offset = log.tell()
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True, pass_fds=(lock_fd,))
        signals.child = child
        try:
            while True:
                try:
                    returncode = child.wait(timeout=tick_s if signals.received is None else 1.0)
                    break
                except subprocess.TimeoutExpired:
                    if signals.received is not None and time.monotonic() - signals.at > KILL_GRACE_S:
                        signals.kill_child(signal.SIGKILL)
                    else:
                        on_tick()
        finally:
            signals.child = None
    return returncode, _read_tail(log_path, offset)

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora.launch``: runs a console script in-process, keeps its exit status, writes the peak."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from lora_cases import torch_device

SCRIPT = """import os, sys
print("argv", sys.argv, "path0", sys.path[0], flush=True)
if os.environ.get("USE_TORCH"):
    import torch
    torch.cuda.init()
if os.environ.get("FORK_CHILD"):
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # a child leaving through atexit must not write the peak file
    os.waitpid(pid, 0)
    print("child wrote", os.path.exists(os.environ["FORK_CHILD"]), flush=True)
if __name__ == "__main__":
    sys.exit(int(os.environ.get("EXIT_WITH", "0")))
"""


def _script(tmp_path, text=SCRIPT, shebang=f"#!{sys.executable}\n"):
    path = tmp_path / "bin" / "some-cli"
    path.parent.mkdir(exist_ok=True)
    path.write_text(shebang + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _launch(tmp_path, cli, *args, **env):
    peak = tmp_path / "peak.json"
    done = subprocess.run([sys.executable, "-m", "radeonlab_lora.launch", "--peak-file", str(peak), cli, *args],
                          env={**os.environ, **env}, capture_output=True, text=True, check=False, cwd=tmp_path)
    return done, json.loads(peak.read_text()) if peak.exists() else None


@pytest.mark.parametrize("code", ["0", "1", "3"])
def test_exit_status_passes_through_and_cpu_peak_is_written(tmp_path, code):
    cli = _script(tmp_path)
    done, peak = _launch(tmp_path, cli, "train", "x.yaml", EXIT_WITH=code)
    assert done.returncode == int(code), done.stderr
    assert f"argv ['{cli}', 'train', 'x.yaml'] path0 {os.path.dirname(cli)}" in done.stdout
    assert peak["gpu_max_allocated_bytes"] is None and peak["device"] == "cpu" and peak["cpu_max_rss_kib"] > 1000


def test_gpu_peak_is_summed_over_devices_when_the_script_used_the_gpu(tmp_path):
    cli = _script(tmp_path)
    done, peak = _launch(tmp_path, cli, USE_TORCH="1", FAKE_TORCH_HIP="6.4", FAKE_TORCH_PEAK_BYTES=str(3 << 30),
                         FAKE_TORCH_DEVICES=json.dumps([torch_device(), torch_device()]))
    assert done.returncode == 0, done.stderr
    assert (peak["gpu_max_allocated_bytes"], peak["device"]) == (6 << 30, "gpu")


def test_forked_children_do_not_write(tmp_path):
    done, peak = _launch(tmp_path, _script(tmp_path), FORK_CHILD=str(tmp_path / "peak.json"))
    assert done.returncode == 0, done.stderr
    assert "child wrote False" in done.stdout and peak["device"] == "cpu"  # written once, by the launcher, at its exit


def test_uncaught_exception_exits_1_and_still_writes(tmp_path):
    cli = _script(tmp_path, "raise RuntimeError('HIP error: invalid device function')\n")
    done, peak = _launch(tmp_path, cli)
    assert done.returncode == 1 and "HIP error: invalid device function" in done.stderr
    assert peak["device"] == "cpu"


def test_a_non_python_cli_is_executed_without_measurement(tmp_path):
    cli = _script(tmp_path, 'echo "shell $@"; exit 4\n', shebang="#!/bin/sh\n")
    done, peak = _launch(tmp_path, cli, "train", "y.yaml")
    assert (done.returncode, done.stdout.strip(), peak) == (4, "shell train y.yaml", None)


def test_usage_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "radeonlab_lora.launch", "x"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "usage" in done.stderr


def test_pips_long_path_polyglot_runs_in_process(tmp_path):
    polyglot = f"#!/bin/sh\n'''exec' \"{sys.executable}\" \"$0\" \"$@\"\n' '''\n" + SCRIPT
    done, peak = _launch(tmp_path, _script(tmp_path, polyglot, shebang=""), "train", EXIT_WITH="5")
    assert done.returncode == 5 and "argv" in done.stdout and peak["device"] == "cpu"


# A server as uvicorn runs one: its own SIGTERM handler, then at shutdown the previous handler back and the signal raised again.
SERVER = """import os, signal, sys, time
stop = []
previous = signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print("ready", flush=True)
while not stop:
    time.sleep(0.05)
signal.signal(signal.SIGTERM, previous)
signal.raise_signal(signal.SIGTERM)
time.sleep(5)
"""


@pytest.mark.parametrize("text", [SERVER, "import time\nprint('ready', flush=True)\ntime.sleep(30)\n"], ids=["server", "plain"])
def test_sigterm_writes_the_peak_and_ends_by_the_signal(tmp_path, text):
    peak = tmp_path / "peak.json"
    proc = subprocess.Popen([sys.executable, "-m", "radeonlab_lora.launch", "--peak-file", str(peak), _script(tmp_path, text)],
                            stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stdout.readline().strip() == "ready"
    proc.terminate()
    assert proc.wait(timeout=10) == -15
    assert json.loads(peak.read_text())["device"] == "cpu"

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Data-parallel jobs: the spec, the plan's share of the batch, the torchrun variables, a peer's death, rank > 0."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from lora_cases import QWEN25_7B, TINY, gpu_fact, read_calls, torch_device

from radeonlab_lora import cli, failures, peers, render, runner, sizing, spec as jobspec, state, trainer
from radeonlab_lora_report import report
from radeonlab_lora.modelshape import shape_for_job

DIST = {"nnodes": 2, "node_rank": 1, "master_addr": "192.0.2.10", "master_port": 29500, "timeout_s": 120}


def run(job, lines=None):
    out = lines if lines is not None else []
    return runner.run_job(jobspec.normalize(job), job.get("gpu"), out.append)


@pytest.mark.parametrize("value, problem", [
    ({"nnodes": 2, "node_rank": 2}, "node_rank must be in [0, nnodes)"),
    ({"nnodes": 0}, "nnodes must be a positive integer"),
    ({"master_port": 70000}, "master_port must be a TCP port"),
    ({"master_addr": ""}, "master_addr must be a host name or address"),
    ({"master_addr": "a b"}, "master_addr must be a host name or address"),
    ({"timeout_s": 0}, "timeout_s must be a positive integer"),
    ({"rank": 1}, "unknown keys ['rank']"),
    ("yes", "distributed must be an object or null"),
])
def test_spec_refuses_a_bad_distributed_object(tiny_job, value, problem):
    with pytest.raises(jobspec.SpecError, match=problem.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        jobspec.normalize({**tiny_job, "distributed": value})


def test_spec_fills_distributed_defaults(tiny_job):
    spec = jobspec.normalize({**tiny_job, "distributed": {"nnodes": 3, "node_rank": 2, "master_addr": "10.1.2.3"}})
    assert spec["distributed"] == {"nnodes": 3, "node_rank": 2, "master_addr": "10.1.2.3", "master_port": 29500, "timeout_s": 1800}
    assert jobspec.normalize(tiny_job)["distributed"] is None


@pytest.mark.parametrize("world, effective, batch, accumulation", [
    (1, 8, 8, 1), (2, 8, 4, 1), (4, 8, 2, 1), (8, 8, 1, 1), (3, 8, 2, 2), (16, 8, 1, 1), (2, 32, 16, 1),
])
def test_each_process_is_sized_for_its_share_of_the_effective_batch_on_the_cpu(world, effective, batch, accumulation):
    shape = shape_for_job("org/tiny", None, TINY)
    plan = sizing.plan_job(shape, cutoff_len=128, attention="sdpa", device=sizing.Device(vram_kib=None, ram_kib=16 << 20),
                           effective_batch=effective, world_size=world)
    assert (plan.per_device_train_batch_size, plan.gradient_accumulation_steps, plan.world_size) == (batch, accumulation, world)
    assert batch * accumulation * world >= effective
    assert (f"on each of {world} data-parallel processes" in plan.message) == (world > 1)


def test_a_7b_plan_on_two_gpus_keeps_the_per_gpu_memory_and_halves_the_accumulation():
    shape = shape_for_job("Qwen/Qwen2.5-7B", None, QWEN25_7B)
    device = sizing.device_from_facts({"gpus": [gpu_fact(0), gpu_fact(1)]})
    one = sizing.plan_job(shape, cutoff_len=2048, attention="sdpa", device=device, effective_batch=16)
    two = sizing.plan_job(shape, cutoff_len=2048, attention="sdpa", device=device, effective_batch=16, world_size=2)
    assert one.per_device_train_batch_size == two.per_device_train_batch_size and one.needed_gib == two.needed_gib
    assert two.per_device_train_batch_size * two.gradient_accumulation_steps * 2 >= 16
    assert two.gradient_accumulation_steps == -(-one.gradient_accumulation_steps // 2)


def test_world_size_must_be_positive():
    with pytest.raises(sizing.SizingError, match="world_size"):
        sizing.plan_job(shape_for_job("org/tiny", None, TINY), cutoff_len=128, attention="sdpa", device=sizing.Device(vram_kib=None), world_size=0)


def test_config_of_one_host_is_unchanged_and_several_get_a_bounded_timeout_and_their_own_checkpoints(tiny_job):
    alone = runner.prepare(jobspec.normalize(tiny_job), tiny_job["gpu"], view={"torch": "2.9.1", "hip": None, "count": 0})
    cfg = alone.train_config()
    assert cfg["ddp_timeout"] == 180000000 and "save_on_each_node" not in cfg
    together = runner.prepare(jobspec.normalize({**tiny_job, "distributed": DIST}), tiny_job["gpu"],
                              view={"torch": "2.9.1", "hip": None, "count": 0})
    cfg = together.train_config()
    assert cfg["ddp_timeout"] == 120 and cfg["save_on_each_node"] is True
    assert (together.world_size, together.nproc_per_node, together.nnodes, together.node_rank) == (2, 1, 2, 1)
    assert together.config_hash != alone.config_hash
    rank0 = runner.prepare(jobspec.normalize({**tiny_job, "distributed": {**DIST, "node_rank": 0}}), tiny_job["gpu"],
                           view={"torch": "2.9.1", "hip": None, "count": 0})
    assert rank0.config_hash == together.config_hash, "every node of one job has the same config hash"


def test_launch_env_names_torchrun_the_rendezvous_and_the_interface(tiny_job):
    prepared = runner.prepare(jobspec.normalize({**tiny_job, "distributed": DIST}), tiny_job["gpu"], view={"torch": "2", "hip": None, "count": 0})
    env = runner.launch_env(prepared, {"PATH": "/usr/bin"}, route=lambda address: "eth1" if address == "192.0.2.10" else None)
    assert {key: env[key] for key in ("FORCE_TORCHRUN", "NPROC_PER_NODE", "NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")} == {
        "FORCE_TORCHRUN": "1", "NPROC_PER_NODE": "1", "NNODES": "2", "NODE_RANK": "1", "MASTER_ADDR": "192.0.2.10", "MASTER_PORT": "29500"}
    assert env["GLOO_SOCKET_IFNAME"] == env["NCCL_SOCKET_IFNAME"] == "eth1"
    assert env["ACCELERATE_TORCH_DEVICE"] == "cpu", "cpu:<rank> would stop the optimizer state loading on a resume"
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)  # torchrun is started by name
    chosen = runner.launch_env(prepared, {"GLOO_SOCKET_IFNAME": "bond0"}, route=lambda address: "eth1")
    assert chosen["GLOO_SOCKET_IFNAME"] == "bond0" and chosen["NCCL_SOCKET_IFNAME"] == "eth1"
    alone = runner.prepare(jobspec.normalize(tiny_job), tiny_job["gpu"], view={"torch": "2", "hip": None, "count": 0})
    assert "FORCE_TORCHRUN" not in runner.launch_env(alone, {"PATH": "/usr/bin"}, route=lambda address: "eth1")


@pytest.mark.parametrize("address, interface", [("127.0.0.1", "lo"), ("127.0.1.1", "lo"), ("localhost", "lo"), ("::1", "lo")])
def test_a_loopback_master_is_reached_through_lo(address, interface):
    assert runner.route_interface(address) == interface


def test_several_gpus_of_one_host_train_with_torchrun_on_all_of_them(tiny_job, fake_cli, gpu_torch, monkeypatch):
    monkeypatch.setenv("FAKE_TORCH_DEVICES", json.dumps([torch_device(), torch_device()]))
    job = {**tiny_job, "gpu": {"gpus": [gpu_fact(0), gpu_fact(1)], "ram_kb": 32 << 20}, "effective_batch_size": 8}
    assert run(job) == runner.EXIT_OK
    call = read_calls(fake_cli)[0]
    assert call["torchrun"]["FORCE_TORCHRUN"] == "1" and call["torchrun"]["NPROC_PER_NODE"] == "2" and call["torchrun"]["NNODES"] is None
    assert call["torchrun"]["ACCELERATE_TORCH_DEVICE"] is None, "on GPUs accelerate puts each process on its own GPU"
    config = call["config"]
    assert config["per_device_train_batch_size"] * config["gradient_accumulation_steps"] * 2 >= 8
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    assert status["distributed"] == {"world_size": 2, "nproc_per_node": 2, "nnodes": 1, "node_rank": 0}


def test_another_node_than_rank_0_succeeds_without_the_final_trainer_state(tiny_job, fake_cli):
    job = {**tiny_job, "distributed": {**DIST, "master_addr": "127.0.0.1"}}
    assert run(job) == runner.EXIT_OK
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    assert status["state"] == "succeeded" and status["global_step"] == status["max_steps"] == 6
    assert not os.path.exists(os.path.join(status["output_dir"], "trainer_state.json"))
    assert read_calls(fake_cli)[0]["torchrun"]["NODE_RANK"] == "1" and read_calls(fake_cli)[0]["torchrun"]["GLOO_SOCKET_IFNAME"] == "lo"
    assert not state.training_completed(status["output_dir"], 0)  # as rank 0 it would not be complete


def test_a_dead_peer_is_not_retried(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_FAIL_PEER", "1")
    lines = []
    assert run({**tiny_job, "distributed": {**DIST, "master_addr": "127.0.0.1"}}, lines) == runner.EXIT_FAILED
    status = state.read_json(os.path.join(tiny_job["output_dir"], "status.json"))
    assert len(read_calls(fake_cli)) == 1 and status["attempts"][0]["failure"] == "peer"
    assert "re-run the play to start every node again" in status["message"]


def test_a_local_oom_on_one_node_is_not_retried_with_new_settings(tiny_job, fake_cli, monkeypatch):
    monkeypatch.setenv("FAKE_LF_OOM_ABOVE", "1")
    job = {**tiny_job, "distributed": {**DIST, "master_addr": "127.0.0.1"}, "effective_batch_size": 8}
    assert run(job) == runner.EXIT_FAILED
    status = state.read_json(os.path.join(job["output_dir"], "status.json"))
    assert len(read_calls(fake_cli)) == 1 and "would change this node's settings alone" in status["message"]


@pytest.mark.parametrize("line", [
    "RuntimeError: [pair.cc:553] Connection closed by peer [10.0.0.2]:4242",
    "RuntimeError: Connection reset by peer",
    "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /none/torchelastic/agent/terminal_state/last_member",
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
    "torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to (10.0.0.1, 29500).",
])
def test_peer_failures_are_classified_and_stop(line):
    assert failures.classify(line, 1).kind == "peer"
    decision = failures.next_attempt([{"settings": {"flash_attn": "sdpa"}}], line, 1)
    assert not decision.retry and "re-run the play" in decision.reason


def test_an_oom_beside_a_peer_message_is_an_oom():
    assert failures.classify("torch.OutOfMemoryError: HIP out of memory\nConnection closed by peer", 1).kind == "oom"


def test_check_lists_what_the_nodes_must_agree_on(tiny_job, tmp_path, capsys):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({**tiny_job, "distributed": DIST}))
    assert cli.main(["check", "--job", str(path)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["distributed"]["node_rank"] == 1 and found["distributed"]["world_size"] == 2
    agree = dict(item.split("=", 1) for item in found["distributed"]["agree"])
    assert set(agree) == {"config_hash", "dataset_sha256", "done", "llamafactory", "model", "resume_from", "torch"}
    assert agree["config_hash"] == found["config_hash"] and agree["done"] == "False" and agree["resume_from"] == "None"


def test_signals_reach_workers_that_lead_their_own_session(tmp_path):
    """torchrun starts each worker in a session of its own: a signal to the trainer's group alone would miss it."""
    pid_file = tmp_path / "worker.pid"
    code = ("import subprocess, sys, time; w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); "
            f"open({str(pid_file)!r}, 'w').write(str(w.pid)); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 20
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    worker = int(pid_file.read_text())
    assert worker in trainer.descendants(parent.pid)
    trainer.signal_tree(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(worker):
        assert time.monotonic() < deadline, "the worker outlived the signal"
        time.sleep(0.05)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_descendants_reads_parent_pids_from_proc(tmp_path):
    for pid, parent, name in [(10, 1, "init"), (11, 10, "a b) c"), (12, 11, "w"), (13, 1, "other"), (14, 12, "x")]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({name}) S {parent} {pid} {pid} 0\n")
    (tmp_path / "self").mkdir()
    assert trainer.descendants(10, str(tmp_path)) == [11, 12, 14]
    assert trainer.descendants(13, str(tmp_path)) == []


def test_the_listener_counts_the_hosts_that_reached_it():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = {}
    thread = threading.Thread(target=lambda: result.update(peers.listen(port, 2, 10)))
    thread.start()
    for _peer in range(2):
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
    thread.join(20)
    assert result["ok"] and result["reached_from"] == ["127.0.0.1", "127.0.0.1"] and result["error"] is None


def test_the_listener_says_how_many_came_and_when_the_port_is_taken():
    with socket.socket() as held:
        held.bind(("", 0))
        held.listen()
        port = held.getsockname()[1]
        taken = peers.listen(port, 1, 1)
    assert not taken["ok"] and "cannot listen on port %d" % port in taken["error"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    lonely = peers.listen(free, 1, 0.3)
    assert not lonely["ok"] and lonely["error"] == "0 of 1 other host(s) reached port %d within 0 s" % free


@pytest.mark.parametrize("distributed, cell", [
    (None, "2 x 4"),
    ({"world_size": 1, "nnodes": 1, "node_rank": 0}, "2 x 4"),
    ({"world_size": 2, "nnodes": 1, "node_rank": 0}, "2 x 4 on each of 2 processes"),
    ({"world_size": 4, "nnodes": 2, "node_rank": 1}, "2 x 4 on each of 4 processes (node 1 of 2)"),
])
def test_the_report_shows_the_world_size(distributed, cell):
    status = {"plan": {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4}, "distributed": distributed}
    assert report.batch_cell(status) == cell


def test_render_keeps_extra_args_from_overriding_the_distributed_keys(tiny_job):
    with pytest.raises(render.RenderError, match="ddp_timeout"):
        runner.prepare(jobspec.normalize({**tiny_job, "distributed": DIST, "extra_args": {"ddp_timeout": 5}}), tiny_job["gpu"],
                       view={"torch": "2", "hip": None, "count": 0})

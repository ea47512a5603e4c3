"""One LoRA job on two lab hosts at once (issue 14 item 4): torchrun as LLaMA-Factory launches it, gloo on the CPU over
the machine's loopback (the lab's hosts share it), rank 0's rendezvous on a port of this scenario's own.

- The two hosts train one job together; its loss curve and adapter match a single-host run of the same global batch
  (8: batch 4 on each of 2 processes against batch 8 on one), within a tolerance that float summation order explains.
- One host's training unit killed mid-run (SIGKILL to every process of it): the other host's trainer fails within
  seconds instead of waiting, the play fails on both, and a re-run resumes both from the same checkpoint.

Each job has its own name, so the scenario's tiny-alpaca job is not touched; rank 0 is named (`lora_job_distributed_master`).

A re-run after the kill resumes only because the runner names the CPU device `cpu` for accelerate
(ACCELERATE_TORCH_DEVICE): its default, `cpu:<local rank>`, reaches transformers' optimizer `torch.load` as the
map_location, which torch refuses (found by this file's first run, 2026-12-03).
"""

import functools
import json
import os
import re
import time

import numpy
import pytest
from safetensors.numpy import load_file

from test_site import EPHEMERAL, FIRST_HOST, REBOOT_DUE, faultlab
from test_site_faults import AFTER_TRAINING_OFF, MAX_SAMPLES, SAVE_STEPS, STEPS_PER_EPOCH, _checkpoints, _finish, _on, _play, _status

# two-host jobs replay the job for minutes each: make test-full (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

RANK0, RANK1 = FIRST_HOST, REBOOT_DUE
MASTER_PORT = 29531
EPOCHS, KILL_EPOCHS = 2, 4
LOSS_RTOL = 1e-3  # LLaMA-Factory logs losses to 4 digits
ADAPTER_ATOL = 1e-4  # the largest LoRA weight is ~0.2; gloo's reduction order moves the last bits only
PEER_FAILS_WITHIN_S = 120
PAGE = "distributed_lab.md"  # written to build/results/ (faultlab.results_page)
SOURCE = "molecule/site/tests/test_site_distributed.py"
ROWS = []


def _row(what, measured):
    """Record a result; the page is written again with every row so far."""
    ROWS.append((what, measured))
    text = """# One job on two lab hosts (torchrun, gloo on the CPU)

%s
On the scenario's converged lab workstations the site (validate.yml, then the main play with `--tags lora_job`)
trains jobs of their own names on the lab's CPU switch: the tiny model, %d samples, effective batch 8 (%d steps an
epoch), a checkpoint every %d steps. `%s` is rank 0, `%s` rank 1; they reach each other over the machine's loopback.

| what | measured |
|---|---|
%s
""" % (faultlab.generated_by("`molecule test -s site` (%s)" % SOURCE, PAGE), MAX_SAMPLES, STEPS_PER_EPOCH, SAVE_STEPS,
       RANK0, RANK1, "\n".join("| %s | %s |" % row for row in ROWS))
    with open(faultlab.results_page(PAGE), "w", encoding="utf-8") as handle:
        handle.write(text)


def _results(name):
    return os.path.join(EPHEMERAL, "ddp-results-" + name)


def _args(name, epochs, hosts, distributed):
    return ["--limit", ",".join(hosts), "--tags", "lora_job",
            "-e", "radeonlab_torch_without_hip=true", "-e", "lora_job_name=" + name, "-e", "lora_job_num_train_epochs=%d" % epochs,
            "-e", "lora_job_save_steps=%d" % SAVE_STEPS, "-e", "lora_job_max_samples=%d" % MAX_SAMPLES, "-e", AFTER_TRAINING_OFF,
            "-e", "lora_job_poll_interval=2", "-e", "lora_job_results_dir=" + _results(name),
            "-e", "lora_job_distributed=%s" % str(distributed).lower(), "-e", "lora_job_master_port=%d" % MASTER_PORT] + (
            # rank 0 named: the play's first host follows the inventory's order, which molecule writes as it likes
            ["-e", "lora_job_distributed_master=" + RANK0] if distributed else [])


def _losses(name, host_name):
    with open(os.path.join(_results(name), host_name, "trainer_state.json"), encoding="utf-8") as handle:
        return [(entry["step"], entry["loss"]) for entry in json.load(handle)["log_history"] if "loss" in entry]


def _adapter(name, host_name):
    return load_file(os.path.join(_results(name), host_name, "adapter_model.safetensors"))


@functools.lru_cache(maxsize=None)
def _together_and_alone():
    started = time.monotonic()
    alone = _finish(_play(*_args("ddp-alone", EPOCHS, [RANK0], False)))
    alone_s = time.monotonic() - started
    together = _finish(_play(*_args("ddp", EPOCHS, [RANK0, RANK1], True)))
    return alone, together, alone_s, time.monotonic() - started - alone_s


def _wait_for_complete_checkpoint(host_name, name, process, step, timeout=600):
    deadline = time.monotonic() + timeout
    while step not in _checkpoints(host_name, name):
        assert process.poll() is None, "the play ended before checkpoint-%d: %s" % (step, _finish(process)[1][-3000:])
        assert time.monotonic() < deadline, "no checkpoint-%d of %s on %s within %ds" % (step, name, host_name, timeout)
        time.sleep(0.2)


def _failed_at(host_name, name, timeout):
    """Seconds until the host's job status says failed (None when it did not within ``timeout``)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if _status(host_name, name).get("state") == "failed":
            return time.monotonic() - started
        time.sleep(0.5)
    return None


@functools.lru_cache(maxsize=None)
def _one_node_killed():
    name = "ddp-kill"
    process = _play(*_args(name, KILL_EPOCHS, [RANK0, RANK1], True))
    _wait_for_complete_checkpoint(RANK1, name, process, 2 * SAVE_STEPS)
    _on(RANK1, "systemctl kill --signal=SIGKILL radeonlab-lora-%s.service" % name)
    rank0_failed_after = _failed_at(RANK0, name, PEER_FAILS_WITHIN_S)
    first = _finish(process)
    checkpoints = {host_name: _checkpoints(host_name, name) for host_name in (RANK0, RANK1)}
    second = _finish(_play(*_args(name, KILL_EPOCHS, [RANK0, RANK1], True)))
    return rank0_failed_after, first, checkpoints, second, {host_name: _status(host_name, name) for host_name in (RANK0, RANK1)}


@pytest.mark.only_on(RANK0)
def test_two_hosts_train_one_job_that_matches_one_host_with_the_same_global_batch(host):
    (rc_alone, out_alone), (rc, out), alone_s, together_s = _together_and_alone()
    assert rc_alone == 0, out_alone[-3000:]
    assert rc == 0, out[-3000:]
    statuses = {host_name: _status(host_name, "ddp") for host_name in (RANK0, RANK1)}
    for rank, host_name in enumerate((RANK0, RANK1)):
        status = statuses[host_name]
        assert status["state"] == "succeeded" and status["global_step"] == EPOCHS * STEPS_PER_EPOCH, status
        assert status["distributed"] == {"world_size": 2, "nproc_per_node": 1, "nnodes": 2, "node_rank": rank}, status["distributed"]
        assert status["plan"]["per_device_train_batch_size"] * status["plan"]["gradient_accumulation_steps"] == 4, status["plan"]
        assert os.path.getsize(os.path.join(_results("ddp"), host_name, "train.log")) > 0
    alone = _status(RANK0, "ddp-alone")
    assert alone["plan"]["per_device_train_batch_size"] * alone["plan"]["gradient_accumulation_steps"] == 8, alone["plan"]
    assert not os.path.exists(os.path.join(_results("ddp"), RANK1, "adapter_model.safetensors")), "the adapter is rank 0's"
    together_losses, alone_losses = _losses("ddp", RANK0), _losses("ddp-alone", RANK0)
    assert [step for step, _loss in together_losses] == [step for step, _loss in alone_losses], (together_losses, alone_losses)
    numpy.testing.assert_allclose([loss for _s, loss in together_losses], [loss for _s, loss in alone_losses], rtol=LOSS_RTOL)
    assert alone_losses[-1][1] < alone_losses[0][1], alone_losses
    together, single = _adapter("ddp", RANK0), _adapter("ddp-alone", RANK0)
    assert sorted(together) == sorted(single) and together
    worst = max(float(numpy.abs(together[key] - single[key]).max()) for key in together)
    assert worst <= ADAPTER_ATOL, worst
    with open(os.path.join(_results("ddp"), "report.md"), encoding="utf-8") as handle:
        report = handle.read()
    assert "on each of 2 processes (node 0 of 2)" in report and "on each of 2 processes (node 1 of 2)" in report, report
    loss_gap = max(abs(a - b) / b for (_s, a), (_t, b) in zip(together_losses, alone_losses))
    _row("one host, batch 8 x 1, %d steps (`lora_job_name=ddp-alone`)" % alone["global_step"],
         "loss %.4f -> %.4f, %.0f s of training, play %.0f s" % (alone_losses[0][1], alone_losses[-1][1], alone["duration_s"], alone_s))
    _row("two hosts, batch 4 x 1 on each of 2 processes, %d steps (`lora_job_distributed=true`)" % statuses[RANK0]["global_step"],
         "loss %.4f -> %.4f, %.0f s of training, play %.0f s" % (together_losses[0][1], together_losses[-1][1],
                                                                 statuses[RANK0]["duration_s"], together_s))
    _row("loss curves, %d logged steps" % len(alone_losses), "largest relative difference %.2g (tolerance %g)" % (loss_gap, LOSS_RTOL))
    scale = max(float(numpy.abs(single[key]).max()) for key in single)
    _row("adapters, %d tensors" % len(single), "largest absolute difference %.2g against a largest weight of %.3f (tolerance %g)"
         % (worst, scale, ADAPTER_ATOL))


@pytest.mark.only_on(RANK0)
def test_a_rerun_of_the_finished_two_host_job_trains_nothing(host):
    _together_and_alone()
    rc, out = _finish(_play(*_args("ddp", EPOCHS, [RANK0, RANK1], True)))
    assert rc == 0, out[-3000:]
    said = " ".join(out.split()).replace("''", "'")  # the YAML callback folds long messages and doubles quotes
    for host_name in (RANK0, RANK1):
        assert re.search(r"%s: job 'ddp' with config \w+ already succeeded; not training again" % host_name, said), out[-3000:]


@pytest.mark.only_on(RANK0)
def test_one_host_killed_fails_the_job_on_both_within_seconds_and_a_rerun_resumes_both(host):
    _together_and_alone()
    rank0_failed_after, (rc1, out1), checkpoints, (rc2, out2), statuses = _one_node_killed()
    assert rank0_failed_after is not None, "rank 0 did not fail within %ds of its peer's death" % PEER_FAILS_WITHIN_S
    assert rc1 != 0 and "died" in out1, out1[-3000:]
    rank0, rank1 = statuses[RANK0], statuses[RANK1]
    assert rank0["attempts"][0]["failure"] == "peer", rank0["attempts"]
    assert checkpoints[RANK0][-1] == checkpoints[RANK1][-1] >= 2 * SAVE_STEPS, checkpoints
    assert rc2 == 0, out2[-3000:]
    resumed = "checkpoint-%d" % checkpoints[RANK1][-1]
    for status in (rank0, rank1):
        assert status["state"] == "succeeded" and status["global_step"] == KILL_EPOCHS * STEPS_PER_EPOCH, status
        assert status["attempts"][-1]["resumed_from"] == resumed, status["attempts"]
    assert rank1["attempts"][0]["outcome"] == "interrupted" and "runner died" in rank1["attempts"][0]["evidence"], rank1["attempts"]
    _row("rank 1's training unit killed (SIGKILL to every process) after checkpoint-%d" % (2 * SAVE_STEPS),
         "rank 0's job failed %.1f s later (`%s`); the play failed (rc %d)" % (rank0_failed_after, rank0["attempts"][0]["failure"], rc1))
    _row("the play run again", "both hosts resumed from %s and trained to %d/%d; rc %d" % (resumed, rank0["global_step"], rank0["max_steps"], rc2))

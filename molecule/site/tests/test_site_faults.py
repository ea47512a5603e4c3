"""Faults on the converged site, each scripted here (issue 13 item 3); the run writes build/results/reliability_faults_site.md.

- The whole training unit killed mid-run (SIGKILL to every process, as a power cut or the OOM killer would): the play
  says the job died; a re-run of the play resumes from the last complete checkpoint and trains to the end.
- The runner killed with lora_job_restart on: systemd starts the unit again, the job resumes, the same play ends green.
- A host rebooted mid-run with lora_job_start_at_boot on: the enabled unit starts at boot and resumes; no play needed.
- A host shut down: the others finish, the run ends non-zero and the fleet report marks the host.

Each runs the site (validate.yml, then the main play with --tags lora_job) on the lab's own switch (CPU training), a
job of its own name, so the scenario's tiny-alpaca job and its results are not touched. The three job faults touch one
host each, so they run at once, each play limited to its host (a `--tags lora_job` run serves no wheelhouse); the
host shut down comes after them.
"""

import concurrent.futures
import functools
import glob
import json
import os
import subprocess
import tempfile
import time

import pytest

from test_site import CONVERGE, EPHEMERAL, FIRST_HOST, PROJECT, RUN_ENV, REBOOT_DUE, _hostname, _recap, faultlab

# the job faults (kill, restart, reboot, a host down) replay the job for minutes each: make test-full (tests/tools/pytest_full_only.py)
pytestmark = pytest.mark.full_only

PAGE = "reliability_faults_site.md"  # written to build/results/ (faultlab.results_page)
SOURCE = "molecule/site/tests/test_site_faults.py"
ROWS = []
# The first 68 of the 128 samples, 4 of them held out for the eval loss (lora_job_val_size's 5 %, rounded up), so 64
# train at effective batch 8: 8 full steps an epoch (a short last batch would split unevenly over two hosts); a
# checkpoint every 4 steps.
MAX_SAMPLES = 68
STEPS_PER_EPOCH = 8
SAVE_STEPS = 4
# The fault jobs are about training: the site's own job answers the prompts, merges and serves (its API port is taken).
AFTER_TRAINING_OFF = '{"lora_job_sample_prompts": [], "lora_job_export": "adapter", "lora_job_serve": false}'
# fault: the host it is done to
AT = {"killed": "site-navi22", "restart": "site-navi21igpu", "boot": FIRST_HOST}


def _job_args(fault, name, epochs, *extra):
    host_name = AT[fault]
    results = os.path.join(EPHEMERAL, "fault-results-" + name)
    return ["--limit", host_name, "--tags", "lora_job", "-e", "radeonlab_torch_without_hip=true", "-e", "lora_job_name=" + name,
            "-e", "lora_job_num_train_epochs=%d" % epochs, "-e", "lora_job_save_steps=%d" % SAVE_STEPS,
            "-e", "lora_job_max_samples=%d" % MAX_SAMPLES, "-e", AFTER_TRAINING_OFF,
            "-e", "lora_job_poll_interval=2", "-e", "lora_job_results_dir=" + results] + list(extra)


def _play(*args):
    """ansible-playbook in the background; its output goes to a file (at -vvv it would fill a pipe nobody reads yet)."""
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE] + list(args)
    output = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, text=True, env=RUN_ENV)
    process.output = output
    return process


def _finish(process, timeout=900):
    process.wait(timeout=timeout)
    process.output.seek(0)
    return process.returncode, process.output.read()


def _on(host_name, command):
    run = subprocess.run(["docker", "exec", host_name, "sh", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    return run.stdout.strip()


def _checkpoints(host_name, name):
    """Complete checkpoints (with trainer_state.json, the file the Trainer writes last) of the job, by step."""
    listing = _on(host_name, "ls -d /var/lib/radeonlab/lora/%s/runs/*/output/checkpoint-*/trainer_state.json 2>/dev/null" % name)
    return sorted(int(line.split("/checkpoint-")[1].split("/")[0]) for line in listing.splitlines() if line)


def _wait_for_checkpoint(host_name, name, process, at_least, timeout=600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _checkpoints(host_name, name)
        if found and found[-1] >= at_least:
            return found[-1]
        assert process.poll() is None, "the play ended before checkpoint-%d: %s" % (at_least, _finish(process)[1][-3000:])
        time.sleep(1)
    raise AssertionError("no checkpoint-%d of %s within %ds" % (at_least, name, timeout))


def _status(host_name, name):
    return json.loads(_on(host_name, "cat /var/lib/radeonlab/lora/%s/runs/*/status.json" % name))


def _row(case, done, outcome, seconds):
    """Record a fault's outcome; the page is written again with every row so far (the last fault's write has all)."""
    ROWS.append((case, done, outcome, seconds))
    lines = ["| fault | what was done | outcome | seconds |", "|---|---|---|---|"]
    lines += ["| %s | %s | %s | %.0f |" % row for row in ROWS]
    text = """# Faults on a converged site

%s
Each fault is scripted on the scenario's lab workstations after converge and idempotence: the site (validate.yml, then
the main play with `--tags lora_job`) trains a job of the fault's own name on the lab's CPU switch (the tiny model, %d
samples of which 5 %% are held out for the eval loss, a checkpoint every %d steps, %d steps an epoch).

%s
""" % (faultlab.generated_by("`molecule test -s site` (%s)" % SOURCE, PAGE), MAX_SAMPLES, SAVE_STEPS, STEPS_PER_EPOCH,
       "\n".join(lines))
    with open(faultlab.results_page(PAGE), "w", encoding="utf-8") as handle:
        handle.write(text)


def _killed_then_rerun():
    name, epochs, host_name = "fault-killed", 4, AT["killed"]
    start = time.monotonic()
    process = _play(*_job_args("killed", name, epochs))
    _wait_for_checkpoint(host_name, name, process, 2 * SAVE_STEPS)
    _on(host_name, "systemctl kill --signal=SIGKILL radeonlab-lora-%s.service" % name)
    killed_at = _checkpoints(host_name, name)[-1]
    first = _finish(process)
    second = _finish(_play(*_job_args("killed", name, epochs)))
    return killed_at, first, second, _status(host_name, name), epochs * STEPS_PER_EPOCH, time.monotonic() - start


# The restart fault's job trains a ShareGPT copy of the lab data set (messages of role/content, JSON lines) split into
# two data sets of one job (lora_job_dataset a list, each entry with its src; the lab's lora_job_dataset_src emptied),
# so both run end to end through the site at no extra cost. LLaMA-Factory 0.9.5 applies max_samples to each data set
# (data/loader.py _load_single_dataset), then concatenates them and holds out val_size: the first MAX_SAMPLES records,
# half in each file, with max_samples MAX_SAMPLES // 2, train the same 64 samples at 8 steps an epoch.
CHATS = {"formatting": "sharegpt", "columns": {"messages": "messages"},
         "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"}}
CHAT_SETS = ("tiny_chats_a", "tiny_chats_b")


def _chats_files():
    """The two halves of the first MAX_SAMPLES records, as lora_job_dataset entries with their src."""
    with open(os.path.join(PROJECT, ".cache", "lab", "tinymodel", "data", "tiny_alpaca.json"), encoding="utf-8") as handle:
        records = json.load(handle)[:MAX_SAMPLES]
    half = MAX_SAMPLES // 2
    entries = []
    for name, part in zip(CHAT_SETS, (records[:half], records[half:])):
        path = os.path.join(EPHEMERAL, name + ".jsonl")
        with open(path, "w", encoding="utf-8") as handle:
            for record in part:
                prompt = record["instruction"] + ("\n" + record["input"] if record.get("input") else "")
                handle.write(json.dumps({"messages": [{"role": "user", "content": prompt},
                                                      {"role": "assistant", "content": record["output"]}]}) + "\n")
        entries.append(dict(CHATS, name=name, src=path))
    return entries


def _killed_with_restart():
    name, epochs, host_name = "fault-restart", 4, AT["restart"]
    start = time.monotonic()
    process = _play(*_job_args("restart", name, epochs, "-e", "lora_job_restart=true", "-e", "lora_job_restart_delay=3",
                               "-e", json.dumps({"lora_job_dataset": _chats_files(), "lora_job_dataset_src": "",
                                                 "lora_job_max_samples": MAX_SAMPLES // 2})))
    _wait_for_checkpoint(host_name, name, process, 2 * SAVE_STEPS)
    _on(host_name, "systemctl kill --kill-whom=main --signal=SIGKILL radeonlab-lora-%s.service" % name)
    killed_at = _checkpoints(host_name, name)[-1]
    result = _finish(process)
    # systemd's NRestarts is back at 0 once the restarted unit has ended; its journal keeps the restart
    restarts = _on(host_name, "journalctl -u radeonlab-lora-%s.service --no-pager | grep -c 'Scheduled restart job'" % name)
    return killed_at, result, _status(host_name, name), restarts, epochs * STEPS_PER_EPOCH, time.monotonic() - start


def _invocation(host_name, unit):
    return _on(host_name, "systemctl show -p InvocationID --value %s" % unit)


def _wait_for_the_run_after_boot(host_name, name, unit, invocation_before, timeout=600):
    """The status once the run the boot started has ended (the shutdown left "failed ... re-run resumes from" behind)."""
    deadline = time.monotonic() + timeout
    status = {}
    while time.monotonic() < deadline:
        try:
            status = _status(host_name, name)
        except ValueError:  # being rewritten, or the container still booting
            status = {}
        if status.get("state") == "succeeded":
            return status
        ended = _on(host_name, "systemctl is-active %s" % unit) in ("failed", "inactive")
        if ended and _invocation(host_name, unit) not in ("", invocation_before) and status.get("state") != "running":
            return status
        time.sleep(2)
    raise AssertionError("the run after boot of %s did not end within %ds: %s" % (name, timeout, status))


def _rebooted_mid_run():
    name, epochs, host_name = "fault-boot", 4, AT["boot"]
    unit = "radeonlab-lora-%s.service" % name
    start = time.monotonic()
    process = _play(*_job_args("boot", name, epochs, "-e", "lora_job_start_at_boot=true"))
    _wait_for_checkpoint(host_name, name, process, 2 * SAVE_STEPS)
    invocation_before = _invocation(host_name, unit)
    # a container keeps the kernel's boot id, so `journalctl -b` would also count the play's start: count from here
    restarted_at = _on(host_name, "date +%s")
    # a clean reboot: systemd stops the unit (the runner records its checkpoint on SIGTERM) within TimeoutStopSec=90
    subprocess.run(["docker", "restart", "-t", "150", host_name], check=True, capture_output=True, timeout=300)
    interrupted = _finish(process)
    subprocess.run(["docker", "exec", host_name, "systemctl", "is-system-running", "--wait"], capture_output=True, timeout=300,
                   check=False)
    status = _wait_for_the_run_after_boot(host_name, name, unit, invocation_before)
    after = {
        "enabled": _on(host_name, "systemctl is-enabled %s" % unit),
        "invocation": _invocation(host_name, unit),
        "started_this_boot": _on(host_name, "journalctl -u %s --since @%s --no-pager -o cat | grep -c '^Started '" % (unit, restarted_at)),
        # for the message of a run after boot that ended without training: a refusal goes to the job root's status
        "journal_this_boot": _on(host_name, "journalctl -u %s --since @%s --no-pager -o cat | tail -n 25" % (unit, restarted_at)),
        "root_status": _on(host_name, "cat /var/lib/radeonlab/lora/%s/runs/status.json 2>/dev/null | head -c 1500" % name),
    }
    # a play after the reboot follows the finished job and reports it; nothing is trained again
    rc, _output = _finish(_play(*_job_args("boot", name, epochs, "-e", "lora_job_start_at_boot=true")))
    with open(os.path.join(EPHEMERAL, "fault-results-" + name, "report.md"), encoding="utf-8") as handle:
        row = [line for line in handle.read().splitlines() if line.startswith("| %s |" % host_name)][-1]
    return invocation_before, interrupted, status, after, (rc, row), epochs * STEPS_PER_EPOCH, time.monotonic() - start


@functools.lru_cache(maxsize=None)
def _job_faults():
    """{fault: its outcome, or the exception it raised}: the three at once, each on its own host."""
    cases = {"killed": _killed_then_rerun, "restart": _killed_with_restart, "boot": _rebooted_mid_run}
    with concurrent.futures.ThreadPoolExecutor(len(cases)) as pool:
        futures = {fault: pool.submit(case) for fault, case in cases.items()}
        concurrent.futures.wait(futures.values())
    return {fault: future.exception() or future.result() for fault, future in futures.items()}


def _outcome(fault):
    outcome = _job_faults()[fault]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


@pytest.mark.only_on(AT["killed"])
def test_a_killed_job_fails_the_play_and_a_rerun_resumes_from_its_last_checkpoint(host):
    killed_at, (rc1, out1), (rc2, out2), status, steps, seconds = _outcome("killed")
    assert rc1 != 0 and "died" in out1, out1[-3000:]
    assert rc2 == 0, out2[-3000:]
    attempts = status["attempts"]
    assert status["state"] == "succeeded" and status["global_step"] == steps == status["max_steps"], status
    assert attempts[0]["outcome"] == "interrupted" and "runner died" in attempts[0]["evidence"], attempts
    assert attempts[-1]["resumed_from"] == "checkpoint-%d" % killed_at, attempts
    _row("training unit killed (SIGKILL to runner and trainer) on %s after checkpoint-%d" % (AT["killed"], killed_at),
         "the play said the job died (rc %d); the play run again" % rc1,
         "resumed from checkpoint-%d, trained to %d/%d, succeeded" % (killed_at, status["global_step"], steps), seconds)


@pytest.mark.only_on(AT["restart"])
def test_with_lora_job_restart_systemd_restarts_a_killed_runner_and_the_same_play_ends_green(host):
    killed_at, (rc, output), status, restarts, steps, seconds = _outcome("restart")
    assert rc == 0, output[-3000:]
    assert restarts == "1", restarts
    assert status["state"] == "succeeded" and status["global_step"] == steps, status
    assert status["attempts"][-1]["resumed_from"] == "checkpoint-%d" % killed_at, status["attempts"]
    trained_on = json.loads(_on(AT["restart"], "cat /var/lib/radeonlab/lora/fault-restart/runs/*/data/dataset_info.json"))
    assert sorted(trained_on) == list(CHAT_SETS), trained_on
    for name in CHAT_SETS:
        assert trained_on[name]["formatting"] == "sharegpt" and trained_on[name]["columns"] == {"messages": "messages"}, trained_on
        assert trained_on[name]["file_name"] == "/var/lib/radeonlab/lora/fault-restart/data/%s.jsonl" % name, trained_on
    train = json.loads(_on(AT["restart"], "cat /var/lib/radeonlab/lora/fault-restart/runs/*/train.yaml"))  # JSON text
    assert train["dataset"] == ",".join(CHAT_SETS) and train["max_samples"] == MAX_SAMPLES // 2, train
    _row("runner killed (SIGKILL to the main process) on %s after checkpoint-%d, lora_job_restart=true, the job on a "
         "ShareGPT copy of the data set split into two data sets" % (AT["restart"], killed_at),
         "systemd restarted the unit (%s restart in its journal); the play kept following" % restarts,
         "resumed from checkpoint-%d, trained to %d/%d, the same play ended rc 0" % (killed_at, status["global_step"], steps), seconds)


@pytest.mark.only_on(AT["boot"])
def test_with_lora_job_start_at_boot_a_job_cut_by_a_reboot_goes_on_after_boot_without_a_play(host):
    invocation_before, (rc1, _out1), status, after, (rc2, row), steps, seconds = _outcome("boot")
    assert after["enabled"] == "enabled", after
    assert after["started_this_boot"] == "1" and after["invocation"] not in ("", invocation_before), (after, invocation_before)
    assert status["state"] == "succeeded" and status["global_step"] == steps == status["max_steps"], (status, after)
    resumed = status["attempts"][-1]["resumed_from"]
    assert resumed and resumed.startswith("checkpoint-") and int(resumed.split("-")[1]) >= 2 * SAVE_STEPS, status["attempts"]
    # the shutdown's SIGTERM: the runner stopped the trainer and recorded the attempt interrupted
    assert status["attempts"][-2]["outcome"] == "interrupted", status["attempts"]
    assert rc2 == 0 and "already done" in row, (rc2, row)
    _row("host %s rebooted (docker restart) after checkpoint-%d, lora_job_start_at_boot=true" % (AT["boot"], 2 * SAVE_STEPS),
         "the play following the job lost the host (rc %d); no play was run until the job had ended" % rc1,
         "the enabled unit started at boot (1 start this boot), resumed from %s, trained to %d/%d; a play after it ended rc 0"
         % (resumed, status["global_step"], steps), seconds)


@functools.lru_cache(maxsize=None)
def _one_host_down():
    start = time.monotonic()
    subprocess.run(["docker", "stop", REBOOT_DUE], check=True, capture_output=True, timeout=120)
    try:
        rc, output = _finish(_play("--tags", "lora_job", "-e", "radeonlab_torch_without_hip=true"))
    finally:
        subprocess.run(["docker", "start", REBOOT_DUE], check=True, capture_output=True, timeout=120)
        subprocess.run(["docker", "exec", REBOOT_DUE, "systemctl", "is-system-running", "--wait"], capture_output=True, timeout=300,
                       check=False)
    results = os.path.join(EPHEMERAL, "lora-results")
    with open(os.path.join(results, "report.md"), encoding="utf-8") as handle:
        report = handle.read()
    return rc, output, report, time.monotonic() - start


def test_a_host_that_is_down_is_left_out_the_others_finish_and_the_report_marks_it(host):
    rc, output, report, seconds = _one_host_down()
    name = _hostname(host)
    recap = _recap(output, name)
    rows = [line for line in report.splitlines() if line.startswith("| %s |" % name)]
    if name == REBOOT_DUE:
        # over SSH a host that is down is unreachable; over the lab's docker connection (pipelined) the exec into a
        # stopped container fails the task instead: either way the host leaves the run at the first task
        assert rc != 0 and (" unreachable=1 " in recap or " failed=1 " in recap) and " ok=" in recap, recap
        assert "Reach each host" in output.split("fatal: [%s]" % name)[0].rsplit("TASK [", 1)[1], "not left out at the reach task"
        assert rows[-1].endswith("| not finished in this run (unreachable, or failed before its results: see the play's recap) |"), rows
        _row("host %s shut down (docker stop) before the play" % name, "the site played with --tags lora_job",
             "left out at the reach task (%s); rc %d; the others finished; the report marks it not finished"
             % ("unreachable" if " unreachable=1 " in recap else "failed", rc), seconds)
        return
    assert " failed=0 " in recap and " unreachable=0 " in recap, recap
    assert "already done" in rows[-1], rows

"""Verify the whole site on both lab workstations: a trained adapter, its status, and the fleet report."""

import json
import os

JOB_RUNS = "/var/lib/radeonlab/lora/tiny-alpaca/runs"
RESULTS = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "lora-results")


def _hostname(host):
    return host.backend.get_hostname()


def _status(host):
    return json.loads(host.file(JOB_RUNS + "/status.json").content_string)


def test_job_succeeded_and_loss_fell(host):
    status = _status(host)
    assert status["state"] == "succeeded", status.get("message")
    assert status["final_loss"] < status["first_loss"]
    assert status["global_step"] == status["max_steps"] > 0


def test_adapter_files_exist_on_the_host(host):
    output = _status(host)["output_dir"]
    for name in ("adapter_model.safetensors", "adapter_config.json", "trainer_state.json", "training_loss.png"):
        assert host.file(os.path.join(output, name)).is_file, name
    assert host.file(output).user == "trainer"


def test_training_unit_ran_as_the_training_user(host):
    unit = host.run("systemctl show -p User -p Result radeonlab-lora-tiny-alpaca.service").stdout
    assert "User=trainer" in unit and "Result=success" in unit


def test_unit_environment_carries_the_override_for_this_gpu(host):
    env = host.file("/etc/radeonlab/lora-tiny-alpaca.env").content_string
    if _hostname(host).endswith("navi22"):
        assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in env
    else:
        assert "HSA_OVERRIDE_GFX_VERSION" not in env


def test_results_and_report_on_the_controller(host):
    folder = os.path.join(RESULTS, _hostname(host))
    for name in ("adapter_model.safetensors", "adapter_config.json", "trainer_state.json", "training_loss.png", "status.json", "host.json"):
        assert os.path.isfile(os.path.join(folder, name)), name
    with open(os.path.join(RESULTS, "report.md"), encoding="utf-8") as handle:
        report = handle.read()
    row = [line for line in report.splitlines() if line.startswith("| %s |" % _hostname(host))]
    assert row and "succeeded" in row[0]
    if _hostname(host).endswith("navi22"):
        assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in row[0] and "gfx1031" in row[0]
    else:
        assert "gfx1100" in row[0]
    with open(os.path.join(RESULTS, "report.html"), encoding="utf-8") as handle:
        assert handle.read().count("data:image/png;base64,") == 2

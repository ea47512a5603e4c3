"""lora_job_report_to tensorboard on one host (navi22, molecule.yml): its event files come to the controller with the
results, and TensorBoard's own reader finds in them the training loss the trainer state logged, step by step. The other
hosts report nowhere."""

import json
import os

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from test_site import RESULTS, _hostname, _status

REPORTING = "site-navi22"


def _events(name):
    return os.path.join(RESULTS, name, "tensorboard")


@pytest.mark.only_on(REPORTING)
def test_the_fetched_event_files_hold_the_training_loss_tensorboard_reads(host):
    folder = _events(REPORTING)
    fetched = sorted(name for name in os.listdir(folder) if name.startswith("events.out.tfevents."))
    on_host = host.check_output("find %s -name 'events.out.tfevents.*' -printf '%%f\\n'", _status(host)["output_dir"])
    assert fetched and fetched == sorted(on_host.split()), (fetched, on_host)
    accumulator = EventAccumulator(folder, size_guidance={"scalars": 0})  # 0: every event, none sampled away
    accumulator.Reload()
    assert "train/loss" in accumulator.Tags()["scalars"], accumulator.Tags()
    curve = {event.step: event.value for event in accumulator.Scalars("train/loss")}
    with open(os.path.join(RESULTS, REPORTING, "trainer_state.json"), encoding="utf-8") as handle:
        logged = {entry["step"]: entry["loss"] for entry in json.load(handle)["log_history"] if "loss" in entry}
    assert len(curve) >= 1 and min(curve) >= 1
    assert curve == pytest.approx(logged, rel=1e-6)  # float32 in the event file


def test_only_the_host_that_asked_reports_to_tensorboard(host):
    name = _hostname(host)
    train = json.loads(host.file(os.path.join(_status(host)["run_dir"], "train.yaml")).content_string)
    assert train["report_to"] == ("tensorboard" if name == REPORTING else "none")
    assert os.path.isdir(_events(name)) is (name == REPORTING)

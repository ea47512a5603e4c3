"""The role refused a WebUI on 0.0.0.0 without a login, and wrote nothing."""
import json


def test_failure_was_the_exposure_check(host):
    record = host.file("/root/llamafactory_failure.json")
    assert record.exists, "converge did not record a failure: the role did not fail"
    failure = json.loads(record.content_string)
    assert failure["task"] == "Check the WebUI exposure and its authentication"
    assert "The WebUI listens on 0.0.0.0:7860" in failure["msg"]
    assert "requires llamafactory_webui_auth_user and llamafactory_webui_auth_password" in failure["msg"]
    assert "ssh -L 7860:127.0.0.1:7860" in failure["msg"]


def test_nothing_was_written(host):
    assert not host.file("/etc/systemd/system/llamafactory-webui.service").exists
    assert not host.file("/etc/llamafactory").exists
    assert not host.file("/var/lib/llamafactory").exists
    assert not host.file("/opt/radeonlab").exists
    assert not host.file("/etc/ansible/facts.d/llamafactory.fact").exists


def test_no_webui_process(host):
    # the lab hosts share the controller's loopback (another scenario's WebUI may hold 7860), so look
    # for a process in this container rather than a listener
    assert host.run("pgrep -f '[l]lamafactory-cli'").rc == 1  # [l]: not this shell's own command line

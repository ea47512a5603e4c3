"""The role refused a WebUI on 0.0.0.0 without a login, and wrote nothing."""
import json

import pytest

# what radeonlab.llm.llamafactory writes once its preflight has passed (roles/llamafactory/vars/main.yml,
# llamafactory_webui_workdir's default); this scenario has no venv, so nothing else of it could exist
ROLE_PATHS = [
    "/etc/systemd/system/llamafactory-webui.service",
    "/etc/llamafactory",
    "/usr/local/lib/radeonlab/llamafactory_webui.py",
    "/var/lib/llamafactory",
    "/etc/ansible/facts.d/llamafactory.fact",
]


@pytest.fixture()
def failure(host):
    record = host.file("/root/llamafactory_failure.json")
    assert record.exists, "converge did not record a failure: the role did not fail (or did not run)"
    return json.loads(record.content_string)


def test_failure_was_the_exposure_check(failure):
    assert failure["task"] == "Check the WebUI exposure and its authentication"
    assert "The WebUI listens on 0.0.0.0:7860" in failure["msg"]
    assert "requires llamafactory_webui_auth_user and llamafactory_webui_auth_password" in failure["msg"]
    assert "ssh -L 7860:127.0.0.1:7860" in failure["msg"]


def test_nothing_was_written(host, failure):
    # the absences mean something only because the role ran and stopped in its preflight (the record),
    # so no unit, hence no WebUI process, and none of its files
    assert failure["task"].startswith("Check ")
    assert [path for path in ROLE_PATHS if host.file(path).exists] == []

"""Verify the ROCm 7.1 user space and the GPU decision on an RX 9070 XT + iGPU host and a Strix Halo APU
(see ../molecule.yml)."""
import json
import re

import pytest

EXPECTED = {
    "navi48": {
        "gpus": [("gfx1201", "AMD Radeon RX 9070 XT", True, "native"), ("gfx1036", "AMD Radeon Graphics", False, "override")],
        # the discrete card alone, by its UUID; the iGPU hidden rather than overridden
        "env": {"ROCR_VISIBLE_DEVICES": "GPU-2b09110b94528d60"},
        "reasons": ["no override needed; officially supported on ROCm 7.1",
                    "hidden: integrated GPU next to a usable discrete GPU"],
    },
    "strix": {
        # an APU whose only GPU is integrated keeps it; native gfx1151 kernels, no override, but not in AMD's list
        "gpus": [("gfx1151", "Radeon 8060S Graphics", True, "native")],
        "env": {},
        "reasons": ["not in AMD's official Linux list for ROCm 7.1"],
    },
}


@pytest.fixture()
def expected(host):
    return EXPECTED[host.backend.get_hostname().rsplit("-", 1)[1]]


def test_rocm_71_user_space_prints_the_capture(host, expected):
    assert host.package("rocm-core").version.startswith("7.1.0")
    out = host.check_output("/opt/rocm/bin/rocminfo")
    for name, marketing, _, _ in expected["gpus"]:
        assert re.search(r"^\s*Name:\s+%s\s*$" % name, out, re.M) and marketing in out


def test_the_published_decision(host, expected):
    record = host.file("/etc/radeonlab-lab/gpu_environment.json")
    assert record.exists and record.user == "root" and record.mode == 0o644
    facts = json.loads(record.content_string)
    assert facts["rocm_version"].startswith("7.1") and facts["rocm_line"] == "7.1"
    assert facts["override_mode"] == "none" and facts["env"] == expected["env"]
    assert [(g["name"], g["marketing_name"], g["visible"], g["status"]) for g in facts["gpus"]] == expected["gpus"]
    assert [g["name"] for g in facts["visible_gpus"]] == [expected["gpus"][0][0]]
    assert all(g["override"] is None for g in facts["gpus"])
    for gpu, reason in zip(facts["gpus"], expected["reasons"]):
        assert reason in gpu["reason"], gpu
    assert facts["rocm_error"] is None


def test_amd_verdict_on_the_strix_halo_kernel(host, expected):
    """AMD's Ryzen AI Max table for the running kernel: ROCm 7.1 is unsupported on a kernel with the KFD fixes and
    experimental on an older one; it does not apply to the RX 9070 XT host."""
    facts = json.loads(host.file("/etc/radeonlab-lab/gpu_environment.json").content_string)
    verdict = facts["apu_kernel"]
    assert verdict["applies"] is (expected["gpus"][0][0] == "gfx1151")
    if not verdict["applies"]:
        assert (verdict["status"], verdict["message"]) == ("unknown", "")
        return
    assert verdict["kernel"] == host.check_output("uname -r")
    assert verdict["kernel_has_fixes"] in (True, False)
    assert verdict["status"] == ("unsupported" if verdict["kernel_has_fixes"] else "experimental")
    assert "AMD lists ROCm %s as %s" % (facts["rocm_version"], verdict["status"]) in verdict["message"] and "rdna3-5.rst" in verdict["source"]

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import contextlib
import json
import os
import stat
from unittest import mock

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.radeonlab.llm.plugins.module_utils.rocminfo import ERROR_HINTS
from ansible_collections.radeonlab.llm.plugins.modules import rocm_facts

try:  # ansible-core >= 2.19
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # pragma: no cover - older ansible-core
    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args=None):
        serialized = to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args or {}}))
        with mock.patch.object(basic, "_ANSIBLE_ARGS", serialized):
            yield


HERE = os.path.dirname(__file__)
ROCMINFO = os.path.join(HERE, "..", "..", "..", "fixtures", "rocminfo")
KFD = os.path.join(HERE, "..", "..", "..", "fixtures", "kfd")
with open(os.path.join(ROCMINFO, "expected.json"), encoding="utf-8") as _handle:
    EXPECTED = json.load(_handle)

ROCMINFO_BIN = "/opt/rocm/bin/rocminfo"
TIMEOUT_BIN = "/usr/bin/timeout"


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


def exit_json(self, **kwargs):
    kwargs.setdefault("changed", False)
    raise ExitJson(kwargs)


def fail_json(self, msg, **kwargs):
    kwargs["failed"] = True
    kwargs["msg"] = msg
    raise FailJson(kwargs)


def capture(name):
    with open(os.path.join(ROCMINFO, name), encoding="utf-8") as handle:
        return handle.read()


def kfd_root(name):
    return os.path.join(KFD, name)


def run_module(args, rc=0, out="", err="", bins=None):
    """Run the module; return (outcome, result, run_command mock, get_bin_path mock)."""
    if bins is None:
        bins = {"rocminfo": ROCMINFO_BIN, "timeout": TIMEOUT_BIN}

    def get_bin_path(self, arg, required=False, opt_dirs=None):
        return bins.get(arg)

    args = dict(args)
    args.setdefault("sysfs_root", kfd_root("no_driver"))
    run = mock.Mock(return_value=(rc, out, err))
    with patch_module_args(args), \
            mock.patch.object(basic.AnsibleModule, "exit_json", exit_json), \
            mock.patch.object(basic.AnsibleModule, "fail_json", fail_json), \
            mock.patch.object(basic.AnsibleModule, "get_bin_path", get_bin_path), \
            mock.patch.object(basic.AnsibleModule, "run_command", run):
        try:
            rocm_facts.main()
        except ExitJson as exc:
            return "exit", exc.args[0], run
        except FailJson as exc:
            return "fail", exc.args[0], run
    raise AssertionError("module neither exited nor failed")


# ---------------------------------------------------------------- documentation vs spec

def test_argument_spec_matches_documentation():
    doc = yaml.safe_load(rocm_facts.DOCUMENTATION)
    spec = rocm_facts.argument_spec()
    assert set(doc["options"]) == set(spec) == {"rocminfo_path", "timeout", "source", "sysfs_root", "fail_on_error"}
    for name, option in spec.items():
        documented = doc["options"][name]
        assert documented["type"] == option["type"], name
        assert documented.get("default") == option.get("default"), name
        assert documented.get("choices") == option.get("choices"), name
        assert not option.get("required") and not documented.get("required")


def test_documentation_blocks_parse():
    doc = yaml.safe_load(rocm_facts.DOCUMENTATION)
    assert doc["module"] == "rocm_facts"
    assert "radeonlab.llm.attributes.facts" in doc["extends_documentation_fragment"]
    examples = yaml.safe_load(rocm_facts.EXAMPLES)
    assert any("radeonlab.llm.rocm_facts" in task for task in examples)
    ret = yaml.safe_load(rocm_facts.RETURN)
    gpu_keys = set(ret["ansible_facts"]["contains"]["rocm"]["contains"]["gpus"]["contains"])
    assert gpu_keys == {"node", "index", "name", "marketing_name", "compute_units", "vram_kb", "uuid", "chip_id", "isa", "integrated"}


# ---------------------------------------------------------------- rocminfo source

def test_single_gpu_facts_and_command():
    outcome, result, run = run_module({}, out=capture("06_rx7900xtx_gfx1100_rocm61.txt"))
    assert outcome == "exit"
    assert result["changed"] is False
    rocm = result["ansible_facts"]["rocm"]
    assert rocm == {
        "gpus": [{
            "node": 1, "index": 0, "name": "gfx1100", "marketing_name": "Radeon RX 7900 XTX", "compute_units": 96,
            "vram_kb": 25149440, "uuid": "GPU-69e905a91bab9202", "chip_id": 29772, "isa": ["amdgcn-amd-amdhsa--gfx1100"],
            "integrated": False,
        }],
        "cpus": [{"node": 0, "name": "AMD Ryzen 9 5900X 12-Core Processor",
                  "marketing_name": "AMD Ryzen 9 5900X 12-Core Processor", "compute_units": 24}],
        "runtime_version": "1.14",
        "driver_loaded": True,
        "source": "rocminfo",
        "version": None,
        "error": None,
    }
    run.assert_called_once()
    argv = run.call_args.args[0]
    assert argv == [TIMEOUT_BIN, "-k", "5", "30", ROCMINFO_BIN]
    assert run.call_args.kwargs["environ_update"]["LC_ALL"] == "C"
    assert run.call_args.kwargs["check_rc"] is False
    assert not run.call_args.kwargs.get("use_unsafe_shell")


def test_check_mode_runs_and_changes_nothing():
    outcome, result, run = run_module({"_ansible_check_mode": True}, out=capture("06_rx7900xtx_gfx1100_rocm61.txt"))
    assert outcome == "exit" and result["changed"] is False
    assert result["ansible_facts"]["rocm"]["gpus"][0]["name"] == "gfx1100"
    run.assert_called_once()


@pytest.mark.parametrize("timeout, bins, argv", [
    (90, {"rocminfo": ROCMINFO_BIN, "timeout": TIMEOUT_BIN}, [TIMEOUT_BIN, "-k", "5", "90", ROCMINFO_BIN]),
    (0, {"rocminfo": ROCMINFO_BIN, "timeout": TIMEOUT_BIN}, [ROCMINFO_BIN]),
    (30, {"rocminfo": ROCMINFO_BIN}, [ROCMINFO_BIN]),
])
def test_timeout_wrapping(timeout, bins, argv):
    outcome, _result, run = run_module({"timeout": timeout}, out=capture("06_rx7900xtx_gfx1100_rocm61.txt"), bins=bins)
    assert outcome == "exit"
    assert run.call_args.args[0] == argv


def test_dgpu_plus_igpu_indexes_and_integrated():
    _outcome, result, _run = run_module({}, out=capture("16_rx6800xt_gfx1030_plus_igpu_gfx1036_rocm56.txt"))
    gpus = result["ansible_facts"]["rocm"]["gpus"]
    assert [(g["index"], g["node"], g["name"], g["integrated"]) for g in gpus] == [
        (0, 1, "gfx1030", False), (1, 2, "gfx1036", True)]


def test_npu_is_not_a_gpu_and_strix_halo_is_integrated():
    _outcome, result, _run = run_module({}, out=capture("07_strix_halo_gfx1151_with_aie_npu.txt"))
    rocm = result["ansible_facts"]["rocm"]
    assert [(g["name"], g["vram_kb"], g["integrated"]) for g in rocm["gpus"]] == [("gfx1151", 67108864, True)]
    assert [c["node"] for c in rocm["cpus"]] == [0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_capture_through_the_module(name):
    outcome, result, _run = run_module({"fail_on_error": False, "source": "rocminfo"}, out=capture(name))
    assert outcome == "exit"
    rocm = result["ansible_facts"]["rocm"]
    want_gpus = [a for a in EXPECTED[name]["agents"] if a["type"] == "GPU"]
    assert [(g["node"], g["name"], g["vram_kb"]) for g in rocm["gpus"]] == [(a["node"], a["name"], a["vram_kb"]) for a in want_gpus]
    assert [g["index"] for g in rocm["gpus"]] == list(range(len(want_gpus)))
    assert len(rocm["cpus"]) == len([a for a in EXPECTED[name]["agents"] if a["type"] == "CPU"])
    assert (rocm["error"] or {}).get("kind") == EXPECTED[name]["error"]
    assert rocm["source"] == "rocminfo"


INTEGRATED = {
    "01_mi300x_x4_epyc_2numa.txt": [False] * 4,
    "04_rx6700xt_override_gfx1030_ansi.txt": [False],
    "08_ryzen3500u_apu_gfx902_rocm2x.txt": [True],
    "15_ryzen5600g_gfx90c_blank_marketing_name_truncated.txt": [True],
    "19_rx580_gfx803_plus_igpu_gfx1036_rocm64_rocky8.txt": [False, True],
    "22_radeon780m_gfx1103_apu_doc_mangled_headers.txt": [True],
    "31_rx6750gre_gfx1031_rocm57.txt": [False],
}


@pytest.mark.parametrize("name, want", sorted(INTEGRATED.items()))
def test_integrated_per_capture(name, want):
    _outcome, result, _run = run_module({}, out=capture(name))
    assert [g["integrated"] for g in result["ansible_facts"]["rocm"]["gpus"]] == want


# ---------------------------------------------------------------- errors

def test_error_fails_with_hint_and_message():
    out = capture("26_err_kfd_permission_denied_not_in_render_group.txt")
    outcome, result, _run = run_module({"source": "rocminfo"}, rc=1, out=out)
    assert outcome == "fail"
    assert "Unable to open /dev/kfd read-write: Permission denied" in result["msg"]
    assert ERROR_HINTS["kfd_permission_denied"] in result["msg"]
    assert "render" in result["msg"] and "video" in result["msg"]
    assert result["rc"] == 1 and result["stdout"] == out
    assert result["rocm"]["error"]["kind"] == "kfd_permission_denied"


def test_error_returned_when_not_failing():
    outcome, result, _run = run_module({"source": "rocminfo", "fail_on_error": False}, rc=1,
                                       out=capture("28_err_rock_module_not_live_mi250.txt"))
    assert outcome == "exit"
    rocm = result["ansible_facts"]["rocm"]
    assert rocm["gpus"] == [] and rocm["source"] == "rocminfo"
    assert rocm["error"]["kind"] == "rock_not_live"
    assert rocm["driver_loaded"] is False


def test_auto_falls_back_to_sysfs_but_keeps_the_error():
    outcome, result, run = run_module({"fail_on_error": False, "sysfs_root": kfd_root("rx6800xt_igpu")}, rc=1,
                                      out=capture("26_err_kfd_permission_denied_not_in_render_group.txt"))
    assert outcome == "exit"
    run.assert_called_once()
    rocm = result["ansible_facts"]["rocm"]
    assert rocm["source"] == "sysfs"
    assert [(g["index"], g["name"], g["integrated"]) for g in rocm["gpus"]] == [(0, "gfx1030", False), (1, "gfx1036", True)]
    assert rocm["error"]["kind"] == "kfd_permission_denied"
    assert rocm["runtime_version"] is None and rocm["driver_loaded"] is True


def test_auto_fallback_still_fails_when_asked():
    outcome, result, _run = run_module({"sysfs_root": kfd_root("rx6800xt_igpu")}, rc=1,
                                       out=capture("26_err_kfd_permission_denied_not_in_render_group.txt"))
    assert outcome == "fail"
    assert result["rocm"]["source"] == "sysfs"
    assert "kfd_permission_denied" in result["msg"]


def test_missing_rocminfo_auto_uses_sysfs_without_error():
    outcome, result, run = run_module({"sysfs_root": kfd_root("rx7900xtx")}, bins={"timeout": TIMEOUT_BIN})
    assert outcome == "exit"
    run.assert_not_called()
    rocm = result["ansible_facts"]["rocm"]
    assert rocm["source"] == "sysfs" and rocm["error"] is None
    assert rocm["gpus"][0]["name"] == "gfx1100" and rocm["gpus"][0]["vram_kb"] == 25149440


def test_missing_rocminfo_with_source_rocminfo():
    outcome, result, run = run_module({"source": "rocminfo"}, bins={})
    assert outcome == "fail"
    run.assert_not_called()
    assert "rocminfo_not_found" in result["msg"]
    assert ERROR_HINTS["rocminfo_not_found"] in result["msg"]
    outcome, result, _run = run_module({"source": "rocminfo", "fail_on_error": False}, bins={})
    assert result["ansible_facts"]["rocm"]["error"]["kind"] == "rocminfo_not_found"


def test_missing_rocminfo_and_no_driver_fails_with_root_cause():
    outcome, result, _run = run_module({"sysfs_root": kfd_root("no_driver")}, bins={})
    assert outcome == "fail"
    assert "rock_not_loaded" in result["msg"] and "modprobe amdgpu" in result["msg"]


def test_source_sysfs_never_runs_rocminfo():
    outcome, result, run = run_module({"source": "sysfs", "sysfs_root": kfd_root("mi300x_x4")})
    assert outcome == "exit"
    run.assert_not_called()
    rocm = result["ansible_facts"]["rocm"]
    assert [(g["index"], g["node"], g["compute_units"]) for g in rocm["gpus"]] == [(0, 2, 304), (1, 3, 304), (2, 4, 304), (3, 5, 304)]
    assert [c["node"] for c in rocm["cpus"]] == [0, 1]
    assert all(not g["integrated"] for g in rocm["gpus"])


def test_source_sysfs_strix_halo_is_integrated():
    _outcome, result, _run = run_module({"source": "sysfs", "sysfs_root": kfd_root("strix_halo")})
    assert [g["integrated"] for g in result["ansible_facts"]["rocm"]["gpus"]] == [True]


def test_timeout_is_an_error_and_falls_back():
    outcome, result, _run = run_module({"fail_on_error": False, "timeout": 7, "sysfs_root": kfd_root("rx7900xtx")}, rc=124)
    assert outcome == "exit"
    rocm = result["ansible_facts"]["rocm"]
    assert rocm["error"]["kind"] == "timeout" and "7 seconds" in rocm["error"]["message"]
    assert rocm["source"] == "sysfs" and rocm["gpus"][0]["name"] == "gfx1100"


def test_segfault_signal():
    outcome, result, _run = run_module({"source": "rocminfo"}, rc=-11, out="ROCk module is loaded\n")
    assert outcome == "fail"
    assert result["rocm"]["error"]["kind"] == "segfault"


def test_stderr_is_parsed_too():
    outcome, result, _run = run_module({"source": "rocminfo", "fail_on_error": False}, rc=1,
                                       out="ROCk module is loaded\n", err="Unable to open /dev/kfd read-write: Operation not permitted\n")
    assert result["ansible_facts"]["rocm"]["error"]["kind"] == "kfd_operation_not_permitted"


def test_wsl_driver_loaded_without_rock_line():
    _outcome, result, _run = run_module({"sysfs_root": kfd_root("no_driver")}, out=capture("05_wsl_rx7800xt_gfx1101.txt"))
    rocm = result["ansible_facts"]["rocm"]
    assert rocm["driver_loaded"] is True and rocm["error"] is None
    assert rocm["gpus"][0]["name"] == "gfx1101"


def test_rocminfo_path_with_slash(tmp_path):
    tool = tmp_path / "rocminfo"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    outcome, _result, run = run_module({"rocminfo_path": str(tool)}, out=capture("06_rx7900xtx_gfx1100_rocm61.txt"))
    assert outcome == "exit"
    assert run.call_args.args[0][-1] == str(tool)
    outcome, result, run = run_module({"rocminfo_path": str(tmp_path / "nope"), "source": "rocminfo"})
    assert outcome == "fail" and "rocminfo_not_found" in result["msg"]
    run.assert_not_called()


def test_get_bin_path_looks_in_opt_rocm():
    module = mock.Mock()
    module.get_bin_path.return_value = ROCMINFO_BIN
    assert rocm_facts.find_rocminfo(module, "rocminfo") == ROCMINFO_BIN
    module.get_bin_path.assert_called_once_with("rocminfo", required=False, opt_dirs=["/opt/rocm/bin"])


# ---------------------------------------------------------------- installed ROCm release

@pytest.mark.parametrize("content, expected", [
    ("6.4.0-47\n", "6.4.0"),
    ("7.0.2\n", "7.0.2"),
    ("6.4\n", "6.4"),
    ("garbage\n", None),
    (None, None),
])
def test_rocm_version_read_from_info_file(tmp_path, content, expected):
    if content is not None:
        info = tmp_path / "opt" / "rocm" / ".info"
        info.mkdir(parents=True)
        (info / "version").write_text(content)
    outcome, result, _run = run_module({"source": "rocminfo", "fail_on_error": False, "sysfs_root": str(tmp_path)},
                                       out=capture("06_rx7900xtx_gfx1100_rocm61.txt"))
    assert outcome == "exit"
    assert result["ansible_facts"]["rocm"]["version"] == expected

# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bitsandbytes rows of the support matrix and the per-GPU expectation (plain pytest tables)."""

from __future__ import annotations

import pytest

from ansible_collections.radeonlab.llm.plugins.filter.bitsandbytes import FilterModule
from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils.bitsandbytes import (
    BitsandbytesPolicyError,
    bitsandbytes_support,
    rocm_line_of_hip,
)

HIP_64, HIP_72 = "6.4.43484-123", "7.2.26015-fc0010cf6a"


def test_release_row_is_sourced_and_pinned():
    row = sm.bitsandbytes_release()
    assert row["version"] == "0.50.2" and row["verified"]
    assert all(key in sm.SOURCES for key in row["sources"]) and "huggingface.co/docs/bitsandbytes/v0.50.2" in row["source"]
    assert sorted(row["rocm_builds"]) == ["6.4", "7.0", "7.1", "7.14", "7.15", "7.2"]
    # read from the wheel's code-object bundles: gfx950 from the 7.0 build on, RDNA1/gfx1031 only in the TheRock builds
    assert "gfx950" not in row["rocm_builds"]["6.4"] and "gfx950" in row["rocm_builds"]["7.2"]
    assert "gfx1031" not in row["rocm_builds"]["7.2"] and "gfx1031" in row["rocm_builds"]["7.14"]
    assert all("gfx906" not in targets for targets in row["rocm_builds"].values())
    with pytest.raises(ValueError, match="0.40.0 is not recorded"):
        sm.bitsandbytes_release("0.40.0")


@pytest.mark.parametrize("hip, line", [(HIP_64, "6.4"), ("7.14.0", "7.14"), ("6.2.41133-dd7f95766", "6.2"), (None, None), ("", None)])
def test_rocm_line_of_hip(hip, line):
    assert rocm_line_of_hip(hip) == line


# gpus, hip, cuda, env -> supported, library, reason fragment
SUPPORT_TABLE = [
    (["gfx1030"], HIP_64, None, None, True, "libbitsandbytes_rocm64.so", "has kernels for gfx1030"),  # RX 6800 XT
    (["gfx1100"], HIP_72, None, None, True, "libbitsandbytes_rocm72.so", "has kernels for gfx1100"),
    ([{"name": "gfx1031", "override": "10.3.0"}], HIP_64, None, None, True, "libbitsandbytes_rocm64.so", "gfx1030"),
    ([{"name": "gfx1031", "node": 1}], HIP_64, None, {"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"}, True, "libbitsandbytes_rocm64.so", "gfx1030"),
    (["gfx1031"], HIP_64, None, None, False, "libbitsandbytes_rocm64.so", "has no kernels for gfx1031"),
    (["gfx906"], HIP_72, None, None, False, "libbitsandbytes_rocm72.so", "has no kernels for gfx906"),  # Radeon VII / MI50
    (["gfx950"], HIP_64, None, None, False, "libbitsandbytes_rocm64.so", "has no kernels for gfx950"),
    (["gfx1201", "gfx906"], HIP_72, None, None, False, "libbitsandbytes_rocm72.so", "has no kernels for gfx906"),
    ([{"name": "gfx1201"}, {"name": "gfx906", "visible": False}], HIP_72, None, None, True, "libbitsandbytes_rocm72.so", "gfx1201"),
    (["gfx1100"], "6.2.41133-dd7f95766", None, None, False, None, "ships no build for ROCm 6.2"),
    (["gfx1100"], None, None, None, False, None, "torch has no HIP (a CPU build)"),  # the lab
    ([], None, "13.0", None, True, "libbitsandbytes_cuda", "CUDA 13.0"),  # the lent H200
    ([], HIP_64, None, None, False, "libbitsandbytes_rocm64.so", "no GPU visible"),
]


@pytest.mark.parametrize("gpus, hip, cuda, env, supported, library, reason", SUPPORT_TABLE)
def test_support_per_host(gpus, hip, cuda, env, supported, library, reason):
    result = bitsandbytes_support(gpus, hip=hip, cuda=cuda, env=env)
    assert (result["supported"], result["library"], result["version"]) == (supported, library, "0.50.2")
    assert reason in result["reason"], result["reason"]


def test_borrowed_target_is_named_per_gpu():
    gpu = bitsandbytes_support([{"name": "gfx1031", "override": "10.3.0"}], hip=HIP_64)["gpus"][0]
    assert gpu == {"target": "gfx1030", "reported": "gfx1031", "supported": True,
                   "reason": "gfx1030 (gfx1031 borrowing gfx1030): libbitsandbytes_rocm64.so has its kernels"}


def test_bad_inputs_raise_the_policy_error():
    with pytest.raises(BitsandbytesPolicyError):
        bitsandbytes_support(["gfx1100"], hip="rocm")
    with pytest.raises(BitsandbytesPolicyError):
        bitsandbytes_support(["sm_90"], hip=HIP_64)


def test_filter_wraps_the_policy():
    from ansible.errors import AnsibleFilterError

    f = FilterModule().filters()["bitsandbytes_support"]
    assert f([]).get("version") == "0.50.2"
    assert f(["gfx1030"], HIP_64, None, "")["supported"] is True
    with pytest.raises(AnsibleFilterError, match="radeonlab.llm.bitsandbytes_support"):
        f(["gfx1100"], HIP_64, None, "0.1.0")

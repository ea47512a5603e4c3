# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Integrity of the support-matrix data, torch_for, and the generated docs/support_matrix.md."""

from __future__ import annotations

import ast
import importlib.util
import os
import re

import pytest

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm
from ansible_collections.radeonlab.llm.plugins.module_utils.gfx import normalize_gfx, torch_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
GFX_RE = re.compile(r"^gfx(\d{1,2})[0-9a-f]{2}$")


def test_matrix_version_is_a_string():
    assert isinstance(sm.MATRIX_VERSION, str) and re.match(r"^\d{4}\.\d{2}\.\d+$", sm.MATRIX_VERSION)


def test_release_lines_cover_the_issue():
    assert sm.RELEASE_LINES == ("5.7", "6.0", "6.1", "6.2", "6.3", "6.4", "7.0", "7.1", "7.2")


@pytest.mark.parametrize("line", sm.RELEASE_LINES)
def test_release_entries_are_complete(line):
    rel = sm.RELEASES[line]
    for key in ("official_radeon", "official_instinct", "deprecated", "rocblas", "torch"):
        values = rel[key] if rel[key] is not None else ()
        for target in values:
            assert GFX_RE.match(target), (line, key, target)
            assert normalize_gfx(target) == target
    for key in ("official_verified", "rocblas_verified", "torch_verified", "per_node_override"):
        assert isinstance(rel[key], bool)
    assert rel["official_source"] in sm.SOURCES
    assert rel["notes"]
    assert set(rel["deprecated"]) <= set(rel["official_radeon"] + rel["official_instinct"])


def test_unverified_lines_match_the_reference():
    # rocm_facts.md: tables start at 6.0. AMD's historical CSV (compat_csv) has columns up to 7.1.0. AMD's 7.2.x
    # compute matrix (compat_72) confirms 7.2's distributions; its Radeon-specific page was not read, so 7.2's
    # official lists stay unverified (docs/research/current_stack_sources.md §1, §2).
    assert sm.RELEASES["5.7"]["official_verified"] is False
    assert sm.RELEASES["7.1"]["official_verified"] is True
    assert sm.RELEASES["7.1"]["official_source"] == "compat_csv"
    assert sm.RELEASES["7.2"]["official_verified"] is False
    assert sm.RELEASES["7.2"]["os_verified"] is True and sm.RELEASES["7.2"]["os_source"] == "compat_72"
    assert sm.RELEASES["7.2"]["debian"] == ("13", "12")
    assert sm.RELEASES["6.0"]["official_verified"] is True


def test_research_unverified_facts_stay_marked():
    # docs/research/current_stack_sources.md, "What the data module would need" point 13
    notes = sm.RELEASES["7.2"]["notes"]
    assert "Radeon-specific OS and GPU list is UNVERIFIED" in notes
    assert "gfx1151 UNVERIFIED" in notes
    for date in ("7.2.1 2026-03-24", "7.2.2 2026-04-14", "7.2.3 2026-05-04"):
        assert date in notes
    assert "gfx1102 on this line are UNVERIFIED" in " ".join(sm.RELEASES["7.1"]["notes"].split())
    assert "7.2.4" not in sm.AMDGPU_REPO_VERSIONS and "7.2.4: UNVERIFIED" in sm.AMDGPU_REPO_NOTES
    assert "UNVERIFIED" in sm.SDPA_KERNELS[-2]["notes"] and "2.12" in sm.SDPA_KERNELS[-2]["notes"]
    assert "Which 31.x pairs with 7.14 / 10.x: UNVERIFIED" in sm.SOURCES["therock_driver"]


@pytest.mark.parametrize("line", sm.RELEASE_LINES)
def test_distributions_and_dates_are_sourced(line):
    rel = sm.RELEASES[line]
    assert isinstance(rel["os_verified"], bool) and rel["os_source"] in sm.SOURCES
    for key in ("ubuntu", "debian"):
        assert rel[key] is None or all(re.match(r"^\d{2}(\.\d{2})?$", r) for r in rel[key]), (line, key)
    if line.startswith("7."):
        # every 7.x line: Radeon on both Ubuntu LTS releases, a first and a latest release with dates
        assert rel["ubuntu"] == ("24.04", "22.04")
        for key in ("released", "latest"):
            assert re.match(r"^%s\.\d+ \(\d{4}-\d{2}-\d{2}\)$" % re.escape(line), rel[key]), (line, key)
        assert rel["release_source"] in sm.SOURCES
        assert rel["released"].startswith(line + ".0 ")
    else:
        assert rel["released"] is None or rel["release_source"] in sm.SOURCES


def test_amdgpu_repo_versions_follow_the_rocm_lines():
    # AMD's driver line per ROCm minor: 7.0 -> 30.10, 7.1 -> 30.20, 7.2 -> 30.30 (amdgpu_versions)
    for rocm, driver in sm.AMDGPU_REPO_VERSIONS.items():
        minor = int(rocm.split(".")[1])
        assert driver.split(".")[:2] == ["30", "%d0" % (minor + 1)], (rocm, driver)
        assert rocm.split(".")[2:] == driver.split(".")[2:] or rocm == "7.2.3", (rocm, driver)
    assert sm.AMDGPU_REPO_VERSIONS["7.2.3"] == "30.30.3"  # AMD's amdgpu-docs conf.py (ROCm/amdgpu-docs#97)
    assert sm.AMDGPU_REPO_VERSIONS["7.2.1"] == "30.30.1"  # ROCm/legacy-rocm-build#6156 (amdgpu_7221)
    assert sm.AMDGPU_REPO_VERSIONS["7.2.2"] == "30.30.2"  # the installer's line, published late (amdgpu_7221)
    assert "7.2.4" not in sm.AMDGPU_REPO_VERSIONS  # no pairing seen
    for key in ("amdgpu_7221", "amdgpu_aliases", "amdgpu_epoch_31"):
        assert key in sm.SOURCES and re.search(r"\b%s\b" % key, sm.AMDGPU_REPO_NOTES)


def test_reference_official_tables():
    assert "gfx1201" in sm.RELEASES["6.4"]["official_radeon"]
    assert "gfx906" not in sm.RELEASES["6.4"]["official_radeon"]
    assert "gfx950" in sm.RELEASES["7.0"]["official_instinct"]
    assert "gfx906" in sm.RELEASES["6.1"]["deprecated"]
    for line in sm.RELEASE_LINES:
        assert "gfx1031" not in sm.RELEASES[line]["official_radeon"]  # never listed for Linux


def test_per_node_override_from_6_2():
    assert [line for line in sm.RELEASE_LINES if sm.RELEASES[line]["per_node_override"]][0] == "6.2"


def test_families_are_disjoint_and_sourced():
    seen = set()
    for family in sm.OVERRIDE_FAMILIES:
        assert family["source"] in sm.SOURCES
        assert not seen & set(family["members"])
        seen |= set(family["members"])
        for target in family["members"] + family["candidates"]:
            assert GFX_RE.match(target)
        # candidates share the major version (cross-major overrides are rejected by libhsakmt)
        majors = {GFX_RE.match(t).group(1) for t in family["members"] + family["candidates"]}
        assert len(majors) == 1, family["family"]
    assert not seen & set(sm.NO_RESCUE)


def test_no_rescue_and_chip_ids_are_sourced():
    for target, (reason, key) in sm.NO_RESCUE.items():
        assert GFX_RE.match(target) and reason and key in sm.SOURCES
    for chip, (target, what) in sm.CHIP_IDS.items():
        # a capture of the shared corpus, a fixture, or a public issue named owner/repo#number
        sourced = "corpus" in what or "fixtures/rocminfo" in what or re.search(r"\b[\w.-]+/[\w.-]+#\d+", what)
        assert isinstance(chip, int) and GFX_RE.match(target) and sourced, (hex(chip), what)
    assert sm.CHIP_IDS[0x7551][0] == "gfx1201" and "legacy-rocm-build#6155" in sm.CHIP_IDS[0x7551][1]


def test_module_is_pure_python38_data():
    with open(os.path.join(ROOT, "plugins", "module_utils", "support_matrix.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in imports)


# ---------------------------------------------------------------------------------------------
# torch_for
# ---------------------------------------------------------------------------------------------
TORCH_ROWS = [
    ("6.4", None, "rocm6.4", "2.9.1", "0.24.1", "2.9.1", True),
    ("6.4.1", None, "rocm6.4", "2.9.1", "0.24.1", "2.9.1", True),
    ("6.4", "2.8.0", "rocm6.4", "2.8.0", "0.23.0", "2.8.0", True),
    ("6.4", "2.9", "rocm6.4", "2.9.1", "0.24.1", "2.9.1", True),
    ("6.3", None, "rocm6.3", "2.8.0", "0.23.0", "2.8.0", True),  # the UNVERIFIED 2.9.x rows do not win
    ("6.3", "2.9", "rocm6.3", "2.9.1", "0.24.1", "2.9.1", False),  # torch_63_29: conflicting sources
    ("6.3.4", "2.7", "rocm6.3", "2.7.1", "0.22.1", "2.7.1", True),
    ("6.2", None, "rocm6.2.4", "2.6.0", "0.21.0", "2.6.0", True),
    ("6.2.4", "2.5.1", "rocm6.2", "2.5.1", "0.20.1", "2.5.1", True),
    ("6.2", "2.7.1", "rocm6.2.4", "2.7.1", "0.22.1", "2.7.1", False),
    ("6.1", None, "rocm6.1", "2.6.0", "0.21.0", "2.6.0", True),
    ("6.1.2", "2.4.0", "rocm6.1", "2.4.0", "0.19.0", "2.4.0", True),
    ("6.0", None, "rocm6.0", "2.3.0", "0.18.0", "2.3.0", True),
    ("6.0.2", "2.4", "rocm6.0", "2.4.0", "0.19.0", "2.4.0", False),
    ("5.7", None, "rocm5.7", "2.3.1", "0.18.1", "2.3.1", False),
    ("7.0", None, "rocm7.0", "2.10.0", "0.25.0", "2.10.0", True),
    ("7.0.2", "2.10", "rocm7.0", "2.10.0", "0.25.0", "2.10.0", True),
    ("7.1", None, "rocm7.1", "2.13.0", "0.28.0", "2.11.0", True),
    ("7.1", "2.10", "rocm7.1", "2.10.0", "0.25.0", "2.10.0", True),
    ("7.1.1", "2.13", "rocm7.1", "2.13.0", "0.28.0", "2.11.0", True),
    ("7.1", "2.12", "rocm7.1", "2.12.1", "0.27.1", "2.11.0", True),
    ("7.2", None, "rocm7.2", "2.13.0", "0.28.0", "2.11.0", True),
    ("7.2", "2.12", "rocm7.2", "2.12.1", "0.27.1", "2.11.0", True),
    ("7.2.4", "2.12.0", "rocm7.2", "2.12.0", "0.27.0", "2.11.0", True),
    ("7.2.1", "2.11", "rocm7.2", "2.11.0", "0.26.0", "2.11.0", True),
]


@pytest.mark.parametrize("rocm, torch, tag, version, vision, audio, verified", TORCH_ROWS)
def test_torch_for(rocm, torch, tag, version, vision, audio, verified):
    row = torch_for(rocm, torch)
    assert row["index_tag"] == tag
    assert row["index_url"] == "https://download.pytorch.org/whl/" + tag
    assert (row["torch"], row["torchvision"], row["torchaudio"]) == (version, vision, audio)
    assert row["verified"] is verified
    assert row["source"]


@pytest.mark.parametrize("rocm, torch, words", [
    ("6.2", "2.9.1", ["2.9.1", "6.2"]),
    ("6.4", "2.3.0", ["2.3.0", "6.4"]),
    ("7.0", "2.11", ["2.11", "7.0"]),
    ("7.2.1", "2.10.0", ["2.10.0", "7.2"]),
    ("7.3", None, ["7.3"]),
    ("6.4", "latest", ["latest"]),
    ("six", None, ["six"]),
])
def test_torch_for_missing_pair(rocm, torch, words):
    with pytest.raises(ValueError) as info:
        torch_for(rocm, torch)
    for word in words:
        assert word in str(info.value)


def test_numpy_pin_for_old_wheels():
    assert torch_for("6.0")["numpy_pin"] == "numpy<2"
    assert torch_for("6.4")["numpy_pin"] is None


def test_torch_rows_are_consistent():
    for row in sm.TORCH_WHEELS:
        assert row["source"] in sm.SOURCES
        assert row["index_tag"].replace("nightly/", "").startswith("rocm")
        assert row.get("companions", "torch_companions") in sm.SOURCES
        if not row["nightly"]:
            assert row["torch"] and row["torchvision"] and row["torchaudio"]
            torch_minor = tuple(int(p) for p in row["torch"].split(".")[:2])
            audio_minor = row["torchaudio"].split(".")[:2]
            if torch_minor >= (2, 12):
                # torchaudio 2.11 is the last torchaudio and serves torch >= 2.11 (pytorch/audio#4212, torchaudio_211)
                assert audio_minor == ["2", "11"], row
            else:
                assert audio_minor == row["torch"].split(".")[:2] or row["torch"] == "2.0.1"
            # torchvision 0.(torch minor + 15) from torch 2.1 on (2.10 -> 0.25, 2.13 -> 0.28)
            if torch_minor >= (2, 1):
                assert int(row["torchvision"].split(".")[1]) == torch_minor[1] + 15, row


# ---------------------------------------------------------------------------------------------
# The committed docs/support_matrix.md is what the generator prints
# ---------------------------------------------------------------------------------------------
def _generator():
    path = os.path.join(ROOT, "tests", "tools", "gen_support_matrix.py")
    spec = importlib.util.spec_from_file_location("gen_support_matrix", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_support_matrix_is_generated():
    gen = _generator()
    with open(os.path.join(ROOT, "docs", "support_matrix.md"), encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == gen.render(), "docs/support_matrix.md is stale: run python tests/tools/gen_support_matrix.py --write"
    assert gen.main(["--check"]) == 0


def test_torch_notes_carry_the_7x_facts():
    notes = " ".join(sm.TORCH_NOTES.split())
    assert "torchaudio_211" in notes and "pytorch/pytorch#189194" in notes and "torch_63_29" in notes
    assert "TheRock's pairing" not in notes  # torchaudio 2.11 for torch >= 2.11 is sourced now


def test_therock_preview_facts_are_kept_and_rocm_pip_supersedes_them():
    rock = sm.THEROCK
    assert "ROCM_PIP" in rock["status"]
    assert all(key in sm.SOURCES for key in rock["sources"])
    assert {key for _reason, key in rock["reasons"]} <= set(rock["sources"])
    assert all(url.startswith("https://") for _what, url in rock["indexes"])
    assert set(rock["companions"]) == {"2.11", "2.12", "2.13", "2.14"}
    assert all(audio == "2.11" for _vision, audio in rock["companions"].values())
    # download.pytorch.org's rows stay classic ROCm lines; the pip runtime has its own table
    assert all(row["index_tag"].replace("nightly/", "").startswith("rocm") for row in sm.TORCH_WHEELS)
    assert sm.ROCM_PIP["index_url"] == "https://stable.repo.amd.com/rocm/whl-next/"
    text = _generator().render()
    assert "## ROCm user space: apt or pip" in text
    assert "https://stable.repo.amd.com/rocm/whl-next/" in text
    for row in sm.ROCM_PIP_TARGETS:
        assert "| %s | %s | %s |" % (", ".join(row["targets"]), row["family"], row["status"]) in text


def test_docs_mention_matrix_version_and_every_line():
    text = _generator().render()
    assert sm.MATRIX_VERSION in text
    for line in sm.RELEASE_LINES:
        assert "| %s |" % line in text


def test_default_rocm_line_is_the_newest_radeon_line_with_a_stable_index():
    # 7.2's Radeon list is unverified (compat_72), so 7.1 is the newest line the rule accepts.
    assert sm.default_rocm_line() == "7.1"
    assert sm.RELEASES["7.2"]["official_verified"] is False


def test_rocm_repo_defaults_carry_the_default_line():
    import yaml

    with open(os.path.join(ROOT, "roles", "rocm_repo", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    assert defaults["rocm_repo_rocm_version"] == sm.default_rocm_line()


@pytest.mark.parametrize("path, text", [
    ("README.md", "Default ROCm line: **%s**"),
    ("roles/rocm_repo/README.md", "### Why ROCm %s by default"),
    ("roles/rocm_repo/README.md", "| `rocm_repo_rocm_version` | `\"%s\"` |"),
])
def test_readmes_name_the_default_line(path, text):
    with open(os.path.join(ROOT, path)) as handle:
        assert text % sm.default_rocm_line() in handle.read()


def test_llamafactory_pins_the_recorded_liger_kernel():
    import yaml

    with open(os.path.join(ROOT, "roles", "llamafactory", "vars", "main.yml")) as handle:
        role_vars = yaml.safe_load(handle)
    assert role_vars["_llamafactory_liger_kernel_version"] == sm.liger_kernel_release()["version"] == "0.8.5"
    with pytest.raises(ValueError, match="liger-kernel 0.9.0 is not recorded"):
        sm.liger_kernel_release("0.9.0")


def test_liger_model_types_hold_the_measured_families_and_no_radeon_target_is_claimed():
    assert {"qwen2", "llama"} <= set(sm.LIGER_MODEL_TYPES) == set(sm.VOCABULARY["liger_model_types"])
    assert sm.LIGER_KERNEL["targets"] is None and sm.LIGER_KERNEL["verified"] is False
    assert "LlamaFactory/issues/10511" in sm.LIGER_KERNEL["source"]
    assert "enable_liger_kernel" in sm.VOCABULARY["runner_managed_keys_by_plan"]

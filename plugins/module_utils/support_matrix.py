# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one versioned data module of radeonlab.llm: GPU support per ROCm line, PyTorch wheels, SDPA kernels, bitsandbytes,
Liger-Kernel.

Pure data plus two tiny lookups; no Ansible import, Python 3.8 compatible. Every entry carries
``source`` (a section of the shared reference ``rocm_facts.md`` or a public URL) and ``verified``
(False where the reference says UNVERIFIED or where the entry is an inference, explained in
``notes``). Decisions (which override, which GPU is visible) live in ``gfx.py``; README and
``docs/support_matrix.md`` are generated from this file by ``tests/tools/gen_support_matrix.py``.

Bump ``MATRIX_VERSION`` whenever any entry changes.
"""

from __future__ import annotations

MATRIX_VERSION = "2026.12.13"

# ---------------------------------------------------------------------------------------------
# Sources (short keys used by the entries below)
# ---------------------------------------------------------------------------------------------
SOURCES = {
    "riol": "rocm_facts.md §2: RIOL reference/system-requirements.rst per branch (docs/6.0.0 ... docs/7.0)",
    "riol_never": "rocm_facts.md §2: 'Never listed for Linux' (RX 6800/6900, gfx1031/1032, gfx1102, gfx803)",
    "overrides": "rocm_facts.md §2: HSA_OVERRIDE_GFX_VERSION common mappings (community)",
    "libhsakmt": (
        "rocm_facts.md §2 + ROCm/ROCR-Runtime@2f2de556 libhsakmt/src/topology.c, topology_sysfs_get_node_props(): "
        "getenv(\"HSA_OVERRIDE_GFX_VERSION_%d\", node_id) before HSA_OVERRIDE_GFX_VERSION, sscanf \"%u.%u.%u%c\", "
        "major<=63, minor<=255, step<=255"
    ),
    "per_node": (
        "https://github.com/ROCm/ROCT-Thunk-Interface/pull/104 (per-node override, example _1=11.0.0 _2=10.3.0 with CPU "
        "as node 0); AMD maintainer: 'This feature got merged back in ROCm 6.2' "
        "(ROCm/legacy-rocm-build#5069 = ROCm/ROCm#5069, 2025-07-21)"
    ),
    "cross_major": (
        "https://github.com/ROCm/rocm-systems/pull/5686 (libhsakmt rejects cross-major-version overrides; "
        "empty HSA_OVERRIDE_GFX_VERSION falls back to gfx000)"
    ),
    "igp": "rocm_facts.md §1 prerequisites: 'Disable integrated graphics (IGP)... runtime may crash... even if told to omit it'",
    "visibility": "rocm_facts.md §2 visibility vars (rocm.docs.amd.com/en/docs-6.1.2/conceptual/gpu-isolation.html)",
    "rocblas": (
        "rocBLAS CMakeLists.txt TARGET_LIST_ROCM_5.7 / TARGET_LIST_ROCM_6.0 / TARGET_LIST_ROCM_6.2.4 and later "
        "ROCM_DEFAULT_GFX_LIST (https://github.com/ROCm/rocBLAS/blob/develop/CMakeLists.txt, lists quoted in public build notes)"
    ),
    "torch_arch": (
        "PYTORCH_ROCM_ARCH of the PyTorch wheel builders: .ci/docker/manywheel/build_docker.sh "
        "(gfx900;gfx906;gfx908;gfx90a;gfx1030;gfx1100 +gfx942 for ROCm>=6.0) and .ci/docker/libtorch/build.sh "
        "(ROCm 6.4.4/7.0.2 builds: +gfx1101;gfx1102;gfx1200;gfx1201;gfx950;gfx1150;gfx1151) in https://github.com/pytorch/pytorch"
    ),
    "torch_index": "rocm_facts.md §4 (pytorch.org/get-started/previous-versions; pytorch/pytorch.github.io)",
    "torch_companions": "https://pytorch.org/get-started/previous-versions/ (torch/torchvision/torchaudio triplets)",
    "numpy": "rocm_facts.md §4 gotchas (numpy 2.x vs ROCm wheels; LF <=0.9.3 pins numpy<2.0.0)",
    "gfx1151": (
        "rocm_facts.md §2 (gfx1151 -> 11.5.1 or 11.0.0, 3rd-party); AMD on ROCm/legacy-rocm-build#5339 (2026-03-25): ROCm on "
        "Radeon/Ryzen calls out Strix Halo support; project-nomad PR #1134: gfx1150/gfx1151 in the bundled rocBLAS list, gfx1103 not"
    ),
    "amd_rdna35": (
        "AMD, 'AMD RDNA3.5 system optimization' (ROCm/rocm-docs docs/reference/system-optimization/rdna3-5.rst, stored "
        "commit 70b8d6e, read 2026-12-07): the Ryzen AI Max (gfx1151) kernel fixes gregkh/linux@7f26af7 and @7445db6, "
        "minimum kernels, the ROCm release x kernel table; GTT defaults to about 50 % of system RAM; the shared limit is "
        "the TTM page limit /sys/module/ttm/parameters/pages_limit (pages, not bytes); a small carve-out (0.5 GB) and a "
        "larger TTM/GTT limit are recommended"
    ),
    "dkms_3701": (
        "https://github.com/ROCm/ROCm/issues/3701 (opened 2024-09-11): amdgpu-dkms 1:6.8.5.60200 (ROCm 6.2) fails on "
        "Ubuntu 24.04's 6.8.0-44, drm_dp_add_payload_part2"
    ),
    "dkms_3701_fix": "https://github.com/ROCm/ROCm/issues/3701 (AMD, kentrussell, 2024-09-20): '6.2.1 has this resolved'",
    "dkms_4619": "https://github.com/ROCm/ROCm/issues/4619 (2025-04-13): the 6.4 driver on kernels 6.13/6.14, 'struct drm_driver' has no member named 'date'",
    "dkms_4619_fix": "https://github.com/ROCm/ROCm/issues/4619 (AMD 2025-07-21, users 2025-07-22): fixed in 6.4.2 for the 24.04 HWE 6.14 kernel",
    "dkms_amdgpu187": "https://github.com/ROCm/amdgpu/issues/187 (2025-06-15): the 6.4.1 driver on Ubuntu 25.04's 6.14.0-15",
    "dkms_5085": "https://github.com/ROCm/ROCm/issues/5085 (AMD, harkgill-amd, 2025-07-28): the 6.4.2 driver is compatible with 6.11 and 6.14",
    "dkms_5109": "https://github.com/ROCm/ROCm/issues/5109 (2025-07-28; AMD 2025-07-29): kernel 6.15 not supported",
    "dkms_5110": "https://github.com/ROCm/ROCm/issues/5110 (2025-07-28; AMD 2025-07-29): kernel 6.16 not supported",
    "dkms_5624": "https://github.com/ROCm/ROCm/issues/5624 (2025-11-04): 6.4.4's driver 6.12.12-2202139 fails on 6.17.0-6",
    "dkms_5553": "https://github.com/ROCm/ROCm/issues/5553 (2025-10-21): amdgpu 6.14.14 (ROCm 7.0.2) fails on 6.17, __dma_fence_is_later",
    "dkms_5624_c5": (
        "https://github.com/ROCm/ROCm/issues/5624 (AMD, lucbruni-amd, 2026-01-14): 7.1.1's driver installs on 6.17.0-5/-8"
        " (7.1.0's built on 6.17.0-7: a user, 2025-11-04)"
    ),
    "dkms_5624_c11": "https://github.com/ROCm/ROCm/issues/5624 (AMD, lucbruni-amd, 2026-02-11): 7.2's driver builds on 6.17.0-5/-8/-14",
    "dkms_5905": "https://github.com/ROCm/ROCm/issues/5905 (2026-01-26): 6.16.13-2278356 (30.30) fails on mainline 6.18.7, Ubuntu 25.10",
    "dkms_amdgpu209": "https://github.com/ROCm/amdgpu/issues/209 (2026-03-02, open): 6.16.13.30300000-2278356 fails on 6.18.14 and 6.19.4",
    "dkms_6143_user": "https://github.com/ROCm/ROCm/issues/6143 (a user, 2026-04-27): Debian 13.4, 30.30 builds on 6.17.13, fails on 6.18.4 and 6.19.11",
    "dkms_6193": (
        "https://github.com/ROCm/ROCm/issues/6193 (2026-04-29, 2026-06-07): 1:6.16.13.30300100 and .30300400 fail on "
        "Ubuntu 26.04's 7.0.0-14/-15/-22, pci_resize_resource; AMD 2026-05-11: 26.04 not supported yet"
    ),
    "dkms_5111": "https://github.com/ROCm/ROCm/issues/5111 (2026-08-01): 6.16.13-2341068 fails on Debian 13's 6.12.100+deb13, pci_resize_resource",
    "amd_compat_640": (
        "AMD's compatibility-matrix.rst (ROCm/ROCm, stored copy with columns 7.1.0 / 7.0.2 / 6.4.0): 6.4.0 on Ubuntu "
        "24.04.2 (6.8 GA, 6.11 HWE) and 22.04.5 (5.15 GA, 6.8 HWE)"
    ),
    "amd_compat_710": (
        "AMD's compatibility-matrix.rst (ROCm/ROCm, stored copy with columns 7.1.0 / 7.0.2 / 6.4.0): 7.0.2 and 7.1.0 on "
        "Ubuntu 24.04.3 (6.8 GA, 6.14 HWE) and 22.04.5 (5.15 GA, 6.8 HWE)"
    ),
    "amd_relnotes_721": "AMD's ROCm 7.2.1 release notes (stored copy): Ubuntu 24.04.4 (6.8 GA, 6.17 HWE) added, 24.04.3 ends",
    "amd_sysreq_724": "AMD's install-on-linux system requirements, docs-7.2.4 (stored copy): Ubuntu 24.04.4 (6.8 GA, 6.17 HWE), 22.04.5 (5.15 GA, 6.8 HWE)",
    "relnotes_641": (
        "AMD's ROCm 6.4.1 release notes (rocm.docs.amd.com about/release-notes, stored copy): 'ROCm 6.4.1 introduces "
        "support for the RDNA4 architecture-based Radeon AI PRO R9700, Radeon RX 9070, Radeon RX 9070 XT, Radeon RX 9070 "
        "GRE, and Radeon RX 9060 XT GPUs ... It also adds support for RDNA3 architecture-based Radeon PRO W7700 and "
        "Radeon RX 7800 XT GPUs', on Ubuntu 24.04.2, 22.04.5, RHEL 9.6, 9.5, 9.4"
    ),
    "amd_strix_inbox": (
        "https://github.com/ROCm/legacy-rocm-build/issues/6143 (AMD, amd-nicknick, 2026-05-05): 'For Strix Halo, we "
        "recommend using OEM kernel in-tree modules, NOT amdgpu-dkms'; #6121 (AMD, schung-amd, 2026-04-09): the Strix Halo "
        "install instructions, 'as the DKMS driver is not currently supported there' (amdgpu-install --no-dkms)"
    ),
    "ttm_pages": (
        "noamsto/nix-amd-ai#42 (2026-08-27, measured on a Ryzen AI MAX+ 395, kernel 7.1.0): ttm.pages_limit=25165824 gives "
        "mem_info_gtt_total 103079215104 = 25165824 x 4096 bytes; AMD's amd-ttm example: 26214400 pages = 100 GB"
    ),
    "amd_ttm_tool": (
        "AMD's amd-ttm, the tool amd_rdna35 documents for the TTM limit: superm1/amd-debug-tools src/amd_debug/ttm.py "
        "(stored commit 03a3130) and common.py: reads /sys/module/ttm/parameters/pages_limit; '--set <GB>' writes "
        "'options ttm pages_limit=<pages>' to /etc/modprobe.d/ttm.conf with pages = int(GB x 1024^3 / 4096), refuses more "
        "than MemTotal (/proc/meminfo), asks before more than 90 % of it (MAX_MEMORY_PERCENTAGE), runs update-initramfs -u "
        "when an initramfs carries gpu/drm/ttm/ttm.ko, then asks for the reboot; '--clear' removes the file"
    ),
    "ttm_amdttm": (
        "https://github.com/ROCm/legacy-rocm-build/issues/5562 (AMD, harkgill-amd, 2025-10-27): the in-kernel amdgpu "
        "driver Strix Halo uses takes the kernel's ttm module (/sys/module/ttm/parameters/pages_limit, boot parameter "
        "ttm.pages_limit, what amd-ttm sets); amdgpu-dkms brings its own amdttm module (amdttm.pages_limit); "
        "ROCm/legacy-rocm-build#3648 (AMD, 2024-08-27): /sys/module/amdttm/parameters/pages_limit under amdgpu-dkms"
    ),
    "ttm_before_load": (
        "https://github.com/ROCm/rocm-systems/issues/351 (superm1, AMD, 2025-08-14): the TTM page limit 'needs to be done "
        "before TTM and amdgpu are loaded', as a module parameter on the kernel command line or in /etc/modprobe.d; "
        "48 GB = int(48 x 1024^3 / 4096) = 12582912 pages"
    ),
    "ttm_params": (
        "Linux drivers/gpu/drm/ttm/ttm_tt.c: pages_limit 'Limit for the allocated pages' (ulong, 0644); ttm_pool.c: "
        "page_pool_size 'Number of pages in the WC/UC/DMA pool' (the write-combined/uncached pages TTM keeps for reuse; our "
        "reading: a cache, not the limit). "
        "amd-ttm writes pages_limit only; that AMD's docs tell to set ttm.page_pool_size as well: UNVERIFIED (third-party "
        "notes cite a ROCm 7.2.0 page; the stored copies of AMD's pages name pages_limit only)"
    ),
    "kernel_gttsize": (
        "https://docs.kernel.org/gpu/amdgpu/module-parameters.html (also the 6.15 and 6.16 pages): amdgpu gttsize 'The "
        "default is -1 (Use value specified by TTM). This parameter is deprecated and will be removed in the future.'; "
        "amdgpu logs 'Configuring gttsize via module parameter is deprecated, please use ttm.pages_limit' when it is set "
        "(kernel logs quoted in public reports, e.g. HarbourMasters/Shipwright#6048)"
    ),
    "therock": "rocm_facts.md §2: 3rd-party claim that on TheRock runtime (7.14+/10.x) setting the override breaks HSA init",
    "corpus": "shared corpus rocminfo/INDEX.md + expected.json (Chip ID lines of the captures)",
    "llvm_names": "rocm_facts.md §2 LLVM names (llvm-project PRs 170469/155577)",
    "bnb_wheel": (
        "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl from PyPI (43 139 553 bytes), read 2026-12-01: it ships "
        "libbitsandbytes_rocm64/70/71/72/714/715.so beside the CUDA builds; the targets are those of each library's "
        "compressed code-object bundles (CCOB, zstd; 'amdgcn-amd-amdhsa--gfx...' entries)"
    ),
    "bnb_docs": "https://huggingface.co/docs/bitsandbytes/v0.50.2/en/installation.md (AMD ROCm: installation via PyPI)",
    "bnb_rdna_cdna": (
        "https://github.com/unslothai/unsloth/pull/4161 (4-bit on RDNA from bitsandbytes 0.49.0, bitsandbytes#1748; "
        "on CDNA from 0.49.2, bitsandbytes#1887); https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1857 "
        "(QLoRA 4-bit on ROCm documented as supported; CDNA's default 4-bit block is 128)"
    ),
    "bnb_050": (
        "https://github.com/unslothai/unsloth/pull/7535 (0.50.0 is the first PyPI release with the complete ROCm 4-bit "
        "path: bitsandbytes#1887, #1979 fused 4-bit GEMM validated on gfx1100/gfx1201/gfx1151, #2012 RDNA3/RDNA4 "
        "workgroup fix; <= 0.49.2 returned NaN)"
    ),
    "aotriton_matrix": (
        "ROCm/aotriton README.md 'PyTorch Consumption & Compatibility' (tag 0.13b, commit 30ae9671): PyTorch upstream "
        "2.3 -> 0.4b, 2.4 -> 0.6b, 2.5 -> 0.7b, 2.6 -> 0.8b, 2.7 -> 0.9.2b, 2.8 -> 0.10b, 2.9 -> 0.11b; '2.2 and earlier: "
        "N/A, no support'"
    ),
    "aotriton_src": (
        "ROCm/aotriton at each release tag: v2src/util.cc / v3src/util.cc (LazyArch string_to_arch / string_to_classifier: "
        "the targets the library recognises; isArchExperimentallySupported(): the experimental ones) and CMakeLists.txt "
        "TARGET_GPUS / AOTRITON_TARGET_ARCH (the targets kernel images are built for)"
    ),
    "sdpa_gate": (
        "pytorch/pytorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, check_flash_attention_hardware_support() and "
        "check_mem_efficient_hardware_support(): aotriton::v2::flash::check_gpu() must pass, and with AOTriton >= 0.9 "
        "aotriton::isArchExperimentallySupported() targets need TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 (read once per "
        "process); else SDPA falls back to its math kernel"
    ),
    "sdpa_navi31": (
        "https://github.com/pytorch/pytorch/pull/134498 and #135869 (AOTriton 0.7b, PyTorch 2.5): 'EXPERIMENTAL Navi31 "
        "support... Disabled by default at PyTorch level, user needs to enable Navi31 support with env var "
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1' (sdp_utils.cpp: arch == \"gfx1100\")"
    ),
    "sdpa_010": (
        "https://github.com/pytorch/pytorch/pull/156499 (AOTriton 0.10b): 'Official support of gfx950/gfx1201; Experimental "
        "support of gfx1101/gfx1151/gfx1150/gfx1200'; ROCm/legacy-rocm-build#5404: 0.10b lacks the classifier commit "
        "that enables gfx1151 (ROCm/aotriton 0e7d518e, first in 0.11b)"
    ),
    "sdpa_011": (
        "https://github.com/pytorch/pytorch/pull/161754 (AOTriton 0.11b): 'gfx1100 target (Radeon RX 7000 Series) is moved "
        "back to experimental status'; aotriton.cmake downloads image packs per PYTORCH_ROCM_ARCH"
    ),
    "sdpa_011_nan": (
        "https://github.com/ROCm/aotriton/pull/123 (Finalize 0.11b, CAVEAT): 'recent Triton compiler breaks the code "
        "generation on gfx1100 (Navi31/7900XT) GPUs, and causes massive accuracy problems and even NaNs. gfx1100 is moved "
        "backed to experimental in this release. For Navi3x users, it is recommended to keep using 0.10b series.'; fixed "
        "in 0.11.1b (ROCm/aotriton#139, 'Move Navi31 Out of Experimental')"
    ),
    "sdpa_0111": (
        "https://github.com/ROCm/aotriton/pull/139 (0.11.1b: 'Move Navi31 Out of Experimental', gfx1103 added); PyTorch bump "
        "https://github.com/pytorch/pytorch/pull/170315 (2025-12-12)"
    ),
    "sdpa_0112": (
        "https://github.com/pytorch/pytorch/pull/174105 (AOTriton 0.11.2b: gfx1151/1152/1153); "
        "https://github.com/huggingface/kernels/pull/401 ('ROCm support for Torch 2.11 ... Add aotriton 0.11.2b')"
    ),
    "sdpa_rdna2": (
        "https://github.com/ROCm/aotriton/issues/118 ('[Feature]: Add Navi2x Support', RX 6800 XT, open): no AOTriton "
        "release has gfx103x kernels, so RDNA2 (gfx1030, and gfx1031-1036 under 10.3.0) runs SDPA's math kernel"
    ),
    "compat_csv": (
        "AMD's compatibility-matrix-historical-6.0.csv (ROCm/ROCm docs/compatibility, read in the fork copy "
        "hanzoai/ROCm@0057200c, columns 6.0.0 ... 7.1.0): operating systems and GPU / LLVM targets per release; "
        "Debian, SLES, Oracle and Azure Linux carry Instinct-only footnotes"
    ),
    "radeon_os_700": (
        "rocm_facts.md §1 (ROCm 7.0 footnote: Radeon / Radeon PRO 'only supported on Ubuntu 24.04.3, Ubuntu 22.04.5, "
        "and RHEL 9.6'); ROCm/legacy-rocm-build docs/compatibility/includes/system-radeon.rst @78d582d1 (7.1-era "
        "Radeon table: Ubuntu 24.04.3, 22.04.5, RHEL 10.1/10.0; no Debian)"
    ),
    "rocm_releases": (
        "https://github.com/ROCm/rocminfo/releases and https://github.com/ROCm/rccl/releases (rocm-7.0.0 ... rocm-7.2.4 "
        "tags: 7.0.0 2025-09-16, 7.0.2 10 Oct, 7.1.0 30 Oct, 7.1.1 26 Nov, 7.2.0 2026-01-21, 7.2.1 24 Mar, 7.2.2 14 Apr, "
        "7.2.3 04 May (rccl) / 05 May (rocminfo), 7.2.4 28 May 'Latest'); "
        "api-evangelist/advanced-micro-devices changelog @7215df2e (from api.github.com/repos/ROCm/ROCm/releases, "
        "generated 2026-08-30; GitHub releases rocm-7.1.0 2025-11-03, 7.2.0 2026-01-23, 7.2.1 2026-03-25, 7.2.3 "
        "2026-05-04); https://github.com/ROCm/legacy-rocm-build/releases/tag/rocm-7.2.2 ('quality release'); "
        "pytorch/test-infra#7430 (2025-10-31): 'ROCm 7.1 released 10/30'. Read 2026-12-04 "
        "(docs/research/current_stack_sources.md §1)"
    ),
    "amdgpu_versions": (
        "ROCm/amdgpu-docs docs/release/versions.rst @14a89b8e (30.10.0 2025-09-16, 30.10.1 2025-09-17, 30.10.2 "
        "2025-10-10, 30.20.0 2025-10-30, 30.20.1 2025-11-26, 30.30.0 2026-01-21: each the date of a ROCm release); "
        "https://github.com/ROCm/amdgpu-docs/pull/97 (conf.py amdgpu_url_version '30.30.3' with rocm_version "
        "'7.2.3'); rocm_facts.md §1 (30.10 ... 30.20.1 from 3rd-party scripts, ROCm/ROCm#5566); 3rd-party apt logs "
        "and scripts pairing rocm/apt/7.2 with amdgpu/30.30/ubuntu"
    ),
    "torch_index_7x": (
        "https://github.com/pytorch/test-infra/pull/7430 (2025-10-31, binary matrix -> ROCm 7.0, 7.1); test-infra#7763 "
        "('Move ROCm 7.0,7.1->7.1,7.2'); test-infra#8451 (2026-08-05: release ROCM_ARCHES ['7.1', '7.2']); "
        "test-infra#8498 (2026-08-11: release/2.14 builds ['7.2', '7.14'], the release channel 'still describe[s] GA "
        "2.13' = ['7.1', '7.2']); 3rd-party installs torch 2.10.0+rocm7.1 / torchvision 0.25.0+rocm7.1 "
        "(invoke-ai/InvokeAI#9297, 2026-06-23) and torch 2.11.0 / 2.12.0 (torchvision 0.27.0) from whl/rocm7.2"
    ),
    "torch_companions_7x": (
        "torch==2.10.0 torchvision==0.25.0 torchaudio==2.10.0 and torch==2.11.0 torchvision==0.26.0 torchaudio==2.11.0 "
        "(3rd-party install lines); ROCm/TheRock RELEASES.md @89553ce3 compatibility table: torch 2.12 / 2.13 with "
        "torchvision 0.27 / 0.28 and torchaudio 2.11; pytorch/test-infra release/release_versions.sh @61a77570 "
        "(torch 2.12.1: torchvision 0.27.1, torchaudio 2.11.0); torchaudio stops at 2.11, which serves torch >= 2.11 "
        "(torchaudio_211)"
    ),
    "compat_72": (
        "AMD's compatibility-matrix.rst with columns '7.2.3', '7.2.2/7.2.1', '7.1.0' (index file id 55060345366, read "
        "2026-12-04): Ubuntu 24.04.3 / 22.04.5, Debian 13 / 12, RHEL 10.1, 10.0, 9.7, 9.6, 9.4, 8.10, SLES 15 SP7, "
        "Oracle Linux 10/9/8, Rocky Linux 9; targets gfx950, gfx1201, gfx1200, gfx1101, gfx1100, gfx1030, gfx942, "
        "gfx90a, gfx908; amdgpu '30.30.x, 30.20.x, 30.10.x, 6.4.x'; PyTorch '2.9.1, 2.8.0, 2.7.1' (AMD's own builds). "
        "Footnote: 'Some GPUs have limited operating system support', pointing at install-on-linux docs-7.2.2 "
        "system-requirements.html#supported-gpus (no stored copy: the Radeon OS list stays UNVERIFIED)"
    ),
    "compat_70_footnotes": (
        "AMD's RDNA footnotes, two variants: ROCm 7.0.0 (index file id 10950866315): 'R9700 ... RX 9070 ... RX 9060 XT "
        "... RX 7800 XT, RX 7700 XT, PRO W7700 ... PRO W6800 ... are only supported on Ubuntu 24.04.3, Ubuntu 22.04.5, "
        "and RHEL 9.6'; compatibility-matrix.rst with columns 7.1.0, 7.0.2, 6.4.0 (index file id 10950375436): 'For "
        "ROCm 7.0.x ... only supports Ubuntu 24.04.3, Ubuntu 22.04.5, RHEL 10.0, and RHEL 9.6' (the historical CSV "
        "variant adds RHEL 9.4), the same footnote on the 7.1.0 column; Debian 13 'supported only on AMD Instinct "
        "MI300X' from 7.0.2. Read 2026-12-04"
    ),
    "amdgpu_7221": (
        "https://github.com/ROCm/legacy-rocm-build/issues/6156 (2026-04-17): 'https://repo.radeon.com/amdgpu/30.30.1/ubuntu "
        "for ROCm 7.2.1 is accessible'; amdgpu-install_7.2.2.70202-1 writes amdgpu/30.30.2/ubuntu, which returned 404; "
        "AMD (harkgill-amd): 'the decision was made to temporarily use the https://repo.radeon.com/amdgpu/30.30.1/ubuntu "
        "on release hence the sed commands' in the quick-start, and 30.30.2 'was just recently made available as "
        "well so the repo should work fine OOB now'"
    ),
    "amdgpu_aliases": (
        "https://github.com/ROCm/legacy-rocm-build/issues/5881 (2026-01-22) and #5968 (2026-02-15, Ubuntu 24.04.4): "
        "amdgpu-install 7.2 writes repo.radeon.com/amdgpu/7.2/ubuntu, 'noble Release 404 Not Found'; #5625 "
        "(2025-11-06, 3rd-party): 'AMD appears to have forgotten to symlink the 7.1 folder to 30.20 ... 7.0.2 being "
        "identical to 30.10'"
    ),
    "amdgpu_epoch_31": (
        "https://github.com/ROCm/legacy-rocm-build/issues/6155 (RDNA4 / 1002:7551 firmware mismatch; 2026-04-28: "
        "Ubuntu 24.04.4, 'amdgpu-dkms: 1:6.19.0.31200000-2307534.24.04', 'amdgpu-dkms-firmware: "
        "31.20.0.0.31200000-2307534.24.04', 'AMD Radeon AI PRO R9700 / PCI ID 1002:7551')"
    ),
    "test_infra_matrix": (
        "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py ROCM_ARCHES_DICT['release'] at each go-live "
        "commit (snapshot @61a77570, 2026-08-21): 2.9.0 f563b660 (2025-10-14) and 2.9.1 06789010 (2025-11-11): 6.3, "
        "6.4; 2.10.0 e8208cf2 (2026-01-20, 'Release 2.10 go live'): 7.0, 7.1; 2.11.0 0cd5e78a (2026-03-23), 2.12.0 "
        "626d4e70 (2026-05-12), 2.12.1 77e179c3 (2026-06-17), 2.13.0 6d36e31f (2026-07-08, 'Release 2.13 go live'): "
        "7.1, 7.2. Companions: tools/analytics/validate_pypi_staging.py PACKAGE_RELEASES (2.10.0: 0.25.0 / 2.10.0), "
        "release/release_versions.sh (2.11.0: 0.26.0 / 2.11.0 at 0cd5e78a; 2.12.1: 0.27.1 / 2.11.0 at HEAD). The "
        "x.y.z lists inside each index were not read"
    ),
    "torchaudio_211": (
        "https://github.com/pytorch/audio/pull/4212 ('clarify torchaudio 2.11 supports torch>=2.11'; torchaudio "
        "stops at 2.11); from 2.9 torchaudio declares no torch dependency (vast-ai/base-image#291, 3rd-party)"
    ),
    "torch_63_29": (
        "Conflicting: test_infra_matrix (the 2.9.0 / 2.9.1 release matrices list ROCm 6.3 and 6.4) and a 3rd-party "
        "index listing with torch-2.9.1+rocm6.3-...-manylinux_2_28_x86_64.whl (index file ids 9620688792, "
        "56781625431) against rocm_facts.md §4 ('2.9.0/2.9.1: rocm6.4 only')"
    ),
    "torch_213_notes": (
        "PyTorch 2.13.0 release notes (github.com/pytorch/pytorch/releases/tag/v2.13.0, read in a 3rd-party copy "
        "ingested 2026-07-10, index file id 55729114164): 'ROCm gains AOTriton 0.12b with native HIP CMake'; tracked "
        "regression https://github.com/pytorch/pytorch/issues/189194: torch==2.13.0+rocm7.2 breaks torch.compile on "
        "CPU when no GPU is visible ('Can't detect vectorized ISA for CPU'), 2.12.1+rocm7.2 does not"
    ),
    "sdpa_torch_aotriton": (
        "https://github.com/huggingface/kernels/pull/401 review comment (2026-03-26): 'Torch 2.10 and 2.11 use "
        "aotriton 0.11.1 and 0.11.2 respectively'"
    ),
    "sdpa_012": (
        "AOTriton 0.12b in torch 2.13: torch_213_notes and https://github.com/NixOS/nixpkgs/pull/562330 ('Aligns with "
        "pytorch v2.13.0 expectation ... cmake/External/aotriton.cmake#L12'); ROCm/aotriton tag 0.12b (2026-05-18) "
        "v3src/util.cc isArchExperimentallySupported(): 0x1150 0x1152 0x1153 0x1101 0x1102 0x1103 0x1200 0x1250, tag "
        "message '[gpu_targets] Move gfx1100 and gfx1151 out of experimental'; the switch is still "
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 (maintainer on ROCm/TheRock#1315, 2025-08-28)"
    ),
    "therock_pip": (
        "ROCm/TheRock @89553ce3 (2026-08-22): RELEASES.md (rocm, rocm-sdk-core, rocm[libraries] -> "
        "rocm-sdk-libraries, rocm[devel], rocm[device-gfx<target>] -> rocm-sdk-device-<target>; torch[device-gfx1201] "
        "-> amd-torch-device-gfx1201; 'The torch packages depend on rocm[libraries]'; torch 2.11/2.12/2.13/2.14 with "
        "torchaudio 2.11 and torchvision 0.26/0.27/0.28/0.29), docs/packaging/versioning.md (stable "
        "'2.9.0+rocm7.10.0', nightly '2.9.0+rocm7.10.0a20251124'), docs/development/s3_buckets.md (stable multi-arch "
        "https://repo.amd.com/rocm/whl-multi-arch/), build_tools/setup_venv.py (at tag therock-7.14 @418cd5f6 "
        "'stable': 'https://repo.amd.com/rocm/whl/' + <family>/, which 3rd-party installs use as .../gfx1151/, "
        ".../gfx1150/, .../gfx103X-all/; at HEAD https://stable.repo.amd.com/rocm/whl-next/), version.json @HEAD "
        "'10.1.0'"
    ),
    "therock_status": (
        "https://github.com/ROCm/legacy-rocm-build/releases/tag/rocm-7.14.0 (2026-07-16, 'transitions ROCm to "
        "TheRock'; 7.9-7.13 were 'technology preview', release therock-7.9.0); AMD's transition guide "
        "https://rocm.docs.amd.com/en/docs-7.14.0/_sources/about/transition-guide-TheRock.md: 7.14.0 is 'a preview "
        "release built on our new build system'; 3rd-party ggml-org/llama.cpp release b10356: 'the first production "
        "release using TheRock build system' (conflicting)"
    ),
    "therock_driver": (
        "ROCm/TheRock RELEASES.md @89553ce3: 'We recommend installing the latest AMDGPU driver on Linux'; AMD engineer "
        "on ROCm/TheRock#2465 (2025-12-09): nightlies 'should work with the latest amdgpu-dkms/Adrenaline driver'; "
        "31.x drivers of that stream: 31.20 (amdgpu_epoch_31), 31.40.1 (ROCm/legacy-rocm-build PR #6581, 2026-08-06), "
        "amdgpu-install/31.50 (ROCm/TheRock#7712). Which 31.x pairs with 7.14 / 10.x: UNVERIFIED"
    ),
    "rocm_pip_production": (
        "AMD's transition guide, docs-10.0.0 (https://rocm.docs.amd.com/en/docs-10.0.0/_sources/about/"
        "transition-guide-TheRock.md, read 2026-12-07): 'The transition from the legacy ROCm release stream began with "
        "ROCm Core SDK 7.14.0, the first production release. ROCm 10.0.0 is the latest production release.' (its 7.14.0 "
        "page had called 7.14.0 'a preview release': therock_status); ROCm Core SDK 10.0.0 release notes at "
        "rocm.docs.amd.com/en/latest, tag therock-10.0 of ROCm/rocm-systems dated 2026-08-26 (api-evangelist/"
        "advanced-micro-devices changelog @7215df2e, generated 2026-08-30)"
    ),
    "rocm_pip_install_1000": (
        "AMD's 'Install ROCm' page for 10.0.0, ROCm/rocm-docs docs/install/include/200-install.rst @0c31064a (read "
        "2026-12-07): pip install --index-url https://stable.repo.amd.com/rocm/whl-next/ "
        "\"rocm[libraries,device-gfx<target>]==10.0.0\" for gfx1201, gfx1200, gfx1100, gfx1101, gfx1102, gfx1103, gfx1030, "
        "gfx1151, gfx1150, gfx1152, gfx1153 (and Instinct gfx950, gfx942, gfx90a, gfx908); venv Python per OS: Ubuntu 26.04 "
        "3.14, 24.04.4 3.12, 22.04.5 3.11, Debian 13 3.13, Debian 12 3.11; 'Supported Ryzen APUs require the inbox kernel "
        "driver included with Ubuntu 26.04 / 24.04.4'; 'For Instinct and Radeon devices, install the AMD GPU Driver (amdgpu)'"
    ),
    "rocm_pip_radeon_1000": (
        "AMD's compatibility matrix, Radeon table: ROCm/rocm-docs docs/compatibility/include/system-radeon.rst @bcabec9d "
        "(read 2026-12-07): gfx1201, gfx1200, gfx1100, gfx1101, gfx1102, gfx1030 on Ubuntu 26.04 (GA 7.0), 24.04.4 (HWE "
        "6.17), 22.04.5 (HWE 6.8) and RHEL 10.2 / 9.8, with AMD GPU Driver (amdgpu) 31.40.1 ... 30.10.0; no Debian, no "
        "gfx1031/gfx1032"
    ),
    "rocm_pip_ryzen_1000": (
        "AMD's compatibility matrix, Ryzen table: ROCm/rocm-docs docs/compatibility/include/system-ryzen.rst @bcabec9d "
        "(read 2026-12-07): gfx1151 (Radeon 8060S/8050S/8040S, Ryzen AI Max 300 / PRO 300 / PRO 400), gfx1150, gfx1152, "
        "gfx1153, gfx1103 on Ubuntu 26.04 (GA kernel 7.0) and 24.04.4 (OEM kernel 6.17); 'Supported kernel driver version: "
        "Inbox kernel driver in supported Ubuntu version'; no Debian"
    ),
    "rocm_pip_therock_gpus": (
        "ROCm/TheRock SUPPORTED_GPUS.md @89553ce3 (2026-08-22): Linux 'Release Ready' for gfx1201, gfx1200, gfx1152, "
        "gfx1151, gfx1150, gfx1103 ... gfx1100, gfx1036 ... gfx1030, gfx1012 ... gfx1010 (not gfx1153), with the page's own "
        "warning 'not yet stable for production use' and its pointer to the official compatibility matrix for released "
        "support; RELEASES.md @89553ce3 lists device extras device-gfx1031 ... device-gfx1036 and device-gfx1010 ... 1012 "
        "too ('installable does not mean the runtime is functional')"
    ),
    "rocm_pip_torch_1000": (
        "3rd-party, two independent installs of ROCm 10.0.0's torch from https://stable.repo.amd.com/rocm/whl-next/: "
        "'torch[device-gfx1151]==2.13.0+rocm10.0.0' 'torchvision[device-gfx1151]==0.28.0+rocm10.0.0' "
        "'torchaudio==2.11.0.2+rocm10.0.0' (a gfx1151 setup guide, index file id 66822332095); "
        "https://github.com/hellas-ai/nix-strix-halo/pull/159 (2026-07-24: ROCm 10.0.0, PyTorch 2.13, torchvision 0.28, "
        "torchaudio 2.11.0.2, from 'the official AMD stable tarball and wheel indexes', gfx1151 and gfx1030). AMD's own "
        "PyTorch page for 10.0.0 (projects/ai-ecosystem .../pytorch/install.html) was not read: UNVERIFIED"
    ),
    "rocm_pip_sdist": (
        "ROCm/TheRock @89553ce3: RELEASES.md ('rocm | Primary sdist meta package that dynamically determines other "
        "deps'; 'The torch packages depend on rocm[libraries]'), docs/packaging/python_packaging.md ('The rocm package is "
        "built as an sdist'), external-builds/pytorch/build_prod_wheels.py (PYTORCH_EXTRA_INSTALL_REQUIREMENTS = "
        "'rocm[libraries]==<version>'); ROCm/TheRock#3046 log ('Built rocm==7.11.0a20260112' at install). The fleet "
        "wheelhouse downloads with --only-binary=:all: --platform, which cannot fetch an sdist (roles/venv_pip/files/"
        "wheelhouse.py pip_argv)"
    ),
    "bnb_lf": (
        "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1955 (LLaMA-Factory 0.9.5 QLoRA 4-bit on an "
        "AI PRO R9700, gfx1201, ROCm 7.2.3)"
    ),
}

# ---------------------------------------------------------------------------------------------
# Target lists (building blocks; the per-release table below references them)
# ---------------------------------------------------------------------------------------------
_RB_57 = ("gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942",
          "gfx1010", "gfx1012", "gfx1030", "gfx1100", "gfx1101", "gfx1102")
_RB_60 = tuple(t for t in _RB_57 if t != "gfx803")
_RB_63 = _RB_60 + ("gfx1151",)
_RB_64 = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1010", "gfx1012", "gfx1030",
          "gfx1100", "gfx1101", "gfx1102", "gfx1151", "gfx1200", "gfx1201")
_RB_70 = _RB_64 + ("gfx950",)

_TORCH_A = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100")
_TORCH_A6 = _TORCH_A + ("gfx942",)
_TORCH_B = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
            "gfx1200", "gfx1201")
_TORCH_C = _TORCH_B + ("gfx950", "gfx1150", "gfx1151")
_TORCH_D = _TORCH_C + ("gfx1103",)

_UBUNTU_2004 = ("22.04", "20.04")
_UBUNTU_2404 = ("24.04", "22.04")

# ---------------------------------------------------------------------------------------------
# Per ROCm release line
#   official_radeon / official_instinct: gfx targets in AMD's Linux support table
#   deprecated: listed with a deprecation mark on that line
#   rocblas: targets rocBLAS ships kernels for (TensileLibrary_*_<gfx>)
#   torch: targets the default PyTorch wheel of that line (see TORCH_WHEELS) ships kernels for;
#          None when no stable PyTorch index is recorded for the line
#   per_node_override: libhsakmt reads HSA_OVERRIDE_GFX_VERSION_<node>
#   ubuntu / debian: the releases AMD lists the line for (Debian: Instinct only, never Radeon); None when not
#          recorded. radeonlab.llm.rocm_repo registers exactly these (rocm_apt_lines, through its vars)
#   released / latest: first release (x.y.0) and newest point release with dates; None when not recorded
# ---------------------------------------------------------------------------------------------
RELEASES = {
    "5.7": {
        "official_radeon": ("gfx1100", "gfx1030", "gfx906"),
        "official_instinct": ("gfx90a", "gfx908", "gfx906"),
        "deprecated": (),
        "official_verified": False,
        "official_source": "riol",
        "rocblas": _RB_57, "rocblas_verified": True,
        "torch": _TORCH_A, "torch_verified": False,
        "per_node_override": False,
        "ubuntu": None, "debian": None, "os_verified": False, "os_source": "riol",
        "released": None, "latest": None, "release_source": None,
        "notes": "Reference tables start at 6.0: the 5.7 official list is UNVERIFIED (assumed as 6.0 without gfx942). "
                 "rocBLAS 5.7 still builds gfx803, PyTorch wheels never did.",
    },
    "6.0": {
        "official_radeon": ("gfx1100", "gfx1030", "gfx906"),
        "official_instinct": ("gfx942", "gfx90a", "gfx908", "gfx906"),
        "deprecated": ("gfx906",),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_60, "rocblas_verified": True,
        "torch": _TORCH_A6, "torch_verified": True,
        "per_node_override": False,
        "ubuntu": _UBUNTU_2004, "debian": (), "os_verified": True, "os_source": "compat_csv",
        "released": None, "latest": None, "release_source": None,
        "notes": "gfx906 MI50 deprecated; gfx900 MI25 unsupported (kernels still ship).",
    },
    "6.1": {
        "official_radeon": ("gfx1100", "gfx1030", "gfx906"),
        "official_instinct": ("gfx942", "gfx90a", "gfx908", "gfx906"),
        "deprecated": ("gfx906",),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_60, "rocblas_verified": True,
        "torch": _TORCH_A6, "torch_verified": True,
        "per_node_override": False,
        "ubuntu": _UBUNTU_2004, "debian": (), "os_verified": True, "os_source": "compat_csv",
        "released": None, "latest": None, "release_source": None,
        "notes": "+ RX 7900 GRE, PRO W7800 (gfx1100); Radeon VII/PRO VII (gfx906) deprecated.",
    },
    "6.2": {
        "official_radeon": ("gfx1100", "gfx1030", "gfx906"),
        "official_instinct": ("gfx942", "gfx90a", "gfx908", "gfx906"),
        "deprecated": ("gfx906",),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_60, "rocblas_verified": True,
        "torch": _TORCH_A6, "torch_verified": True,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": (), "os_verified": True, "os_source": "compat_csv",
        "released": None, "latest": None, "release_source": None,
        "notes": "First line with per-node HSA_OVERRIDE_GFX_VERSION_<node> (ROCT-Thunk-Interface#104).",
    },
    "6.3": {
        "official_radeon": ("gfx1100", "gfx1030"),
        "official_instinct": ("gfx942", "gfx90a", "gfx908"),
        "deprecated": (),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_63, "rocblas_verified": False,
        "torch": _TORCH_B, "torch_verified": False,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": ("12",), "os_verified": True, "os_source": "compat_csv",
        "released": None, "latest": None, "release_source": None,
        "notes": "Official list = compat-matrix targets. torch 2.8.0+rocm6.3 arch list (gfx1101/1102/1200/1201 added) "
                 "and rocBLAS gfx1151 are UNVERIFIED for this exact line.",
    },
    "6.4": {
        "official_radeon": ("gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030"),
        "official_instinct": ("gfx942", "gfx90a", "gfx908"),
        "deprecated": (),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_64, "rocblas_verified": False,
        "torch": _TORCH_C, "torch_verified": True,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": ("12",), "os_verified": True, "os_source": "compat_csv",
        "released": None, "latest": None, "release_source": None,
        # the point release AMD added a target in (older points of the line run it without AMD's support)
        "official_from": {"gfx1201": "6.4.1", "gfx1200": "6.4.1", "gfx1101": "6.4.1"}, "official_from_source": "relnotes_641",
        "notes": "+ RX 9070/9060 (gfx1201/gfx1200), RX 7800 XT / PRO W7700 (gfx1101), MI325X; gfx906 unsupported. "
                 "AMD added the Radeon AI PRO R9700, RX 9070, 9070 XT, 9070 GRE, 9060 XT, PRO W7700 and RX 7800 XT in "
                 "6.4.1, not 6.4.0 (relnotes_641). "
                 "torch 2.9.x wheels built against ROCm 6.4.4 carry gfx1150/gfx1151; which 6.4.x rocBLAS first "
                 "ships gfx1151/gfx12 kernels is UNVERIFIED.",
    },
    "7.0": {
        "official_radeon": ("gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030"),
        "official_instinct": ("gfx950", "gfx942", "gfx90a", "gfx908"),
        "deprecated": (),
        "official_verified": True,
        "official_source": "riol",
        "rocblas": _RB_70, "rocblas_verified": False,
        "torch": _TORCH_C, "torch_verified": False,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": ("13", "12"), "os_verified": True, "os_source": "compat_csv",
        "released": "7.0.0 (2025-09-16)", "latest": "7.0.2 (2025-10-10)", "release_source": "rocm_releases",
        "notes": "+ RX 7700 XT, MI350X/MI355X (gfx950); MI50 unsupported. Debian 12 for Instinct only, Debian 13 "
                 "(from 7.0.2) for MI300X only. Radeon: 7.0.0 'only supported on Ubuntu 24.04.3, Ubuntu 22.04.5, and "
                 "RHEL 9.6'; 7.0.x (7.0.2 column) adds RHEL 10.0 (compat_70_footnotes). Ryzen APUs (gfx1151) are not "
                 "listed (ROCm/legacy-rocm-build#5339, 2025-09-16, 3rd-party). whl/rocm7.0 serves torch 2.10 only "
                 "(test_infra_matrix: the 2.10 release matrix is 7.0, 7.1, from 2.11 on 7.1, 7.2); the wheel arch list is "
                 "the one PyTorch's libtorch builder uses for ROCm 7.0.2. amdgpu driver 30.10.x.",
    },
    "7.1": {
        "official_radeon": ("gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030"),
        "official_instinct": ("gfx950", "gfx942", "gfx90a", "gfx908"),
        "deprecated": (),
        "official_verified": True,
        "official_source": "compat_csv",
        "rocblas": _RB_70, "rocblas_verified": False,
        "torch": _TORCH_D, "torch_verified": False,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": ("13", "12"), "os_verified": True, "os_source": "compat_csv",
        "released": "7.1.0 (2025-10-30)", "latest": "7.1.1 (2025-11-26)", "release_source": "rocm_releases",
        "notes": "AMD's 7.1.0 column lists the 7.0 targets. 7.1.0: tag 2025-10-30, GitHub release 2025-11-03 "
                 "(rocm_releases). Radeon: the 7.1.0 column keeps the 7.0.x footnote (Ubuntu 24.04.3, 22.04.5, RHEL "
                 "10.0, 9.6; compat_70_footnotes), AMD's 7.1-era Radeon table lists Ubuntu 24.04.3 / 22.04.5 and RHEL "
                 "10.1 / 10.0 (radeon_os_700); Debian 13 (MI355X/MI350X/MI325X/MI300X) and 12 for Instinct only. "
                 "Ryzen (gfx1150/gfx1151) and gfx1102 on this line are "
                 "UNVERIFIED (no stored copy of AMD's 7.1 Radeon/Ryzen pages). Stable torch 2.10-2.13 on whl/rocm7.1 "
                 "(test_infra_matrix). amdgpu driver 30.20.x.",
    },
    "7.2": {
        "official_radeon": ("gfx1201", "gfx1200", "gfx1101", "gfx1100", "gfx1030"),
        "official_instinct": ("gfx950", "gfx942", "gfx90a", "gfx908"),
        "deprecated": (),
        "official_verified": False,
        "official_source": "compat_72",
        "rocblas": _RB_70, "rocblas_verified": False,
        "torch": _TORCH_D, "torch_verified": False,
        "per_node_override": True,
        "ubuntu": _UBUNTU_2404, "debian": ("13", "12"), "os_verified": True, "os_source": "compat_72",
        "released": "7.2.0 (2026-01-21)", "latest": "7.2.4 (2026-05-28)", "release_source": "rocm_releases",
        "notes": "AMD's 7.2.x compute matrix (compat_72) lists these targets and Ubuntu 24.04.3 / 22.04.5, Debian 13 / "
                 "12 (Instinct only), RHEL 10.1 ... 8.10. The Radeon-specific OS and GPU list is UNVERIFIED (AMD: 'Some "
                 "GPUs have limited operating system support'; its docs-7.2.2 system-requirements page is not stored), "
                 "so the official lists stay unverified; AMD's 7.14 pages list the same Radeon targets plus gfx1102 on "
                 "Ubuntu 24.04.4 / 22.04.5. Ryzen gfx1151 UNVERIFIED on classic 7.2 (absent from every compute matrix "
                 "through 7.2.3; an AMD comment on ROCm/legacy-rocm-build#5339, 2026-03-25, says the Radeon/Ryzen docs "
                 "call out Strix Halo; 7.14.0 adds it). Point releases (rocm_releases): 7.2.1 2026-03-24, 7.2.2 "
                 "2026-04-14 (quality release), 7.2.3 2026-05-04, 7.2.4 2026-05-28; no 7.2.5 found (rocm-7.14.0 is the "
                 "last classic tag). Stable torch 2.11-2.13 on whl/rocm7.2 (test_infra_matrix). amdgpu driver 30.30.x "
                 "(AMDGPU_REPO_VERSIONS; 7.2.4's UNVERIFIED). Classic 7.2.x still needs the override for gfx1101-class "
                 "targets (3rd-party); TheRock 7.14+/10.x is not covered by this matrix (THEROCK).",
    },
}

RELEASE_LINES = tuple(RELEASES)

# From ROCm 7.0 the amdgpu driver repository (repo.radeon.com/amdgpu/<version>/ubuntu) has its own version. Keys are
# ROCm versions with a trailing ".0" stripped, as in the repository paths; a release missing here has no confirmed
# pairing (7.2.4: none seen) and radeonlab.llm.rocm_repo asks for rocm_repo_amdgpu_version. Never derive the path
# from the ROCm version (amdgpu/7.2 answers 404: amdgpu_aliases). radeonlab.llm.rocm_repo reads this table (rocm_apt_lines).
AMDGPU_REPO_VERSIONS = {
    "7.0": "30.10", "7.0.1": "30.10.1", "7.0.2": "30.10.2",
    "7.1": "30.20", "7.1.1": "30.20.1",
    "7.2": "30.30", "7.2.1": "30.30.1", "7.2.2": "30.30.2", "7.2.3": "30.30.3",
}
AMDGPU_REPO_NOTES = (
    "7.0 ... 7.2: a ROCm and a driver release of the same day (amdgpu_versions), also in 3rd-party scripts; "
    "7.2.1 -> 30.30.1 (amdgpu_7221); 7.2.2 -> 30.30.2 is amdgpu-install 7.2.2's own line, which answered 404 at "
    "release: AMD pointed its quick-start at 30.30.1 for a few days and published 30.30.2 by 2026-04-17 "
    "(amdgpu_7221); 7.2.3 -> 30.30.3: AMD's amdgpu-docs conf.py; 7.2.4: UNVERIFIED. Never use the "
    "repo.radeon.com/amdgpu/<ROCm version> aliases from 7.0 on (amdgpu/7.2 answered 404, amdgpu/7.1 was never "
    "linked to 30.20: amdgpu_aliases). Firmware epoch trap "
    "(rocm_facts.md §1, ROCm/ROCm#5566): 6.4.x's amdgpu-dkms-firmware 1:6.12.12.60404 (epoch 1) outranks "
    "30.10.2.0.30100200 from repo.radeon.com at pin priority 600, so an upgrade from 6.4 keeps the old firmware "
    "unless it is replaced explicitly. The split outlives 30.x: driver 31.20 ships amdgpu-dkms 1:6.19.0.31200000 "
    "(epoch 1) beside amdgpu-dkms-firmware 31.20.0.0.31200000 (none) (amdgpu_epoch_31)."
)


def rocm_apt_lines(distribution):
    """What radeonlab.llm.rocm_repo registers, from RELEASES: ``known_lines`` (every line with an apt distribution),
    ``releases`` ({release: [lines]} of ``distribution``, 'Ubuntu' or 'Debian'; {} for any other) and
    ``amdgpu_versions`` (AMDGPU_REPO_VERSIONS)."""
    key = {"Ubuntu": "ubuntu", "Debian": "debian"}.get(str(distribution))
    known = [line for line in RELEASE_LINES if RELEASES[line]["ubuntu"] or RELEASES[line]["debian"]]
    releases = {}
    for line in known:
        for release in (RELEASES[line][key] or ()) if key else ():
            releases.setdefault(release, []).append(line)
    return {"known_lines": known, "releases": releases, "amdgpu_versions": dict(AMDGPU_REPO_VERSIONS)}


# ---------------------------------------------------------------------------------------------
# Override families: a GPU of a family that lacks kernels on a line borrows the kernels of the
# first candidate that runs natively on that line (its HSA version becomes the override value).
# ---------------------------------------------------------------------------------------------
OVERRIDE_FAMILIES = (
    {
        "family": "gfx90x APU",
        "members": ("gfx902", "gfx909", "gfx90c"),
        "candidates": ("gfx900",),
        "verified": False,
        "source": "overrides",
        "notes": "Vega APUs (Raven/Picasso/Renoir/Cezanne) -> 9.0.0, community; crash reports exist (ROCm/ROCm#5121).",
    },
    {
        "family": "gfx103x",
        "members": ("gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
        "candidates": ("gfx1030",),
        "verified": True,
        "source": "overrides",
        "notes": "RDNA2 -> 10.3.0 (ROCm/ROCm#2353; ollama docs list gfx1034).",
    },
    {
        "family": "gfx110x",
        "members": ("gfx1101", "gfx1102", "gfx1103"),
        "candidates": ("gfx1100",),
        "verified": True,
        "source": "overrides",
        "notes": "RDNA3 -> 11.0.0 where the target's own kernels are missing (ROCm discussion #2631).",
    },
    {
        "family": "gfx115x",
        "members": ("gfx1150", "gfx1151", "gfx1152", "gfx1153"),
        "candidates": ("gfx1151", "gfx1100"),
        "verified": False,
        "source": "gfx1151",
        "notes": "RDNA3.5 APUs: 11.5.1 (gfx1151 kernels) where those ship, else 11.0.0. 11.5.1 on a gfx1151 is its own "
                 "version (a no-op), so gfx1151 itself only ever gets 11.0.0 or nothing.",
    },
    {
        "family": "gfx120x",
        "members": ("gfx1200", "gfx1201"),
        "candidates": ("gfx1201", "gfx1200"),
        "verified": False,
        "source": "riol",
        "notes": "RDNA4 needs ROCm 6.4+; before that no gfx12 kernels exist to borrow.",
    },
)

# Targets no override rescues (reason + source). Anything with major < 9 is also covered by
# PRE_GFX9 below; unknown targets are treated as unsupported by gfx.py.
NO_RESCUE = {
    "gfx1010": ("RDNA1 (RX 5700/5600): PyTorch ROCm wheels ship no gfx101x kernels and RDNA1 is not ISA-compatible with "
                "gfx1030; community reports of 10.3.0 on RX 5000 are mixed (UNVERIFIED)", "torch_arch"),
    "gfx1011": ("RDNA1 (Radeon Pro 5600M/V520): no gfx101x kernels in PyTorch wheels; not ISA-compatible with gfx1030", "torch_arch"),
    "gfx1012": ("RDNA1 (RX 5500): no gfx101x kernels in PyTorch wheels; not ISA-compatible with gfx1030", "torch_arch"),
    "gfx1013": ("RDNA1 variant: no kernels anywhere in ROCm/PyTorch wheels", "torch_arch"),
    "gfx940": ("pre-production MI300 target: current drivers report production MI300 as gfx942 (same chip); "
               "update amdgpu/ROCm instead of overriding", "riol"),
    "gfx941": ("pre-production MI300X target (AMD's own rocminfo doc example): current drivers report this chip "
               "(Chip ID 0x74a1) as gfx942; update amdgpu/ROCm instead of overriding", "corpus"),
}

PRE_GFX9_REASON = (
    "pre-Vega GCN (gfx8 and older, e.g. gfx803 Polaris RX 470/480/570/580): ROCm 6.x rocBLAS and every PyTorch ROCm "
    "wheel dropped it. No override rescues it: 8.0.3 is the card's own version (a no-op), and a gfx9 value is a "
    "different ISA (cross-major overrides are rejected by newer libhsakmt). Only community builds with "
    "ROC_ENABLE_PRE_VEGA=1 (e.g. woodrex83/ROCm-For-RX580) exist, outside this collection."
)

# ---------------------------------------------------------------------------------------------
# Chip IDs (rocminfo 'Chip ID', PCI device id) seen in the shared corpus, tests/fixtures/rocminfo or a public issue
# named in the entry. Used only to recognise a capture taken while HSA_OVERRIDE_GFX_VERSION was set (Name: shows the
# overridden target).
# ---------------------------------------------------------------------------------------------
CHIP_IDS = {
    0x73df: ("gfx1031", "Navi 22 (RX 6700 XT / 6750 GRE), corpus 04 + 31"),
    0x73bf: ("gfx1030", "Navi 21 (RX 6800 XT), corpus 16"),
    0x744c: ("gfx1100", "Navi 31 (RX 7900 XTX), corpus 06"),
    0x747e: ("gfx1101", "Navi 32 (RX 7800 XT), corpus 05"),
    0x7480: ("gfx1102", "Navi 33 (RX 7600 / 7600 XT): ROCm's rocm_agent_enumerator maps 0x7480 to gfx1102 "
                        "(ROCm/rocm-systems#4676, merged 2026-04-03)"),
    0x74a1: ("gfx942", "MI300X, corpus 01 (reported as gfx941 by the pre-production stack in corpus 30)"),
    0x66a1: ("gfx906", "Vega 20, corpus 03"),
    0x6860: ("gfx900", "Vega 10 MI25, corpus 02"),
    0x67df: ("gfx803", "Polaris 10/20 (RX 580), corpus 19"),
    0x164e: ("gfx1036", "Raphael iGPU (Ryzen 7000), corpus 16 + 19"),
    0x1638: ("gfx90c", "Cezanne iGPU (Ryzen 5600G), corpus 15"),
    0x15d8: ("gfx902", "Picasso iGPU (Ryzen 3500U), corpus 08"),
    0x1900: ("gfx1103", "Phoenix iGPU (Radeon 780M), corpus 22"),
    0x1586: ("gfx1151", "Strix Halo (Radeon 8060S), corpus 07"),
    0x7590: ("gfx1200", "Navi 44 (RX 9060 XT), tests/fixtures/rocminfo 32 (ROCm/ROCm#5999); ROCm/rocminfo#123 and "
                        "ROCm/TheRock#6783 list PCI ID 7590 as gfx1200 / Navi44"),
    0x7550: ("gfx1201", "RX 9070 XT, tests/fixtures/rocminfo 33 (ROCm/ROCm#5814); ROCm/rocminfo#123 lists 7550/7551 as "
                        "gfx1201"),
    0x7551: ("gfx1201", "Radeon AI PRO R9700, PCI 1002:7551 (ROCm/legacy-rocm-build#6155); ROCm/rocminfo#123 lists "
                        "7550/7551 as gfx1201"),
    0x13c0: ("gfx1036", "Granite Ridge iGPU (Ryzen 9 9950X), tests/fixtures/rocminfo 33 (ROCm/ROCm#5814)"),
}

# ---------------------------------------------------------------------------------------------
# amdgpu-dkms x kernel: which driver line builds on which kernel series, per distribution release ("any": every one).
# ``line``: the amdgpu repository version (30.20; the ROCm release before 7.0), matched as a prefix of the installed line;
# ``fixed_in``: the first point release of the line where a failure is fixed. Build reports from AMD's trackers, and the
# kernels AMD documents per release (tested by AMD: "builds"). The newest row of the most specific distribution wins;
# a pair with no row is unknown. Dates: the report, or the release of the newest ROCm column of the AMD document.
# ---------------------------------------------------------------------------------------------
AMDGPU_DKMS_KERNELS = (
    {"line": "6.2", "fixed_in": "6.2.1", "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "fails", "source": "dkms_3701",
     "date": "2024-09-11", "note": "6.8.0-44 and later: drm_dp_add_payload_part2 type mismatch, fixed in 6.2.1"},
    {"line": "6.2.1", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "builds", "source": "dkms_3701_fix",
     "date": "2024-09-20", "note": ""},
    {"line": "6.4", "fixed_in": "6.4.2", "distribution": "ubuntu-24.04", "kernel": "6.14", "status": "fails", "source": "dkms_4619",
     "date": "2025-04-13", "note": "'struct drm_driver' has no member named 'date', fixed in 6.4.2"},
    {"line": "6.4", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.13", "status": "fails", "source": "dkms_4619",
     "date": "2025-04-13", "note": "'struct drm_driver' has no member named 'date'; no fix confirmed"},
    {"line": "6.4.1", "fixed_in": None, "distribution": "ubuntu-25.04", "kernel": "6.14", "status": "fails", "source": "dkms_amdgpu187",
     "date": "2025-06-15", "note": "6.4.1 on Ubuntu 25.04's 6.14.0-15"},
    {"line": "6.4.2", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.14", "status": "builds", "source": "dkms_4619_fix",
     "date": "2025-07-22", "note": ""},
    {"line": "6.4.2", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.11", "status": "builds", "source": "dkms_5085",
     "date": "2025-07-28", "note": ""},
    {"line": "6.4.2", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.15", "status": "fails", "source": "dkms_5109",
     "date": "2025-07-28", "note": "AMD: kernel 6.15 not supported by the 6.4.2 driver"},
    {"line": "6.4.2", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.16", "status": "fails", "source": "dkms_5110",
     "date": "2025-07-28", "note": "AMD: kernel 6.16 not supported by the 6.4.2 driver"},
    {"line": "6.4.4", "fixed_in": None, "distribution": "ubuntu-25.10", "kernel": "6.17", "status": "fails", "source": "dkms_5624",
     "date": "2025-11-04", "note": "6.4.4's driver on 6.17.0-6"},
    {"line": "30.10", "fixed_in": None, "distribution": "any", "kernel": "6.17", "status": "fails", "source": "dkms_5553",
     "date": "2025-10-21", "note": "7.0.2's driver on 6.17: __dma_fence_is_later type conflict"},
    {"line": "30.20", "fixed_in": None, "distribution": "any", "kernel": "6.17", "status": "builds", "source": "dkms_5624_c5",
     "date": "2026-01-14", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "any", "kernel": "6.17", "status": "builds", "source": "dkms_5624_c11",
     "date": "2026-02-11", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "any", "kernel": "6.18", "status": "fails", "source": "dkms_amdgpu209",
     "date": "2026-03-02", "note": "30.30 fails on 6.18.14 (and 6.18.4, 6.18.7: dkms_6143_user, dkms_5905)"},
    {"line": "30.30", "fixed_in": None, "distribution": "any", "kernel": "6.19", "status": "fails", "source": "dkms_amdgpu209",
     "date": "2026-03-02", "note": "30.30 fails on 6.19.4 (and 6.19.11: dkms_6143_user)"},
    {"line": "30.30", "fixed_in": None, "distribution": "ubuntu-26.04", "kernel": "7.0", "status": "fails", "source": "dkms_6193",
     "date": "2026-06-07", "note": "30.30.1 and 30.30.4 fail on Ubuntu 26.04's 7.0.0-14/-15/-22: pci_resize_resource"},
    {"line": "30.30", "fixed_in": None, "distribution": "debian-13", "kernel": "6.12", "status": "fails", "source": "dkms_5111",
     "date": "2026-08-01", "note": "7.2.4's driver fails on Debian 13's 6.12.100 point release: pci_resize_resource"},
    {"line": "6.4", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_640",
     "date": "2025-10-30", "note": ""},
    {"line": "6.4", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.11", "status": "builds", "source": "amd_compat_640",
     "date": "2025-10-30", "note": ""},
    {"line": "6.4", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "5.15", "status": "builds", "source": "amd_compat_640",
     "date": "2025-10-30", "note": ""},
    {"line": "6.4", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_640",
     "date": "2025-10-30", "note": ""},
    {"line": "30.10", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.10", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.14", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.10", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "5.15", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.10", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.20", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.20", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.14", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.20", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "5.15", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.20", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "6.8", "status": "builds", "source": "amd_compat_710",
     "date": "2025-10-30", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.8", "status": "builds", "source": "amd_relnotes_721",
     "date": "2026-03-24", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "ubuntu-24.04", "kernel": "6.17", "status": "builds", "source": "amd_relnotes_721",
     "date": "2026-03-24", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "5.15", "status": "builds", "source": "amd_sysreq_724",
     "date": "2026-05-28", "note": ""},
    {"line": "30.30", "fixed_in": None, "distribution": "ubuntu-22.04", "kernel": "6.8", "status": "builds", "source": "amd_sysreq_724",
     "date": "2026-05-28", "note": ""},
)

# ---------------------------------------------------------------------------------------------
# Ryzen AI Max APUs (Strix Halo): the kernel ROCm needs, and which ROCm releases run on which kernels (amd_rdna35).
# A kernel "has the fixes" when it is at least the minimum of its kind; Ubuntu 26.04 and Fedora 43 ship them natively.
# ``releases``: ROCm release prefix -> (status on a kernel with the fixes, status on an older one), the longest prefix
# of the installed release wins; a release not listed (7.0) is "unknown".
# ---------------------------------------------------------------------------------------------
APU_KERNELS = {
    "targets": ("gfx1151",),
    "min_kernel": {
        "ubuntu_hwe": ("6.17.0", 19, (24, 4, 2)),  # 6.17.0-19.19~24.04.2: uname -r 6.17.0-19-generic, uname -v #19~24.04.2-Ubuntu
        "ubuntu_oem": ("6.14.0", 1018),  # 6.14.0-1018-oem
        "other": ("6.18.4",),
    },
    "min_kernel_text": "Ubuntu 24.04 HWE 6.17.0-19.19~24.04.2, Ubuntu 24.04 OEM 6.14.0-1018, any other distribution 6.18.4",
    "native": {"Ubuntu": "26.04", "Fedora": "43"},
    "releases": {
        "7.2.0": ("supported", "unsupported"),
        "7.2": ("supported", "experimental"),
        "7.1": ("unsupported", "experimental"),
        "6.4": ("unsupported", "experimental"),
    },
    "source": "amd_rdna35",
}
# GTT (the shared pool an APU's GPU allocates from) without a TTM limit set: about half the RAM (amd_rdna35); the TTM
# limit counts pages of 4096 bytes (ttm_pages).
GTT_DEFAULT_SHARE = 0.5
TTM_PAGE_BYTES = 4096

# The TTM page limit of an APU's GPU, the way AMD documents it (amd_rdna35: the amd-ttm tool, amd_ttm_tool). Checked and
# reported by radeonlab.llm.rocm_driver; written only when the user opts in (plugins/module_utils/ttm_limit.py).
APU_TTM = {
    # The module that holds the limit: the kernel's ttm under the kernel's own amdgpu driver (Strix Halo's), amdttm under
    # amdgpu-dkms (ttm_amdttm).
    "module": {"inbox": "ttm", "dkms": "amdttm"},
    "sysfs": "/sys/module/{module}/parameters/pages_limit",  # amd_rdna35, amd_ttm_tool, ttm_amdttm
    # amd-ttm's file and line for ttm (amd_ttm_tool); the amdttm file name follows it (an inference: modprobe reads any
    # /etc/modprobe.d/*.conf, the option is amdttm.pages_limit per ttm_amdttm).
    "modprobe_file": "/etc/modprobe.d/{module}.conf",
    "option_line": "options {module} pages_limit={pages}",
    "gib_bytes": 1 << 30,  # amd-ttm's 'GB' is 1024^3 bytes: 100 -> 26214400 pages (amd_rdna35, amd_ttm_tool)
    "page_bytes": TTM_PAGE_BYTES,
    "default_share": GTT_DEFAULT_SHARE,  # no limit set: about half the RAM (amd_rdna35)
    "warn_share": 0.9,  # amd-ttm asks before a limit above 90 % of MemTotal: 'could cause system instability'
    "initramfs": ("update-initramfs", "-u"),  # amd-ttm's rebuild where the initramfs carries ttm.ko (amd_ttm_tool)
    "applies_at": "the next boot",  # amd_rdna35 'Reboot for changes to take effect'; ttm_before_load
    "page_pool_size": "not written (ttm_params)",
    "gttsize": "deprecated (kernel_gttsize): not written, reported when set",
    "sources": ("amd_rdna35", "amd_ttm_tool", "ttm_amdttm", "ttm_before_load", "ttm_params", "kernel_gttsize", "ttm_pages"),
}

# Example products per target, for the generated tables only.
EXAMPLE_PRODUCTS = {
    "gfx803": "RX 470/480/570/580",
    "gfx900": "Instinct MI25, RX Vega 56/64",
    "gfx902": "Ryzen 2000/3000 APU (Vega iGPU)",
    "gfx906": "Radeon VII, PRO VII, MI50/MI60",
    "gfx908": "Instinct MI100",
    "gfx90a": "Instinct MI210/MI250(X)",
    "gfx90c": "Ryzen 4000/5000 APU (Vega iGPU)",
    "gfx941": "MI300X (pre-production naming)",
    "gfx942": "Instinct MI300X/MI300A/MI325X",
    "gfx950": "Instinct MI350X/MI355X",
    "gfx1010": "RX 5700/5700 XT",
    "gfx1012": "RX 5500 XT",
    "gfx1030": "RX 6800/6900, PRO W6800, V620",
    "gfx1031": "RX 6700 XT/6750 XT/6750 GRE",
    "gfx1032": "RX 6600/6650 XT",
    "gfx1034": "RX 6400/6500 XT",
    "gfx1035": "Ryzen 6000 APU (680M)",
    "gfx1036": "Ryzen 7000/9000 desktop iGPU",
    "gfx1100": "RX 7900 XTX/XT/GRE, PRO W7900/W7800",
    "gfx1101": "RX 7800 XT/7700 XT, PRO W7700",
    "gfx1102": "RX 7600/7600 XT",
    "gfx1103": "Radeon 780M/760M (Phoenix APU)",
    "gfx1150": "Radeon 890M (Strix Point APU)",
    "gfx1151": "Radeon 8060S (Strix Halo APU)",
    "gfx1200": "RX 9060/9060 XT",
    "gfx1201": "RX 9070/9070 XT/9070 GRE, AI PRO R9700",
}

# ---------------------------------------------------------------------------------------------
# PyTorch ROCm wheels (rocm_facts.md §4). index URL = https://download.pytorch.org/whl/<index_tag>
# ---------------------------------------------------------------------------------------------
TORCH_INDEX_BASE = "https://download.pytorch.org/whl/"

TORCH_WHEELS = (
    {"torch": "2.0.1", "index_tag": "rocm5.4.2", "rocm_line": "5.4", "torchvision": "0.15.2", "torchaudio": "2.0.2",
     "numpy_pin": "numpy<2", "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.3.1", "index_tag": "rocm5.7", "rocm_line": "5.7", "torchvision": "0.18.1", "torchaudio": "2.3.1",
     "numpy_pin": "numpy<2", "verified": False, "nightly": False, "source": "torch_index"},
    {"torch": "2.3.0", "index_tag": "rocm6.0", "rocm_line": "6.0", "torchvision": "0.18.0", "torchaudio": "2.3.0",
     "numpy_pin": "numpy<2", "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.4.0", "index_tag": "rocm6.0", "rocm_line": "6.0", "torchvision": "0.19.0", "torchaudio": "2.4.0",
     "numpy_pin": None, "verified": False, "nightly": False, "source": "torch_index"},
    {"torch": "2.4.0", "index_tag": "rocm6.1", "rocm_line": "6.1", "torchvision": "0.19.0", "torchaudio": "2.4.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.5.0", "index_tag": "rocm6.1", "rocm_line": "6.1", "torchvision": "0.20.0", "torchaudio": "2.5.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.5.1", "index_tag": "rocm6.1", "rocm_line": "6.1", "torchvision": "0.20.1", "torchaudio": "2.5.1",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.5.0", "index_tag": "rocm6.2", "rocm_line": "6.2", "torchvision": "0.20.0", "torchaudio": "2.5.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.5.1", "index_tag": "rocm6.2", "rocm_line": "6.2", "torchvision": "0.20.1", "torchaudio": "2.5.1",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.6.0", "index_tag": "rocm6.1", "rocm_line": "6.1", "torchvision": "0.21.0", "torchaudio": "2.6.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.6.0", "index_tag": "rocm6.2.4", "rocm_line": "6.2", "torchvision": "0.21.0", "torchaudio": "2.6.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.7.1", "index_tag": "rocm6.2.4", "rocm_line": "6.2", "torchvision": "0.22.1", "torchaudio": "2.7.1",
     "numpy_pin": None, "verified": False, "nightly": False, "source": "torch_index"},
    {"torch": "2.7.1", "index_tag": "rocm6.3", "rocm_line": "6.3", "torchvision": "0.22.1", "torchaudio": "2.7.1",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.8.0", "index_tag": "rocm6.3", "rocm_line": "6.3", "torchvision": "0.23.0", "torchaudio": "2.8.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.9.0", "index_tag": "rocm6.3", "rocm_line": "6.3", "torchvision": "0.24.0", "torchaudio": "2.9.0",
     "numpy_pin": None, "verified": False, "nightly": False, "source": "torch_63_29"},
    {"torch": "2.9.1", "index_tag": "rocm6.3", "rocm_line": "6.3", "torchvision": "0.24.1", "torchaudio": "2.9.1",
     "numpy_pin": None, "verified": False, "nightly": False, "source": "torch_63_29"},
    {"torch": "2.8.0", "index_tag": "rocm6.4", "rocm_line": "6.4", "torchvision": "0.23.0", "torchaudio": "2.8.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.9.0", "index_tag": "rocm6.4", "rocm_line": "6.4", "torchvision": "0.24.0", "torchaudio": "2.9.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.9.1", "index_tag": "rocm6.4", "rocm_line": "6.4", "torchvision": "0.24.1", "torchaudio": "2.9.1",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "torch_index"},
    {"torch": "2.10.0", "index_tag": "rocm7.0", "rocm_line": "7.0", "torchvision": "0.25.0", "torchaudio": "2.10.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.10.0", "index_tag": "rocm7.1", "rocm_line": "7.1", "torchvision": "0.25.0", "torchaudio": "2.10.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.11.0", "index_tag": "rocm7.1", "rocm_line": "7.1", "torchvision": "0.26.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.12.0", "index_tag": "rocm7.1", "rocm_line": "7.1", "torchvision": "0.27.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.12.1", "index_tag": "rocm7.1", "rocm_line": "7.1", "torchvision": "0.27.1", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.13.0", "index_tag": "rocm7.1", "rocm_line": "7.1", "torchvision": "0.28.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.11.0", "index_tag": "rocm7.2", "rocm_line": "7.2", "torchvision": "0.26.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.12.0", "index_tag": "rocm7.2", "rocm_line": "7.2", "torchvision": "0.27.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.12.1", "index_tag": "rocm7.2", "rocm_line": "7.2", "torchvision": "0.27.1", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": "2.13.0", "index_tag": "rocm7.2", "rocm_line": "7.2", "torchvision": "0.28.0", "torchaudio": "2.11.0",
     "numpy_pin": None, "verified": True, "nightly": False, "source": "test_infra_matrix",
     "companions": "torch_companions_7x"},
    {"torch": None, "index_tag": "nightly/rocm7.1", "rocm_line": "7.1", "torchvision": None, "torchaudio": None,
     "numpy_pin": None, "verified": False, "nightly": True, "source": "torch_index"},
)

# Disk space a stack adds to the venv when pip installs it (the preflights and playbooks/validate.yml refuse a
# file system with less free; <role>_min_free_gib overrides). Unpacked wheels plus pip's .pyc and RECORD files.
VENV_SPACE = {
    "pytorch_rocm": {
        "gib": 14,
        "source": "https://github.com/pytorch/pytorch/issues/129165: 'pip3 install -U torch --index-url "
                  "https://download.pytorch.org/whl/rocm6.0 ... creates a 13GB virtual env' (torch bundles rocBLAS, "
                  "hipBLASLt, MIOpen, rocSOLVER); 13 GB = 12.1 GiB, plus 2 GiB for torchvision, torchaudio and pip",
        "verified": False,
        "notes": "An inference for the other ROCm lines (the same bundled libraries); the lab's CUDA torch 2.9.1 set "
                 "unpacks to 6.6 GiB (.cache/wheelhouse, 2026-12-02).",
    },
    "llamafactory": {
        "gib": 2,
        "source": "measured: the wheels LLaMA-Factory 0.9.5, its metrics requirements and bitsandbytes 0.50.2 add "
                  "beside torch in the lab wheelhouse unpack to 1.05 GiB (sum of the zip entries' sizes, 2026-12-02), "
                  "plus 1 GiB for pip's .pyc files and newer releases",
        "verified": True,
        "notes": "",
    },
}

TORCH_NOTES = (
    "torch/torchvision/torchaudio triplets follow pytorch.org/get-started/previous-versions; the rocm5.7 (2.3.x), "
    "rocm6.0 (2.4.0), rocm6.2.4 (2.7.x) and nightly rocm7.1 rows are UNVERIFIED in rocm_facts.md §4. "
    "numpy<2 for torch<=2.3 is an inference (those wheels were built against numpy 1.x); AMD's repo.radeon.com "
    "wheels need numpy==1.26.4 (rocm_facts.md §4). torch 2.9.0/2.9.1 on rocm6.3: the 2.9 release matrices list "
    "ROCm 6.3 and a 3rd-party index listing shows 2.9.1+rocm6.3, against rocm_facts.md §4 ('rocm6.4 only'): "
    "UNVERIFIED (torch_63_29), so 6.3 keeps 2.8.0 as its default. ROCm 7.x rows (test_infra_matrix, the release "
    "matrix at each go-live commit): torch 2.10 on rocm7.0 + rocm7.1, 2.11-2.13 on rocm7.1 + rocm7.2; the 2.14 "
    "candidate builds rocm7.2 + rocm7.14 (not recorded: rocm7.14 is TheRock's line, see THEROCK). The x.y.z list "
    "inside each index was not read: only the go-live releases are recorded. torchaudio stops at 2.11.0, which "
    "serves torch >= 2.11 (torchaudio_211), so the 2.12/2.13 rows carry it. Known regression: torch 2.13.0+rocm7.2 breaks "
    "torch.compile on CPU when no GPU is visible (pytorch/pytorch#189194; 2.12.1+rocm7.2 does not, "
    "torch_213_notes): a CPU-only host (Molecule/CI) that compiles on 2.13 should pin 2.12. From 2.13 the ROCm "
    "wheels bundle their own runtime libraries (test-infra#8258). The nightly rocm7.1 row is historical (nightly "
    "moved to 7.2/7.14 on 2026-08-05, test-infra#8451; torch_index_7x)."
)


# ---------------------------------------------------------------------------------------------
# AMD's pip-delivered ROCm (TheRock, ROCm 7.14+ / 10.x): ROCm itself as wheels, torch built against it. The facts
# read while it was a preview (7.14.0); ROCM_PIP below is what radeonlab.llm.pytorch_rocm_runtime: pip installs.
# ---------------------------------------------------------------------------------------------
THEROCK = {
    "status": "superseded by ROCM_PIP (pytorch_rocm_runtime)",
    "first_release": "7.14.0 (2026-07-16)",
    "indexes": (
        ("stable, multi-arch", "https://repo.amd.com/rocm/whl-multi-arch/"),
        ("stable, per GPU family (tag therock-7.14)", "https://repo.amd.com/rocm/whl/<family>/"),
        ("stable at TheRock HEAD (2026-08-22)", "https://stable.repo.amd.com/rocm/whl-next/"),
    ),
    "extras": ("torch[device-gfx<target>]", "rocm[libraries]", "rocm[devel]", "rocm[device-gfx<target>]"),
    "extras_note": "torch[device-gfx<target>] pulls amd-torch-device-gfx<target>; the torch wheels depend on rocm[libraries]",
    "version_patterns": (("stable", "<torch>+rocm<x.y.z>", "2.9.0+rocm7.10.0"),
                         ("nightly", "<torch>+rocm<x.y.z>a<YYYYMMDD>", "2.9.0+rocm7.10.0a20251124")),
    "companions": {"2.11": ("0.26", "2.11"), "2.12": ("0.27", "2.11"), "2.13": ("0.28", "2.11"), "2.14": ("0.29", "2.11")},
    "host": "only the amdgpu kernel driver ('the latest AMDGPU driver'), no /opt/rocm",
    "reasons": (
        ("AMD's own transition guide calls 7.14.0 'a preview release built on our new build system', a 3rd-party "
         "release note 'the first production release': conflicting", "therock_status"),
        ("which amdgpu 31.x driver pairs with 7.14 / 10.x is UNVERIFIED, while rocm_repo pins the driver per ROCm "
         "release (AMDGPU_REPO_VERSIONS)", "therock_driver"),
        ("a 3rd-party report says HSA_OVERRIDE_GFX_VERSION breaks HSA init on the TheRock runtime (UNVERIFIED, not "
         "re-checked); gpu_env relies on the override for RDNA2/RDNA3 cards without native kernels", "therock"),
        ("the stable index moved between the therock-7.14 tag (repo.amd.com/rocm/whl/) and TheRock's HEAD "
         "(stable.repo.amd.com/rocm/whl-next/)", "therock_pip"),
    ),
    "sources": ("therock_pip", "therock_status", "therock_driver", "therock"),
}

# ---------------------------------------------------------------------------------------------
# The ROCm user space of radeonlab.llm.pytorch_rocm: apt (ROCm from repo.radeon.com, torch from download.pytorch.org,
# TORCH_WHEELS) or pip (AMD's pip-delivered ROCm, TheRock: rocm[libraries] and a matching torch as wheels in the venv,
# the host needing only the kernel driver). One release is recorded; module_utils/rocm_runtime.py decides per host.
#   status per target: stable (AMD's own 10.0.0 install page and compatibility matrix list the target for pip),
#   preview (only TheRock's own pages list it), unknown (no row). os: the distribution releases AMD lists for the
#   target (Debian: none for Radeon/Ryzen). driver: the kernel driver AMD pairs with it ("inbox": the kernel's own,
#   "amdgpu": AMD's amdgpu-dkms 30.x/31.x).
# ---------------------------------------------------------------------------------------------
_PIP_UBUNTU_RADEON = {"Ubuntu": ("26.04", "24.04", "22.04")}
_PIP_UBUNTU_RYZEN = {"Ubuntu": ("26.04", "24.04")}

ROCM_PIP = {
    "release": "10.0.0",
    "index_url": "https://stable.repo.amd.com/rocm/whl-next/",
    "index_source": "rocm_pip_install_1000",
    # pip install "rocm[libraries,device-gfx<target>]==<release>" (AMD), torch pulls rocm[libraries] itself
    "rocm_requirement": "rocm[libraries,{devices}]=={release}",
    "torch": {"torch": "2.13.0", "torchvision": "0.28.0", "torchaudio": "2.11.0.2", "local": "rocm10.0.0",
              "device_extra": True, "verified": False, "source": "rocm_pip_torch_1000"},
    # the venv Python AMD's 10.0.0 page names per OS release (the role's own: Ubuntu 22.04 3.11, 24.04 3.12, Debian 12 3.11)
    "python": {"Ubuntu-26.04": "3.14", "Ubuntu-24.04": "3.12", "Ubuntu-22.04": "3.11", "Debian-13": "3.13",
               "Debian-12": "3.11"},
    "python_source": "rocm_pip_install_1000",
    # the fleet wheelhouse (pip download --only-binary=:all: --platform) cannot carry the rocm selector sdist
    "wheelhouse": False,
    "wheelhouse_source": "rocm_pip_sdist",
    "production_source": "rocm_pip_production",
}

ROCM_PIP_TARGETS = (
    {"family": "Ryzen AI Max (Strix Halo)", "targets": ("gfx1151",), "status": "stable", "driver": "inbox",
     "os": _PIP_UBUNTU_RYZEN, "sources": ("rocm_pip_install_1000", "rocm_pip_ryzen_1000", "rocm_pip_production"),
     "notes": "AMD: Ryzen APUs run on the inbox kernel driver of Ubuntu 26.04 / 24.04.4 (OEM kernel 6.17)."},
    {"family": "Ryzen AI 300/400 (Strix, Krackan), Ryzen 200 (Phoenix)", "targets": ("gfx1150", "gfx1152", "gfx1153", "gfx1103"),
     "status": "stable", "driver": "inbox", "os": _PIP_UBUNTU_RYZEN,
     "sources": ("rocm_pip_install_1000", "rocm_pip_ryzen_1000", "rocm_pip_production"),
     "notes": "As gfx1151; TheRock's own page does not mark gfx1153 release ready (rocm_pip_therock_gpus)."},
    {"family": "RDNA4 (RX 9000, AI PRO R9700)", "targets": ("gfx1200", "gfx1201"), "status": "stable", "driver": "amdgpu",
     "os": _PIP_UBUNTU_RADEON, "sources": ("rocm_pip_install_1000", "rocm_pip_radeon_1000", "rocm_pip_production"),
     "notes": "AMD pairs Radeon with its amdgpu driver (30.10 ... 31.40.1), not the kernel's own: auto keeps apt."},
    {"family": "RDNA3 (RX 7000, PRO W7000)", "targets": ("gfx1100", "gfx1101", "gfx1102"), "status": "stable",
     "driver": "amdgpu", "os": _PIP_UBUNTU_RADEON,
     "sources": ("rocm_pip_install_1000", "rocm_pip_radeon_1000", "rocm_pip_production"),
     "notes": "As RDNA4."},
    {"family": "RDNA2 (PRO W6800, V620, RX 6800/6900)", "targets": ("gfx1030",), "status": "stable", "driver": "amdgpu",
     "os": _PIP_UBUNTU_RADEON, "sources": ("rocm_pip_install_1000", "rocm_pip_radeon_1000", "rocm_pip_production"),
     "notes": "As RDNA4."},
    {"family": "RDNA2 without AMD's listing (RX 6700/6600/6500, iGPUs)",
     "targets": ("gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"), "status": "preview",
     "driver": None, "os": {}, "sources": ("rocm_pip_therock_gpus",),
     "notes": "Device wheels exist and TheRock calls them release ready, but AMD's 10.0.0 pages do not list them. "
              "Whether HSA_OVERRIDE_GFX_VERSION is still needed or harmful there: UNVERIFIED (therock)."},
    {"family": "RDNA1 (RX 5000)", "targets": ("gfx1010", "gfx1011", "gfx1012"), "status": "preview", "driver": None,
     "os": {}, "sources": ("rocm_pip_therock_gpus",),
     "notes": "Device wheels exist (TheRock); AMD's 10.0.0 pages do not list them."},
)
ROCM_PIP_NOTES = (
    "AMD calls ROCm 10.0.0 a production release and lists pip as an install method for the stable targets "
    "(rocm_pip_production, rocm_pip_install_1000). Targets without a row are unknown. No target defaults to pip on "
    "Debian (AMD lists none for Radeon/Ryzen), nor with the fleet wheelhouse: torch needs the rocm selector, an sdist, "
    "which pip download --only-binary=:all: cannot fetch (rocm_pip_sdist). The torch 2.13.0 / torchvision 0.28.0 / "
    "torchaudio 2.11.0.2 set of 10.0.0 comes from 3rd-party installs (rocm_pip_torch_1000, UNVERIFIED against AMD's "
    "PyTorch page). Which amdgpu driver pairs with 10.0.0 on Radeon: 30.10 ... 31.40.1 (rocm_pip_radeon_1000)."
)

# ---------------------------------------------------------------------------------------------
# Liger-Kernel (fused Triton kernels: RMSNorm, RoPE, SwiGLU, linear + cross-entropy without the full logits), what
# LLaMA-Factory's enable_liger_kernel applies. radeonlab.llm.llamafactory pins this release into the venv in the pip job of
# the other requirements, without its dependencies (venv_pip_no_deps: torch and Triton are the venv's own; its vars/main.yml
# carries the version as a literal, a unit test keeps the two equal) and probes it on
# every visible GPU (files/kernel_probe.py liger): which Radeon targets its Triton kernels run on is not recorded here
# (nothing public says; see "targets"), so the probe alone decides, host by host.
# ---------------------------------------------------------------------------------------------
# model_type values LLaMA-Factory 0.9.5 patches (src/llamafactory/model/model_utils/liger_kernel.py at tag v0.9.5,
# commit 7af90952: one apply_liger_kernel_to_* per model_type, anything else "does not support liger kernel"), each one
# that Liger-Kernel's MODEL_TYPE_TO_APPLY_LIGER_FN has (src/liger_kernel/transformers/monkey_patch.py at v0.8.2 and at
# main @ead96b61, 2026-08-21: the same 49 names). "glm" is LLaMA-Factory's (it applies Liger's glm4 patch to it).
LIGER_MODEL_TYPES = (
    "gemma", "gemma2", "gemma3", "gemma3_text", "glm", "glm4", "glm4v", "gpt_oss", "granite", "llama", "llava", "mistral",
    "mixtral", "mllama", "olmo2", "paligemma", "phi3", "qwen2", "qwen2_5_vl", "qwen2_vl", "qwen3", "qwen3_5", "qwen3_moe",
    "qwen3_next",
)

LIGER_KERNEL = {
    "version": "0.8.5",
    "model_types": LIGER_MODEL_TYPES,
    "requires": ("torch>=2.1.2", "triton>=2.3.1"),
    "targets": None,  # UNVERIFIED for every Radeon target: the probe decides
    "verified": False,
    "source": (
        "version: docs/performance.md 'Fused kernels' (liger-kernel 0.8.5 from PyPI, measured 2026-12-07 on an H100 with "
        "LLaMA-Factory 0.9.5: 'Liger kernel has been applied', peaks in tests/bench/liger); requires: the PyPI wheel's "
        "metadata (tests/bench/liger/README.md) = setup.py get_default_dependencies() for a cuda/cpu build machine "
        "(linkedin/Liger-Kernel setup.py: the dependencies are chosen where the wheel is built; ROCm source installs get "
        "triton>=3.0.0 only); model types: LIGER_MODEL_TYPES above; ROCm: README 'ROCm: torch >= 2.5.0, triton >= 3.0.0', "
        "CI .github/workflows/amd-ci.yml runs on linux-mi300-gpu-1 (gfx942, ROCm 7.1) only; maintainer on "
        "linkedin/Liger-Kernel#51: 'they share the same compatibility as triton itself ... only tested on Ampere and "
        "Hopper'; https://github.com/hiyouga/LlamaFactory/issues/10511 (R9700, gfx1201, ROCm 6.3: pip install "
        "liger-kernel brought Triton 3.7.0, which fails: cannot get address for 'hipDrvLaunchKernelEx' from libamdhip64.so); "
        "requires checked 2026-12-07: liger_kernel-0.8.5-py3-none-any.whl from PyPI (sha256 "
        "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9), METADATA "
        "Requires-Dist torch>=2.1.2, triton>=2.3.1 (the rest behind extras); ROCm torch's Triton: PyTorch's "
        ".circleci/scripts/binary_populate_env.sh (a stored version, 'Set triton via PYTORCH_EXTRA_INSTALL_REQUIREMENTS for triton rocm "
        "package': TRITON_REQUIREMENT=pytorch-triton-rocm==${TRITON_VERSION} for +rocm wheels), "
        "https://github.com/pytorch/builder/pull/1463 ('PyTorch ROCm wheels from pytorch.org will have pytorch-triton-rocm "
        "as an install dependency'); it is the triton/ package under another name: .github/scripts/build_triton_wheel.py "
        "(@0036db5a: device rocm -> TRITON_WHEEL_NAME pytorch-triton-rocm, built from ROCm/triton's python/triton); later "
        "names: triton-rocm (https://github.com/pytorch/pytorch/issues/186350) and, in AMD's ROCm/pytorch builds, triton "
        "(https://github.com/ROCm/pytorch/pull/2914)"
    ),
    "notes": (
        "0.8.5 (PyPI, 2026-10) is newer than the stored Liger-Kernel snapshot (main @ead96b61 still says 0.8.2): that it "
        "keeps the 0.8.2 model types is an inference (the measured 0.8.5 patched qwen2 and llama). The PyPI wheel requires "
        "the distribution triton: on a ROCm torch (whose Triton is pytorch-triton-rocm, the same triton/ package) pip would "
        "put PyPI's triton over it, the combination LlamaFactory#10511 saw fail on ROCm 6.3. So it is installed with "
        "--no-deps; pip check accepts that one unmet requirement where another distribution ships triton/ inside the range "
        "(module_utils/pip_check.py), and the probe names a Triton that is missing, doubled or not torch's. No Radeon "
        "target is verified."
    ),
}


def liger_kernel_release(version=None):
    """The Liger-Kernel row (``version`` pins one: only the recorded release exists)."""
    if version not in (None, "", LIGER_KERNEL["version"]):
        raise ValueError("liger-kernel %s is not recorded (known: %s)" % (version, LIGER_KERNEL["version"]))
    return dict(LIGER_KERNEL)


# ---------------------------------------------------------------------------------------------
# Names the controller and the LoRA runner share. The runner ships to the hosts (stdlib only, no collection import)
# and reads them from roles/lora_job/files/radeonlab_lora/vocabulary.json, which tests/tools/gen_runner_vocabulary.py
# writes from this table (a unit test fails when the file is stale).
# ---------------------------------------------------------------------------------------------
VOCABULARY = {
    # llamafactory_attention and the job spec's attention: what may be asked for
    "attention_requests": ("auto", "disabled", "sdpa", "fa2"),
    # the ladder a job steps down after a HIP kernel failure, best first
    "attention_fallbacks": ("sdpa", "disabled"),
    # which kernel serves sdpa (SDPA_KERNELS decides per target and torch line)
    "sdpa_kernels": ("flash", "math"),
    # LLaMA-Factory's dataset_info "formatting"
    "dataset_formats": ("alpaca", "sharegpt"),
    # the suffix of the runner's LLaMA-Factory configs, which are JSON text. LLaMA-Factory picks its reader by the
    # suffix: its .json branch fails in 0.9.5 (read_args hands a Path to json.load: hiyouga/LlamaFactory#10316, fix PRs
    # #10354 and #10361 still open on 2026-12-05), its .yaml branch reads through OmegaConf's YAML loader, which reads
    # JSON as the same values (exponent floats such as 5e-05 included). Becomes ".json" with a release that has the fix.
    "llamafactory_config_suffix": ".yaml",
    # the LLaMA-Factory arguments the runner writes itself (render.training_config), which lora_job_extra_args may not
    # set: those of every job, those of a job with a setting (max_samples: lora_job_max_samples > 0, val_size:
    # lora_job_val_size > 0, model_revision: a pinned hub revision, distributed: more than one node), and those the
    # host's plan may add (QLoRA, a paged optimizer, the CPU), which the runner alone can refuse
    "runner_managed_keys": (
        "model_name_or_path", "trust_remote_code", "stage", "do_train", "finetuning_type", "lora_rank", "lora_alpha",
        "lora_dropout", "lora_target", "dataset", "dataset_dir", "template", "cutoff_len", "overwrite_cache",
        "preprocessing_num_workers", "dataloader_num_workers", "packing", "neat_packing", "flash_attn", "output_dir",
        "logging_steps", "save_steps", "save_total_limit", "save_only_model", "plot_loss", "overwrite_output_dir", "report_to",
        "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate", "num_train_epochs", "lr_scheduler_type",
        "warmup_ratio", "bf16", "disable_gradient_checkpointing", "ddp_timeout", "seed", "resume_from_checkpoint"),
    "runner_managed_keys_when": {
        "max_samples": ["max_samples"],
        "val_size": ["val_size", "do_eval", "eval_strategy", "eval_steps", "per_device_eval_batch_size"],
        "model_revision": ["model_revision"],
        "distributed": ["save_on_each_node"],
    },
    "runner_managed_keys_by_plan": ("quantization_bit", "quantization_method", "quantization_type", "double_quantization",
                                    "optim", "use_cpu", "enable_liger_kernel"),
    # lora_job_fused_kernels and the job spec's fused_kernels: auto (where the probe passed and the family is patched) |
    # liger (the same, refused where it cannot be) | off
    "fused_kernels": ("auto", "liger", "off"),
    # the model_type values LLaMA-Factory patches with Liger-Kernel (LIGER_KERNEL below)
    "liger_model_types": LIGER_MODEL_TYPES,
}

# ---------------------------------------------------------------------------------------------
# LLaMA-Factory's chat templates (lora_job_template), per release: the names its data/template.py registers
# (register_template(name=...) at module level; an unknown name stops LLaMA-Factory at start-up with "Template X does
# not exist."). playbooks/validate.yml checks lora_job_template against the venv's own template.py when the venv has
# the release llamafactory_version names, else against this table. Read from the v0.9.5 tag of
# github.com/hiyouga/LLaMA-Factory, src/llamafactory/data/template.py (121 names).
# ---------------------------------------------------------------------------------------------
LLAMAFACTORY_TEMPLATES = {
    "0.9.5": (
        "aeva", "alpaca", "bailing", "bailing_v2", "breeze", "chatglm3", "chatml", "chatml_de", "cohere", "cpm4", "dbrx",
        "deepseek", "deepseek3", "deepseekcoder", "deepseekr1", "default", "dots_ocr", "empty", "ernie", "ernie_nothink",
        "ernie_vl", "exaone", "falcon", "falcon_h1", "fewshot", "gemma", "gemma2", "gemma3", "gemma3n", "gemma4", "gemma4n",
        "glm4", "glm4_5v", "glm4_7", "glm4_moe", "glm4v", "glm_ocr", "glmz1", "gpt_oss", "granite3", "granite3_vision",
        "granite4", "hunyuan", "hunyuan_small", "hy3", "index", "intern2", "intern_s1", "intern_vl", "keye_vl", "kimi_vl",
        "lfm2", "lfm2_vl", "llama2", "llama2_zh", "llama3", "llama4", "llava", "llava_next", "llava_next_llama3",
        "llava_next_mistral", "llava_next_qwen", "llava_next_video", "llava_next_video_mistral", "llava_next_video_yi",
        "llava_next_yi", "mimo", "mimo_v2", "mimo_vl", "minicpm_o", "minicpm_v", "minicpm_v_4_6", "minimax1", "minimax2",
        "ministral", "ministral3", "mistral", "mistral_small", "mllama", "moonlight", "olmo", "openchat", "openchat-3.6",
        "opencoder", "paligemma", "paligemma_chat", "phi", "phi4", "phi4_mini", "phi_small", "pixtral", "qwen", "qwen2_audio",
        "qwen2_omni", "qwen2_vl", "qwen3", "qwen3_5", "qwen3_5_nothink", "qwen3_6", "qwen3_nothink", "qwen3_omni",
        "qwen3_omni_nothink", "qwen3_vl", "qwen3_vl_nothink", "sailor", "seed_coder", "seed_oss", "smollm", "smollm2", "solar",
        "starchat", "telechat2", "vicuna", "video_llava", "xuanyuan", "yi", "yi_vl", "youtu", "youtu_vl", "yuan", "zephyr"),
}


# ---------------------------------------------------------------------------------------------
# PyTorch SDPA on ROCm: which kernel scaled_dot_product_attention runs, per torch release line.
#   native:       AOTriton flash / memory-efficient kernels run as shipped
#   experimental: they run only with AOTRITON_EXPERIMENTAL_ENV (else SDPA silently takes the math kernel)
#   every other target (gfx900/906/908, RDNA1, RDNA2 gfx103x, ...): the math kernel, which keeps the
#   seq x seq score matrix (sized by the LoRA runner as its own memory kind).
# A row covers its torch minor line and, for the last row, every newer torch. Targets are the ones whose
# kernels run: a GPU under HSA_OVERRIDE_GFX_VERSION counts as the target it borrows.
# ---------------------------------------------------------------------------------------------
AOTRITON_EXPERIMENTAL_ENV = {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"}
SDPA_KERNELS_BEFORE = "2.3"  # torch <= 2.2 ships no AOTriton: math kernel on every ROCm target (aotriton_matrix)

SDPA_KERNELS = (
    {"torch": "2.3", "aotriton": "0.4b", "native": ("gfx90a", "gfx942"), "experimental": (),
     "verified": True, "sources": ("aotriton_matrix", "aotriton_src"),
     "notes": "0.4b recognises only 'gfx90a:sramecc+:xnack-' and 'gfx942:sramecc+:xnack-' (TARGET_GPUS MI200;MI300X)."},
    {"torch": "2.4", "aotriton": "0.6b", "native": ("gfx90a", "gfx942"), "experimental": (),
     "verified": True, "sources": ("aotriton_matrix", "aotriton_src"),
     "notes": "As 0.4b: MI200/MI300 only."},
    {"torch": "2.5", "aotriton": "0.7b", "native": ("gfx90a", "gfx942"), "experimental": ("gfx1100",),
     "verified": True, "sources": ("aotriton_matrix", "aotriton_src", "sdpa_navi31"),
     "notes": "Kernels for MI200;MI300X;Navi31. gfx1101 is recognised but has no kernel image (math; inference)."},
    {"torch": "2.6", "aotriton": "0.8b", "native": ("gfx90a", "gfx942"), "experimental": ("gfx1100",),
     "verified": False, "sources": ("aotriton_matrix", "aotriton_src", "sdpa_navi31"),
     "notes": "Same targets as 0.7b; that 2.6's sdp_utils.cpp still gates gfx1100 by name is an inference."},
    {"torch": "2.7", "aotriton": "0.9.2b", "native": ("gfx90a", "gfx942", "gfx1100"), "experimental": ("gfx950", "gfx1201"),
     "verified": False, "sources": ("aotriton_matrix", "aotriton_src", "sdpa_gate"),
     "notes": "0.9.2b: kernels for MI200;MI300X;Navi31;RX9070XT, isArchExperimentallySupported = gfx950, gfx1201. That "
              "2.7 dropped the gfx1100 name check for the AOTriton >= 0.9 gate is an inference; gfx950 kernels only "
              "in the ROCm 6.5/7.0 package."},
    {"torch": "2.8", "aotriton": "0.10b", "native": ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"),
     "experimental": ("gfx1101",),
     "verified": True, "sources": ("aotriton_matrix", "aotriton_src", "sdpa_010"),
     "notes": "gfx1150/gfx1151/gfx1200 are listed experimental but 0.10b's classifier does not know them: math."},
    {"torch": "2.9", "aotriton": "0.11b", "native": ("gfx90a", "gfx942", "gfx950", "gfx1201"),
     "experimental": ("gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200"),
     "unsafe": ("gfx1100",),
     "verified": True, "sources": ("aotriton_matrix", "aotriton_src", "sdpa_011", "sdpa_011_nan"),
     "notes": "gfx1100 back to experimental because its kernels are wrong: AOTriton's 0.11b notes report 'massive accuracy "
              "problems and even NaNs' on gfx1100 and advise Navi3x users to stay on 0.10b, so the experimental switch is "
              "not set for it on this line (math kernel)."},
    {"torch": "2.10", "aotriton": "0.11.1b", "native": ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"),
     "experimental": ("gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200"),
     "verified": True, "sources": ("aotriton_src", "sdpa_0111", "sdpa_torch_aotriton"),
     "notes": "0.11.1b moves gfx1100 back out of experimental (its kernels are fixed) and adds gfx1103."},
    {"torch": "2.11", "aotriton": "0.11.2b", "native": ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"),
     "experimental": ("gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200"),
     "verified": True, "sources": ("aotriton_src", "sdpa_0112", "sdpa_torch_aotriton"),
     "notes": "torch 2.12 is treated as this row: its AOTriton is UNVERIFIED (0.12b was tagged 2026-05-18, after the 2.12 "
              "go-live of 2026-05-12, so a 0.11.x build is likely: an inference)."},
    {"torch": "2.13", "aotriton": "0.12b", "native": ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201"),
     "experimental": ("gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1152", "gfx1153", "gfx1200"),
     "verified": True, "sources": ("aotriton_src", "sdpa_012", "torch_213_notes"),
     "notes": "0.12b moves gfx1100 and gfx1151 out of experimental. That 2.13's sdp_utils.cpp still gates the "
              "experimental targets by the same switch was not re-read (UNVERIFIED, as sdpa_gate)."},
)

SDPA_NOTES = (
    "No AOTriton release has kernels for gfx900/gfx906/gfx908, RDNA1 or RDNA2 (gfx1030; gfx1031-1036 under 10.3.0): "
    "SDPA runs the math kernel there on every torch line. " + SOURCES["sdpa_rdna2"]
)


def sdpa_kernels_for_torch(torch):
    """The SDPA_KERNELS row of a torch version ('2.9.1+rocm6.4', '2.9'), or None for torch without AOTriton (< 2.3).

    Newer torch than the last row gets the last row. Raises ValueError for a string that is no version.
    """
    parts = str(torch or "").strip().split("+", 1)[0].split(".")
    minor = "".join(c for c in parts[1] if c.isdigit()) if len(parts) > 1 else ""  # '2.6.0a0', '2.10'
    if not parts[0].isdigit() or not minor or not parts[1].startswith(minor):
        raise ValueError("torch version %r is not of the form X.Y[.Z]" % (torch,))
    key = (int(parts[0]), int(minor))
    if key < _version_key(SDPA_KERNELS_BEFORE):
        return None
    rows = [row for row in SDPA_KERNELS if _version_key(row["torch"]) <= key]
    row = dict(rows[-1])
    row["source"] = "; ".join(SOURCES[name] for name in row["sources"])
    return row


# ---------------------------------------------------------------------------------------------
# bitsandbytes (4-bit QLoRA). bitsandbytes loads libbitsandbytes_rocm<major><minor>.so for the HIP
# version torch was built with (torch.version.hip), so torch's ROCm line picks the build; a target runs
# only where that build has its kernels (an HSA_OVERRIDE_GFX_VERSION GPU runs the target it borrows).
# ---------------------------------------------------------------------------------------------
_BNB_64 = ("gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
           "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201")
_BNB_70 = _BNB_64 + ("gfx950",)
_BNB_714 = _BNB_70 + ("gfx1010", "gfx1011", "gfx1012", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
                      "gfx1036", "gfx1250")

BITSANDBYTES = (
    {"version": "0.50.2", "min_torch": "2.4", "min_python": "3.10",
     "rocm_builds": {"6.4": _BNB_64, "7.0": _BNB_70, "7.1": _BNB_70, "7.2": _BNB_70, "7.14": _BNB_714, "7.15": _BNB_714},
     "cuda": True, "verified": True, "sources": ("bnb_wheel", "bnb_docs", "bnb_050", "bnb_rdna_cdna", "bnb_lf"),
     "notes": "One PyPI wheel for CUDA and ROCm (43 MB). 4-bit on RDNA since 0.49.0, CDNA since 0.49.2, without NaNs since "
              "0.50.0. No build for ROCm 6.0-6.3 (a torch for those lines gets no bitsandbytes GPU library). gfx906 and "
              "gfx1031/gfx1032 have no kernels in the 6.4-7.2 builds (gfx1031/1032 run with HSA_OVERRIDE_GFX_VERSION=10.3.0)."},
)


def bitsandbytes_release(version=None):
    """The bitsandbytes row to install (``version`` pins one; default the newest recorded)."""
    rows = [row for row in BITSANDBYTES if version in (None, "", row["version"])]
    if not rows:
        raise ValueError("bitsandbytes %s is not recorded (known: %s)" % (version, ", ".join(r["version"] for r in BITSANDBYTES)))
    row = dict(sorted(rows, key=lambda r: _version_key(r["version"]))[-1])
    row["source"] = "; ".join(SOURCES[key] for key in row["sources"])
    return row


def _version_key(text):
    return tuple(int(p) for p in text.split("."))


def torch_wheels_for_line(line):
    """All known wheel rows of one ROCm release line ('6.4'), newest torch first."""
    rows = [row for row in TORCH_WHEELS if row["rocm_line"] == line]
    return sorted(rows, key=lambda r: (r["torch"] is not None, _version_key(r["torch"] or "0")), reverse=True)


def default_rocm_line():
    """The line radeonlab.llm.rocm_repo installs by default: the newest with AMD's Radeon support verified on both
    Ubuntu 22.04 and 24.04 and a verified stable PyTorch wheel index. rocm_repo's defaults carry it as a literal
    (argument_specs must); a unit test keeps the two equal."""
    indexed = {row["rocm_line"] for row in TORCH_WHEELS if row["verified"] and not row["nightly"]}
    lines = [line for line, facts in RELEASES.items()
             if facts["official_verified"] and facts["os_verified"] and {"22.04", "24.04"} <= set(facts["ubuntu"])
             and facts["official_radeon"] and line in indexed]
    return max(lines, key=_version_key)


def torch_for_line(line, torch=None):
    """Pick the wheel row for a ROCm line (``'6.4'``), optionally pinned to a torch version.

    ``torch`` may be ``'2.9.1'`` (exact) or ``'2.9'`` (newest 2.9.x). Without it, the newest verified stable row
    wins, else the newest row. Raises ValueError naming both sides when the pair does not exist.
    """
    rows = torch_wheels_for_line(line)
    if not rows:
        known = sorted({row["rocm_line"] for row in TORCH_WHEELS}, key=_version_key)
        raise ValueError(
            "no PyTorch ROCm wheel index is recorded for ROCm %s (lines with an index: %s); %s"
            % (line, ", ".join(known), "pin an index explicitly or use AMD's repo.radeon.com/rocm/manylinux wheels")
        )
    if torch is not None:
        wanted = str(torch).strip()
        if not wanted or not all(p.isdigit() for p in wanted.split(".")) or len(wanted.split(".")) not in (2, 3):
            raise ValueError("torch version %r is not of the form X.Y or X.Y.Z" % (torch,))
        exact = [r for r in rows if r["torch"] == wanted]
        prefix = [r for r in rows if r["torch"] and len(wanted.split(".")) == 2 and r["torch"].startswith(wanted + ".")]
        matches = exact or prefix
        if not matches:
            raise ValueError(
                "torch %s has no ROCm %s wheel index (known for ROCm %s: %s)"
                % (wanted, line, line, ", ".join("%s (%s)" % (r["torch"] or "nightly", r["index_tag"]) for r in rows))
            )
        row = sorted(matches, key=lambda r: (r["verified"], _version_key(r["torch"])), reverse=True)[0]
    else:
        stable = [r for r in rows if not r["nightly"]]
        verified = [r for r in stable if r["verified"]]
        row = (verified or stable or rows)[0]
    result = dict(row)
    result["index_url"] = TORCH_INDEX_BASE + row["index_tag"]
    result["source"] = SOURCES[row["source"]]
    result["companions_source"] = SOURCES[row.get("companions", "torch_companions")]
    return result

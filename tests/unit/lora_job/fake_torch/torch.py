# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for ``torch`` (put ``tests/unit/lora_job/fake_torch`` on PYTHONPATH of a child process).

Only what ``radeonlab_lora.devices.torch_view`` and ``radeonlab_lora.launch`` touch. Environment knobs:

FAKE_TORCH_DEVICES       JSON list of ``{"name", "total_kib", "arch"}`` (default ``[]``: no GPU)
FAKE_TORCH_HIP           torch.version.hip (default unset: None, a CPU or CUDA wheel)
FAKE_TORCH_CUDA          torch.version.cuda (default unset: None)
FAKE_TORCH_VERSION       torch.__version__ (default ``2.9.1+fake``)
FAKE_TORCH_IMPORT_ERROR  raise ImportError with this text on import
FAKE_TORCH_PEAK_BYTES    what cuda.max_memory_allocated(i) returns for every device (default 0)
"""

import json
import os

if os.environ.get("FAKE_TORCH_IMPORT_ERROR"):
    raise ImportError(os.environ["FAKE_TORCH_IMPORT_ERROR"])

__version__ = os.environ.get("FAKE_TORCH_VERSION", "2.9.1+fake")
_DEVICES = json.loads(os.environ.get("FAKE_TORCH_DEVICES") or "[]")
_STATE = {"initialized": False}


class version:  # pylint: disable=invalid-name,too-few-public-methods
    hip = os.environ.get("FAKE_TORCH_HIP") or None
    cuda = os.environ.get("FAKE_TORCH_CUDA") or None


class _Properties:  # pylint: disable=too-few-public-methods
    def __init__(self, device):
        self.name = device["name"]
        self.total_memory = int(device["total_kib"]) * 1024
        if device.get("arch"):
            self.gcnArchName = device["arch"]  # pylint: disable=invalid-name


class cuda:  # pylint: disable=invalid-name
    @staticmethod
    def is_available():
        return bool(_DEVICES)

    @staticmethod
    def device_count():
        return len(_DEVICES)

    @staticmethod
    def init():
        if not _DEVICES:
            raise RuntimeError("No HIP GPUs are available")
        _STATE["initialized"] = True

    @staticmethod
    def is_initialized():
        return _STATE["initialized"]

    @staticmethod
    def get_device_properties(index):
        cuda.init()
        return _Properties(_DEVICES[index])

    @staticmethod
    def get_device_name(index):
        return _DEVICES[index]["name"]

    @staticmethod
    def max_memory_allocated(index=0):
        if not 0 <= index < len(_DEVICES):
            raise RuntimeError(f"Invalid device argument {index}")
        return int(os.environ.get("FAKE_TORCH_PEAK_BYTES", "0"))

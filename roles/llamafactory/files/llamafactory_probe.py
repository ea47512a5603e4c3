# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read-only probes of the LLaMA-Factory venv (radeonlab.llm.llamafactory), run with the venv's Python.

    python llamafactory_probe.py state --constraints FILE
        {"python": "3.11", "constraints": [...], "llamafactory": "0.9.5" | null}
    python llamafactory_probe.py report --cli VENV/bin/llamafactory-cli [--cache FILE]
        {"python", "torch", "torch_dist" (the installed distribution's version, what pip and the constraints
         file compare; PyPI's CUDA wheel reports torch.__version__ "2.9.1+cu128" for distribution 2.9.1),
         "hip", "cuda", "torch_error", "llamafactory", "flash_attn": {...},
         "env": {parsed `llamafactory-cli env`}, "env_error", "cached": true when it came from FILE}
        With --cache, a report without errors is kept in FILE under the venv's state (every entry of the
        import path's directories with its mtime, the interpreter, the CLI, this probe and the GPU/ROCm environment), and printed
        from there while that state is unchanged: importing torch and `llamafactory-cli env` take ~20 s on a
        re-run that installed nothing. Any pip install or uninstall changes the state.

flash_attn is inspected without importing it (importing the Triton build needs
FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE): "ck" = the compiled extension flash_attn_2_cuda is present
(CK on ROCm, CUDA elsewhere), "triton" = the AMD Triton backend package flash_attn.flash_attn_triton_amd is.
Prints one JSON object on the last line; exit status 0 unless the arguments are wrong.
"""
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
from importlib import metadata

_ENV_LINE = re.compile(r"^-\s+(.+?):\s*(.*)$")
# Environment variables that change what torch and `llamafactory-cli env` report (devices, overrides, paths).
_STATE_ENV_PREFIXES = ("HSA_", "HIP_", "ROCR_", "ROCM_", "CUDA_", "PYTORCH_", "TORCH", "HF_", "LLAMAFACTORY",
                       "FLASH_ATTENTION", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH")


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _spec(name):
    """Is module NAME installed? Found on the path without importing it or its parent packages
    (importlib.util.find_spec would import flash_attn to look for flash_attn.flash_attn_triton_amd)."""
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for part in parts[1:]:
            if spec is None or not spec.submodule_search_locations:
                return False
            spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
        return spec is not None
    except (ImportError, ValueError):
        return False


def env_key(text):
    """'`llamafactory` version' -> 'llamafactory_version', 'GPU type' -> 'gpu_type'."""
    return re.sub(r"[^a-z0-9]+", "_", text.strip().lower()).strip("_")


def parse_env(text):
    """Parse `llamafactory-cli env` output (lines '- Key: value') into {snake_key: value}."""
    result = {}
    for line in text.splitlines():
        match = _ENV_LINE.match(line.strip())
        if match:
            result[env_key(match.group(1))] = match.group(2).strip()
    return result


def state(constraints_file):
    constraints = []
    try:
        with open(constraints_file, encoding="utf-8") as handle:
            constraints = [line.strip() for line in handle if line.strip() and not line.strip().startswith("#")]
    except OSError:
        pass
    return {"python": "%d.%d" % sys.version_info[:2], "constraints": constraints,
            "llamafactory": _version("llamafactory")}


def report(cli):
    result = {"python": "%d.%d.%d" % sys.version_info[:3], "torch": None, "torch_dist": _version("torch"),
              "hip": None, "cuda": None,
              "torch_error": None, "llamafactory": _version("llamafactory"), "env": {}, "env_error": None}
    try:
        import torch  # noqa: F401 pylint: disable=import-outside-toplevel
        result["torch"] = torch.__version__
        result["hip"] = getattr(torch.version, "hip", None)
        result["cuda"] = getattr(torch.version, "cuda", None)
    except Exception as exc:  # pylint: disable=broad-except
        result["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
    installed = _version("flash_attn") or _version("flash-attn")
    result["flash_attn"] = {
        "installed": bool(installed) and _spec("flash_attn"),
        "version": installed,
        "ck": bool(installed) and _spec("flash_attn_2_cuda"),
        "triton": bool(installed) and _spec("flash_attn.flash_attn_triton_amd"),
    }
    try:
        proc = subprocess.run([cli, "env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=600, check=False)
        result["env"] = parse_env(proc.stdout)
        if proc.returncode != 0 or not result["env"]:
            result["env_error"] = "rc %d: %s" % (proc.returncode, (proc.stderr or proc.stdout).strip()[-2000:])
    except (OSError, subprocess.SubprocessError) as exc:
        result["env_error"] = "%s: %s" % (type(exc).__name__, exc)
    return result


def venv_state(cli, environ=None, probe_source=__file__):
    """A digest of what the report depends on; any pip install or uninstall changes a site-packages entry."""
    environ = os.environ if environ is None else environ
    digest = hashlib.sha256()
    with open(probe_source, "rb") as handle:
        digest.update(handle.read())
    digest.update(repr((sys.executable, sys.version)).encode())
    for name in sorted(environ):
        if name.startswith(_STATE_ENV_PREFIXES):
            digest.update(repr((name, environ[name])).encode())
    # sys.path[0] is this script's own (temporary) directory; the rest are the venv's and the stdlib's.
    for path in [cli] + sorted(p for p in sys.path[1:] if os.path.isdir(p)):
        digest.update(repr((path, os.stat(path).st_mtime_ns)).encode())
        if os.path.isdir(path):
            digest.update(repr(sorted((e.name, e.stat().st_mtime_ns) for e in os.scandir(path))).encode())
    return digest.hexdigest()


def cached_report(cli, cache):
    try:
        key = venv_state(cli)
    except OSError:
        return report(cli)
    try:
        with open(cache, encoding="utf-8") as handle:
            kept = json.load(handle)
        if kept.get("state") == key:
            return dict(kept["report"], cached=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    result = report(cli)
    if not result["torch_error"] and not result["env_error"]:
        partial = "%s.%d" % (cache, os.getpid())
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump({"state": key, "report": result}, handle, sort_keys=True)
        os.replace(partial, cache)
    return result


def main(argv):
    if len(argv) == 3 and argv[0] == "state" and argv[1] == "--constraints":
        out = state(argv[2])
    elif len(argv) == 3 and argv[0] == "report" and argv[1] == "--cli":
        out = report(argv[2])
    elif len(argv) == 5 and argv[0] == "report" and argv[1] == "--cli" and argv[3] == "--cache":
        out = cached_report(argv[2], argv[4])
    else:
        sys.stderr.write("usage: llamafactory_probe.py state --constraints FILE | report --cli PATH [--cache FILE]\n")
        return 2
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

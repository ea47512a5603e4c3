# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the installed LLaMA-Factory's parser accepts, read from its source files without importing it (an import pulls in
torch and transformers: seconds on every ``check``): the argument names of its dataclasses (llamafactory/hparams/*.py)
and of transformers' training arguments, which LLaMA-Factory's TrainingArguments extends. ``check`` refuses a job whose
``extra_args`` key LLaMA-Factory would reject at start-up ("Some keys are not used by the HfArgumentParser"), or whose
``report_to`` names a tracker the venv lacks the package of, before the job spec is written or the previous job's API is
stopped. The chat template is checked earlier, by the play
(plugins/module_utils/site_inputs.py template_problems, from the venv's data/template.py). Where LLaMA-Factory or
transformers is not installed (or its layout is not the one read here) nothing is checked: LLaMA-Factory still says it
at start-up.
"""

from __future__ import annotations

import difflib
import glob
import importlib.util
import os
import re

# What transformers' callback for each report_to imports (integration_utils.is_tensorboard_available / is_mlflow_available):
# without it the trainer stops at start-up. radeonlab.llm.llamafactory installs tensorboardX or mlflow-skinny (which
# provides the mlflow package) with llamafactory_report_to.
TRACKER_PACKAGES = {"tensorboard": ("tensorboard", "tensorboardX"), "mlflow": ("mlflow",)}
FIELD_RE = re.compile(r"^    ([a-z_][a-z0-9_]*)\s*:\s*[^=\n]+=", re.MULTILINE)  # a class attribute with a default
TRANSFORMERS_ARGS = ("training_args.py", "training_args_seq2seq.py")


def package_dir(name: str) -> str | None:
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return os.path.dirname(found.origin) if found and found.origin else None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def argument_names(llamafactory_dir: str, transformers_dir: str | None) -> set:
    sources = sorted(glob.glob(os.path.join(llamafactory_dir, "hparams", "*.py")))
    sources += [os.path.join(transformers_dir, name) for name in TRANSFORMERS_ARGS] if transformers_dir else []
    return {name for path in sources for name in FIELD_RE.findall(_read(path))}


def _nearest(name: str, known: set) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def tracker_problems(spec: dict, installed=None) -> list[str]:
    """``report_to`` whose package is not in the venv (``installed``: name -> bool, default: importable here)."""
    installed = installed or (lambda name: package_dir(name) is not None)
    wanted = TRACKER_PACKAGES.get(spec.get("report_to"), ())
    if not wanted or any(installed(name) for name in wanted):
        return []
    return [f"report_to {spec['report_to']} needs {' or '.join(wanted)} in LLaMA-Factory's venv: run radeonlab.llm.llamafactory "
            f"with llamafactory_report_to {spec['report_to']} (site.yml passes lora_job_report_to)"]


def problems(spec: dict, llamafactory_dir: str | None = None, transformers_dir: str | None = None, installed=None) -> list[str]:
    """What LLaMA-Factory would reject at start-up in this job: ``extra_args`` keys that are none of its arguments, a
    ``report_to`` whose package is missing (``installed``: see :func:`tracker_problems`)."""
    llamafactory_dir = llamafactory_dir or package_dir("llamafactory")
    if not llamafactory_dir:
        return []
    found = tracker_problems(spec, installed)
    transformers_dir = transformers_dir or package_dir("transformers")
    arguments = argument_names(llamafactory_dir, transformers_dir) if transformers_dir else set()
    if not arguments:
        return found
    return found + [f"extra_args key {key!r} is not an argument of the installed LLaMA-Factory or transformers{_nearest(key, arguments)}"
                    for key in sorted(set(spec["extra_args"]) - arguments)]

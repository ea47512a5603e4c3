# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What LLaMA-Factory would reject at start-up, read from its source files (radeonlab_lora.upstream): an extra_args key that is
no argument of its parser. The fixtures are the shapes of LLaMA-Factory 0.9.5's llamafactory/hparams/*.py and transformers
5.6.0's training_args.py."""

from __future__ import annotations

import pytest

from radeonlab_lora import spec as jobspec, upstream

HPARAMS_PY = '''
@dataclass
class DataArguments:
    template: str | None = field(
        default=None,
    )
    cutoff_len: int = field(default=2048)
    enable_liger_kernel: bool = False

    def __post_init__(self):
        self.template = None
'''
TRANSFORMERS_PY = '''
@dataclass
class TrainingArguments:
    max_steps: int = field(default=-1, metadata={"help": "..."})
    include_num_input_tokens_seen: Optional[Union[str, bool]] = field(
        default="no",
    )
'''


@pytest.fixture(name="installed")
def fixture_installed(tmp_path):
    llamafactory = tmp_path / "llamafactory"
    (llamafactory / "hparams").mkdir(parents=True)
    (llamafactory / "hparams" / "data_args.py").write_text(HPARAMS_PY)
    transformers = tmp_path / "transformers"
    transformers.mkdir()
    (transformers / "training_args.py").write_text(TRANSFORMERS_PY)
    return str(llamafactory), str(transformers)


def job(**overrides) -> dict:
    return jobspec.normalize({"model": "/m", "template": "qwen", "dataset": {"name": "d", "file": "/d.json"}, "output_dir": "/o", **overrides})


# job fields -> fragments of the problems (empty: accepted)
CASES = {
    "known arguments": ({"extra_args": {"max_steps": 5, "enable_liger_kernel": True}}, []),
    "a misspelt argument": ({"extra_args": {"max_step": 5}}, ["extra_args key 'max_step' is not an argument", "(did you mean 'max_steps'?)"]),
    "an argument of nothing": ({"extra_args": {"zzz_unknown": 1}}, ["extra_args key 'zzz_unknown'"]),
    "a method, not a field": ({"extra_args": {"post_init": 1}}, ["extra_args key 'post_init'"]),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_what_llamafactory_would_reject(case, installed):
    fields, fragments = case
    found = " | ".join(upstream.problems(job(**fields), *installed))
    if not fragments:
        assert found == ""
    for fragment in fragments:
        assert fragment in found, found


def test_nothing_is_checked_where_llamafactory_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(upstream, "package_dir", lambda name: None)
    assert upstream.problems(job(extra_args={"max_step": 1})) == []
    assert upstream.problems(job(extra_args={"max_step": 1}), str(tmp_path / "missing"), str(tmp_path / "missing")) == []


def test_arguments_are_not_checked_without_transformers(installed, monkeypatch):
    monkeypatch.setattr(upstream, "package_dir", lambda name: None)
    assert upstream.problems(job(extra_args={"max_steps": 5}), installed[0], None) == []


# report_to, the packages the venv has -> fragments of the problems (empty: accepted)
TRACKER_CASES = {
    "none needs nothing": ("none", set(), []),
    "tensorboard through tensorboardX": ("tensorboard", {"tensorboardX"}, []),
    "tensorboard through tensorboard": ("tensorboard", {"tensorboard"}, []),
    "tensorboard without either": ("tensorboard", {"mlflow"}, ["report_to tensorboard needs tensorboard or tensorboardX",
                                                               "llamafactory_report_to tensorboard"]),
    "mlflow through mlflow-skinny's mlflow": ("mlflow", {"mlflow"}, []),
    "mlflow without it": ("mlflow", {"tensorboardX"}, ["report_to mlflow needs mlflow in LLaMA-Factory's venv",
                                                       "site.yml passes lora_job_report_to"]),
}


@pytest.mark.parametrize("case", TRACKER_CASES.values(), ids=list(TRACKER_CASES))
def test_a_tracker_whose_package_the_venv_lacks(case, installed):
    report_to, have, fragments = case
    found = upstream.problems(job(report_to=report_to), *installed, installed=lambda name: name in have)
    assert len(found) == (1 if fragments else 0), found
    for fragment in fragments:
        assert fragment in found[0], found


def test_no_tracker_is_checked_where_llamafactory_is_not_installed(monkeypatch):
    monkeypatch.setattr(upstream, "package_dir", lambda name: None)
    assert upstream.problems(job(report_to="tensorboard")) == []


def test_a_tracker_is_checked_without_transformers_too(installed, monkeypatch):
    monkeypatch.setattr(upstream, "package_dir", lambda name: None)
    assert upstream.problems(job(report_to="mlflow"), installed[0], None)[0].startswith("report_to mlflow needs mlflow")

"""docs/architecture.md stays true: every path it names exists, and every ``path::symbol`` is defined there."""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
# `plugins/module_utils/gfx.py::gpu_support`, `roles/pytorch_rocm/`, `playbooks/validate.yml` (backticked, from the tree's top)
NAMED = sorted(set(re.findall(r"`((?:plugins|roles|playbooks|tests|inventory|docs)/[^`\s]*)`", DOC)))


def _defined(path, symbol):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    names |= {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
              for target in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(target, ast.Name)}
    return symbol in names


def test_the_page_names_files():
    assert len(NAMED) > 20


@pytest.mark.parametrize("named", NAMED)
def test_named_path_and_symbol_exist(named):
    path, _separator, symbol = named.partition("::")
    assert (ROOT / path).exists(), "docs/architecture.md names %s, which does not exist" % path
    if symbol:
        assert _defined(ROOT / path, symbol), "docs/architecture.md names %s, which %s does not define" % (symbol, path)

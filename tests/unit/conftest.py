"""Make the collection importable as ``ansible_collections.radeonlab.llm`` for plain pytest.

The checkout itself is not laid out under ``ansible_collections/``; a symlink tree in the
pytest cache directory gives it that name without copying anything.
"""
import os
import sys

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_TREE = os.path.join(_ROOT, ".cache", "collection_path")
_LINK = os.path.join(_TREE, "ansible_collections", "radeonlab", "llm")

if not os.path.islink(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(_ROOT, _LINK)
if _TREE not in sys.path:
    sys.path.insert(0, _TREE)

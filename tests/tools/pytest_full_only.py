"""pytest plugin of the molecule verifiers: a check marked ``@pytest.mark.full_only`` runs in ``make test-full`` only.

``make test`` must end within 45 minutes on CI's 2-core machine (issue 46), so the slowest checks that replay a play
many times (the site's job faults, its two-host jobs, check mode on the fleet, the apt and pip faults) run in
``make test-full``, which sets RADEONLAB_TEST_FULL=1. Without it they are deselected, never skipped, and listed by
name at the end of the verify output; tests/tools/molecule_all.sh loads this plugin and prints their count in its
table. A scenario run with plain ``molecule test`` does not load the plugin and runs every check.
"""

import os

import pytest

MARK = "full_only"
LEFT_OUT = "left to make test-full"


def _full():
    return os.environ.get("RADEONLAB_TEST_FULL", "") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "%s: run in make test-full only (tests/tools/pytest_full_only.py)" % MARK)
    config.radeonlab_left_out = []


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if _full():
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker(MARK) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        config.radeonlab_left_out = sorted({item.originalname or item.name for item in drop})


def pytest_terminal_summary(terminalreporter, config):
    left_out = getattr(config, "radeonlab_left_out", [])
    if left_out:
        terminalreporter.write_line("%s: %d check(s): %s" % (LEFT_OUT, len(left_out), ", ".join(left_out)))

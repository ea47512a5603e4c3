# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make the collection importable as ``ansible_collections.radeonlab.llm`` for plain pytest.

The checkout itself is not laid out under ``ansible_collections/``; a symlink tree in the
pytest cache directory gives it that name without copying anything.
"""
import os
import sys

from ansible.plugins.loader import init_plugin_loader

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_TREE = os.path.join(_ROOT, ".cache", "collection_path")
_LINK = os.path.join(_TREE, "ansible_collections", "radeonlab", "llm")

if not os.path.islink(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(_ROOT, _LINK)
if _TREE not in sys.path:
    sys.path.insert(0, _TREE)
# Templar (role vars rendered by tests) finds the collection's filters, radeonlab.llm.*, on the same tree.
init_plugin_loader([_TREE])


# --- no silent skips -------------------------------------------------------------------------
# A unit test needs nothing outside this repository, so a skipped test is a broken test: the run
# fails and says how many were skipped (`make units` runs pytest with -rs, which lists the reasons).
# The one exception is a skip whose reason starts with HARDWARE_SKIP (a test that needs a real GPU);
# those are counted and listed too, but do not fail the run.
HARDWARE_SKIP = "hardware:"


def _skip_reason(report):
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).replace("Skipped: ", "", 1)
    return str(report.longrepr)


def _skips(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    reports = reporter.stats.get("skipped", []) if reporter is not None else []
    reasons = [_skip_reason(r) for r in reports]
    return [r for r in reasons if not r.startswith(HARDWARE_SKIP)], [r for r in reasons if r.startswith(HARDWARE_SKIP)]


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # pylint: disable=unused-argument
    failing, tolerated = _skips(config)
    if failing:
        terminalreporter.write_line("%d skipped test(s): a unit test must not skip (tests/unit/conftest.py); the run fails" % len(failing), red=True)
    if tolerated:
        terminalreporter.write_line("%d test(s) skipped for want of hardware (reason starts with %r)" % (len(tolerated), HARDWARE_SKIP))


def pytest_sessionfinish(session, exitstatus):
    failing, _tolerated = _skips(session.config)
    if failing and exitstatus == 0:
        session.exitstatus = 1

# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: progress
type: stdout
short_description: Ansible's default output, with the waits of a long task as progress lines
version_added: 0.2.0
description:
  - The default stdout callback, except for a task that polls until something is done (C(until) and C(retries), such
    as the waits for pip installs, the WebUI and the API). Instead of C(FAILED - RETRYING ... (N retries left)) after
    every poll, which reads as a failure, each poll prints one line saying what is awaited, the attempt, the time
    waited so far and how long the task may still wait. With C(-vv) the poll's result follows, as the default callback
    does.
  - Set it in C(ansible.cfg) (C(stdout_callback = radeonlab.llm.progress)), as this collection's C(ansible.cfg) does.
author:
  - radeonlab.llm maintainers (@radeonlab)
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout callback in the configuration
"""

import time

from ansible import constants as C
from ansible.plugins.callback.default import CallbackModule as DefaultCallbackModule


def _clock(seconds):
    seconds = int(max(0, seconds))
    return "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def progress_line(host, task, attempt, retries, waited, delay):
    """The line one poll prints: what is awaited, the attempt, the time waited, the time the task may still wait."""
    left = max(0, retries - attempt)
    return "waiting [%s]: %s - poll %d of %d, %s so far, up to %s more" % (
        host, task, attempt, retries, _clock(waited), _clock(left * delay))


class CallbackModule(DefaultCallbackModule):
    """The default callback with progress lines for polling tasks."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "radeonlab.llm.progress"

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._task_started = time.monotonic()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_started = time.monotonic()
        super(CallbackModule, self).v2_playbook_on_task_start(task, is_conditional)

    def v2_runner_retry(self, result):
        values = getattr(result, "result", None)
        if not isinstance(values, dict):  # ansible-core 2.18: the TaskResult's private dict
            values = result._result  # pylint: disable=protected-access
        task = getattr(result, "task_name", None) or result._task.get_name()  # pylint: disable=protected-access
        delay = getattr(result._task, "delay", None) or 0  # pylint: disable=protected-access
        # the task's retries: the polls it makes at most (the result's "retries" counts one more)
        polls = getattr(result._task, "retries", None)  # pylint: disable=protected-access
        polls = polls if isinstance(polls, int) and polls > 0 else int(values.get("retries", 1)) - 1
        msg = progress_line(self.host_label(result), task, int(values.get("attempts", 0)), polls,
                            time.monotonic() - self._task_started, float(delay))
        if self._run_is_verbose(result, verbosity=2):
            msg += " Result was: %s" % self._dump_results(values)
        self._display.display(msg, color=C.COLOR_DEBUG)

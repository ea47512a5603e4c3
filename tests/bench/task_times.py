"""Where a run's time went, read from an Ansible log (ANSIBLE_LOG_PATH): each task's wall time, summed by task name.

    python tests/bench/task_times.py LOG [--top 25]

A task's time runs from its TASK line to the next TASK, PLAY or PLAY RECAP line of the same ansible-playbook process
(the log names each line's pid), so it covers every host the task ran on. Each ansible-playbook run is listed with its
length, then the costliest tasks over all runs.
"""

import argparse
import collections
import datetime
import re

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) p=(\d+) u=\S+ n=\S+(?: \w+)?\| (.*)$")
MARK = re.compile(r"^(TASK|RUNNING HANDLER) \[(.+?)\]|^(PLAY \[.*\]|PLAY RECAP|PLAYBOOK: .*)")


def _time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")


def marks(lines):
    """(pid, time, kind, name) for every TASK, handler, PLAY, PLAYBOOK and PLAY RECAP line."""
    for line in lines:
        stamped = STAMP.match(line)
        if not stamped:
            continue
        mark = MARK.match(stamped.group(3))
        if mark:
            name = mark.group(2) or mark.group(3)
            kind = "task" if mark.group(1) else name.split(" ", 1)[0].rstrip(":")
            yield stamped.group(2), _time(stamped.group(1)), kind, name


def durations(lines):
    """({task name: [seconds, count]}, [(pid, playbook line, first time, seconds)])."""
    tasks = collections.defaultdict(lambda: [0.0, 0])
    runs, open_task = {}, {}
    for pid, when, kind, name in marks(lines):
        if pid in open_task:
            started, task = open_task.pop(pid)
            tasks[task][0] += (when - started).total_seconds()
            tasks[task][1] += 1
        if kind == "task":
            open_task[pid] = (when, name)
        run = runs.setdefault(pid, [name, when, when])
        run[2] = when
        if kind == "PLAYBOOK":
            run[0] = name
    return tasks, [(pid, run[0], run[1], (run[2] - run[1]).total_seconds()) for pid, run in runs.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    with open(args.log, encoding="utf-8", errors="replace") as handle:
        tasks, runs = durations(handle)
    total = sum(run[3] for run in runs)
    print("runs (%d, %.0f s in all):" % (len(runs), total))
    for pid, playbook, first, seconds in sorted(runs, key=lambda run: run[2]):
        print("  %s  %7.1f s  p=%s %s" % (first.strftime("%H:%M:%S"), seconds, pid, playbook[:90]))
    print("costliest tasks over all runs (s, times run, name):")
    for name, (seconds, count) in sorted(tasks.items(), key=lambda item: -item[1][0])[: args.top]:
        print("  %7.1f  %3d  %s" % (seconds, count, name[:110]))


if __name__ == "__main__":
    main()

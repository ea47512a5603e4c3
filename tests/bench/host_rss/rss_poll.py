# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run one training command and measure the HOST memory (CPU RAM) of its process tree.

    python3 rss_poll.py --shape 7b --steps 10 --model-dir /tmp/hr/qwen2-7b --log LOG --csv CSV --result FILE -- CMD...

Every --interval seconds (0.2) it walks /proc for the child and all its descendants and sums VmRSS
(and its parts RssAnon / RssFile / RssShmem, and Pss from smaps_rollup, which does not double-count
the pages that forked workers share with their parent). The child's stdout+stderr go to --log and
are scanned for phase markers (N = --steps, the run's max_steps; tqdm redraws with \r):
  train_begin  transformers' "***** Running training *****" or tqdm's " 0/N [" bar, whichever comes
               first (model loaded and moved, data tokenised, Trainer built; no step run yet)
  first_step   after train_begin, tqdm's " 1/N [" or the first "{'loss': " log line (run with
               logging_steps=1), whichever comes first: the first optimizer step has finished
  train_end    the sitecustomize timer's "SPIKE_RESULT {...}" line (on_train_end; it also gives the
               torch peak allocated GPU memory)
Phases: load = [start, train_begin); step1 = [train_begin, first_step); steps = [first_step,
train_end); post = after train_end (adapter save, exit). VmHWM is the main (direct child) process's
ru_maxrss from wait4(), i.e. its VmHWM at exit. One line goes to stdout and is appended to --result.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

GIB = 2 ** 30
PAT_SPIKE = re.compile(rb"SPIKE_RESULT (\{[^\n]*\})")
MARKS = ("train_begin", "first_step", "train_end")


def read_status(pid):
    """kB fields of /proc/PID/status we need, in bytes; None if the process is gone."""
    want = ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM")
    out = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                k, _sep, v = line.partition(b":")
                k = k.decode()
                if k in want:
                    out[k] = int(v.split()[0]) * 1024
    except (OSError, ValueError):
        return None
    return out


def read_pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def descendants(root):
    """root and every process below it, from the ppid field of /proc/*/stat."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                s = f.read()
            ppid = int(s[s.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


class Reader(threading.Thread):
    """Copies the child's output to the log and timestamps the phase markers (tqdm uses \\r)."""

    def __init__(self, stream, log, t0, steps):
        super().__init__(daemon=True)
        self.stream, self.log, self.t0 = stream, log, t0
        self.marks, self.spike, self.tail = {}, None, b""
        # tqdm's bar of the training loop is the only one whose total is max_steps ("0/10 [")
        self.pat_begin = re.compile(rb"\*\*\*\*\* Running training \*\*\*\*\*|(?<![0-9])0/%d \[" % steps)
        self.pat_step1 = re.compile(rb"(?<![0-9])1/%d \[|\{'loss': " % steps)

    def run(self):
        while True:
            chunk = os.read(self.stream.fileno(), 65536)
            if not chunk:
                break
            self.log.write(chunk)
            self.log.flush()
            buf = self.tail + chunk
            now = time.monotonic() - self.t0
            if "train_begin" not in self.marks:
                m = self.pat_begin.search(buf)
                if m:
                    self.marks["train_begin"] = now
                    buf = buf[m.end():]  # the first step is looked for only after the begin marker
            if "train_begin" in self.marks and "first_step" not in self.marks and self.pat_step1.search(buf):
                self.marks["first_step"] = now
            m = PAT_SPIKE.search(buf)
            if m and self.spike is None:
                try:
                    self.spike = json.loads(m.group(1))
                    self.marks.setdefault("train_end", now)
                except ValueError:
                    pass  # line split across chunks: the next chunk carries the tail
            self.tail = buf[-4096:]


def phase_of(t, marks):
    if "train_begin" not in marks or t < marks["train_begin"]:
        return "load"
    if "first_step" not in marks or t < marks["first_step"]:
        return "step1"
    if "train_end" not in marks or t < marks["train_end"]:
        return "steps"
    return "post"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", required=True)
    ap.add_argument("--tag", default="", help="extra label, e.g. cold/warm page cache")
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--result", default=None, help="append the result line here")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--steps", type=int, required=True, help="max_steps of the run (tqdm's total)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

    weights = sum(os.path.getsize(os.path.join(a.model_dir, n)) for n in os.listdir(a.model_dir)
                  if n.endswith((".safetensors", ".bin")))
    t0 = time.monotonic()
    log = open(a.log, "ab")
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reader = Reader(child.stdout, log, t0, a.steps)
    reader.start()
    csv = open(a.csv, "w") if a.csv else None
    if csv:
        csv.write("t_s,phase,nproc,rss,anon,file,shmem,pss,main_rss,main_hwm\n")
    peak = {}          # phase -> dict of maxima
    at_load_peak = {}  # anon/file split at the moment of the load-phase RSS peak
    main_hwm, nproc_max, samples, rusage, rc = 0, 0, 0, None, None
    while True:
        pid_done, status, ru = os.wait4(child.pid, os.WNOHANG)
        if pid_done:
            rusage, rc = ru, os.waitstatus_to_exitcode(status)
            break
        t = time.monotonic() - t0
        tot = dict(rss=0, anon=0, file=0, shmem=0, pss=0)
        procs = descendants(child.pid)
        main = {}
        for p in procs:
            st = read_status(p)
            if not st or "VmRSS" not in st:
                continue  # kernel thread or gone
            tot["rss"] += st["VmRSS"]
            tot["anon"] += st.get("RssAnon", 0)
            tot["file"] += st.get("RssFile", 0)
            tot["shmem"] += st.get("RssShmem", 0)
            tot["pss"] += read_pss(p)
            if p == child.pid:
                main = st
        main_hwm = max(main_hwm, main.get("VmHWM", 0))
        nproc_max = max(nproc_max, len(procs))
        ph = phase_of(t, reader.marks)
        pk = peak.setdefault(ph, dict(rss=0, anon=0, file=0, shmem=0, pss=0))
        if ph == "load" and tot["rss"] > pk["rss"]:
            at_load_peak = dict(tot)
        for k, v in tot.items():
            pk[k] = max(pk[k], v)
        samples += 1
        if csv:
            csv.write(f"{t:.2f},{ph},{len(procs)},{tot['rss']},{tot['anon']},{tot['file']},{tot['shmem']},"
                      f"{tot['pss']},{main.get('VmRSS', 0)},{main.get('VmHWM', 0)}\n")
        time.sleep(max(0.0, a.interval - (time.monotonic() - t0 - t)))
    reader.join(timeout=10)
    wall = time.monotonic() - t0
    hwm = max(main_hwm, rusage.ru_maxrss * 1024 if rusage else 0)  # ru_maxrss is in KiB on Linux

    def g(ph, k="rss"):
        v = peak.get(ph, {}).get(k)
        return f"{v / GIB:.2f}" if v else "n/a"

    spike = reader.spike or {}
    load = peak.get("load", {}).get("rss", 0)
    line = (f"HOST_RSS shape={a.shape}{('/' + a.tag) if a.tag else ''} weights_GiB={weights / GIB:.2f} "
            f"load_peak_GiB={g('load')} steps_peak_GiB={g('steps')} vmhwm_GiB={hwm / GIB:.2f} "
            f"gpu_peak_alloc_GiB={spike.get('max_mem_alloc_GiB', 'n/a')} "
            f"load_over_weights={load / weights:.2f} | "
            f"load_peak_anon/file_GiB={at_load_peak.get('anon', 0) / GIB:.2f}/{at_load_peak.get('file', 0) / GIB:.2f} "
            f"steps_peak_anon/file_GiB={g('steps', 'anon')}/{g('steps', 'file')} "
            f"pss_load/steps_GiB={g('load', 'pss')}/{g('steps', 'pss')} step1_peak_GiB={g('step1')} "
            f"post_peak_GiB={g('post')} main_hwm_polled_GiB={main_hwm / GIB:.2f} "
            f"t_begin/step1/end_s={'/'.join(str(round(reader.marks[k], 1)) if k in reader.marks else 'n/a' for k in MARKS)} "
            f"steps={spike.get('steps', 'n/a')} nproc_max={nproc_max} samples={samples} wall_s={wall:.0f} rc={rc}")
    print(line, flush=True)
    if a.result:
        with open(a.result, "a") as f:
            f.write(line + "\n")
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())

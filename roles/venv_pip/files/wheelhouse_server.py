# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Serve the fleet wheelhouse from the controller for one ansible-playbook run (radeonlab.llm.venv_pip, started by pytorch_rocm's serve).

    python wheelhouse_server.py start --dir DIR --port PORT --bind ADDR [--bind ADDR ...]
    python wheelhouse_server.py stop --dir DIR --port PORT

Read-only, and only what pip needs: GET / is a listing of the wheels that wheelhouse.py recorded in
DIR/.radeonlab/<key>.json, each link carrying the sha256 recorded at download (pip checks it, so a wheel
changed after its download is refused); GET /<name>.whl serves such a wheel. Everything else is 404:
no stamps, logs, other files or directories. One line per request goes to DIR/.radeonlab/access-<port>.log.

start is idempotent and returns once the server answers; the server runs detached and ends by itself
when the ansible-playbook run that started it ends (failed or interrupted runs included), or on stop.
Both print one JSON object: {"changed": bool, "pid": N, "urls": [...], "msg": "..."}.
"""
import argparse
import datetime
import glob
import http.server
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse

from wheelhouse import links_page  # files/ is sys.path[0]: the page format is wheelhouse.py's

STATE = ".radeonlab"  # wheelhouse.py's state folder
_WHEEL = re.compile(r"^[A-Za-z0-9_.+!-]+\.whl$")
_PLAYBOOK = re.compile(r"(^|/)ansible-playbook$")


def recorded_wheels(directory):
    """{name: sha256} of every wheel a completed download recorded with its hash (a record without one is
    not served: wheelhouse.py downloads that set again and records the hashes)."""
    wheels = {}
    for stamp in sorted(glob.glob(os.path.join(directory, STATE, "*.json"))):
        try:
            with open(stamp, encoding="utf-8") as handle:
                files = json.load(handle).get("files") or []
        except (OSError, ValueError, AttributeError):
            continue
        for entry in files:
            name = entry.get("name", "") if isinstance(entry, dict) else ""
            if _WHEEL.match(name) and entry.get("sha256"):
                wheels[name] = entry["sha256"]
    return wheels


def listing(directory):
    """The page pip's --find-links reads: the recorded wheels that are plain files, with their recorded sha256."""
    return links_page({name: digest for name, digest in recorded_wheels(directory).items()
                       if os.path.isfile(os.path.join(directory, name)) and not os.path.islink(os.path.join(directory, name))})


def process_start(pid):
    """Start time of a process (clock ticks since boot), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def is_playbook(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            argv = handle.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return False
    return any(_PLAYBOOK.search(arg) for arg in argv[:2])


def playbook_run(pid):
    """The ansible-playbook process this one runs under: the nearest ancestor whose parent is not one
    (its task workers are forks of it and carry the same command line)."""
    while pid > 1:
        if is_playbook(pid) and not is_playbook(parent_of(pid)):
            return pid
        pid = parent_of(pid)
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    directory = "."
    log_path = os.devnull
    server_version = "radeonlab-wheelhouse"
    sys_version = ""
    _lock = threading.Lock()

    def do_HEAD(self):
        self._answer(send_body=False)

    def do_GET(self):
        self._answer(send_body=True)

    def _answer(self, send_body):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        name = path[1:]
        size = 0
        if path == "/" and not send_body:  # "is it up?" (each host asks before installing): no hashing
            self._head(200, "text/html; charset=utf-8", None)
        elif path == "/":
            body = listing(self.directory).encode("utf-8")
            self._head(200, "text/html; charset=utf-8", len(body))
            size = self._write(body, send_body)
        elif _WHEEL.match(name) and name in recorded_wheels(self.directory) and \
                os.path.isfile(os.path.join(self.directory, name)) and not os.path.islink(os.path.join(self.directory, name)):
            full = os.path.join(self.directory, name)
            self._head(200, "application/octet-stream", os.path.getsize(full))
            if send_body:
                with open(full, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        size += self._write(block, True)
        else:
            body = b"not found\n"
            self._head(404, "text/plain", len(body))
            size = self._write(body, send_body)
        self._log(size)

    def _head(self, code, kind, length):
        self._code = code
        self.send_response(code)
        self.send_header("Content-Type", kind)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _write(self, data, send_body):
        if send_body:
            self.wfile.write(data)
            return len(data)
        return 0

    def _log(self, size):
        line = "%s %s %s %s %s %d\n" % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            self.client_address[0], self.command, self.path.replace(" ", "%20"), self._code, size)
        with self._lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(line)

    def log_message(self, fmt, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)


def state_file(directory, port):
    return os.path.join(directory, STATE, "server-%d.json" % port)


def running(directory, port):
    """The record of this wheelhouse's live server on that port, or None."""
    try:
        with open(state_file(directory, port), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    if process_start(record.get("pid", 0)) != record.get("started"):
        return None
    return record


def urls(binds, port):
    return ["http://%s:%d/" % ("[%s]" % a if ":" in a else a, port) for a in binds]


def serve(directory, port, binds, watch):
    """Runs in the detached child: bind, record, serve until the playbook run ends."""
    servers = [Server((address, port), Handler) for address in binds]
    Handler.directory, Handler.log_path = directory, os.path.join(directory, STATE, "access-%d.log" % port)
    record = {"pid": os.getpid(), "started": process_start(os.getpid()), "binds": binds, "port": port,
              "urls": urls(binds, port), "watch": watch, "watch_started": process_start(watch)}
    with open(state_file(directory, port) + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(state_file(directory, port) + ".tmp", state_file(directory, port))
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    while process_start(watch) == record["watch_started"]:
        time.sleep(1)
    os._exit(0)


def start(directory, port, binds):
    record = running(directory, port)
    if record is not None:
        if sorted(record["binds"]) == sorted(binds):
            return {"changed": False, "pid": record["pid"], "urls": record["urls"],
                    "msg": "already serving %s on %s" % (directory, ", ".join(record["urls"]))}
        os.kill(record["pid"], signal.SIGTERM)  # same port, other addresses: serve the new ones
        time.sleep(0.5)
    watch = playbook_run(os.getppid())
    if watch is None:
        raise RuntimeError("no ansible-playbook process above this one: the server would outlive the run. "
                           "Serve the wheelhouse yourself and set pytorch_rocm_wheelhouse_url.")
    for address in binds:  # a clear message before forking: the port is taken or the address is not ours
        probe = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, port))
        except OSError as exc:
            raise RuntimeError("cannot serve on %s:%d (%s): set pytorch_rocm_wheelhouse_port to a free port, or "
                               "pytorch_rocm_wheelhouse_bind to an address of this controller the hosts reach"
                               % (address, port, exc.strerror))
        finally:
            probe.close()
    os.makedirs(os.path.join(directory, STATE), exist_ok=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.closerange(3, 4096)
            try:
                serve(directory, port, binds, watch)
            finally:
                os._exit(1)
        os._exit(0)
    for _attempt in range(100):
        record = running(directory, port)
        if record is not None:
            return {"changed": True, "pid": record["pid"], "urls": record["urls"],
                    "msg": "serving %s on %s until ansible-playbook (pid %d) ends" % (
                        directory, ", ".join(record["urls"]), watch)}
        time.sleep(0.1)
    raise RuntimeError("the wheelhouse server did not come up on port %d" % port)


def stop(directory, port):
    record = running(directory, port)
    if record is None:
        return {"changed": False, "pid": None, "urls": [], "msg": "no wheelhouse server on port %d" % port}
    os.kill(record["pid"], signal.SIGTERM)
    for _attempt in range(50):
        if process_start(record["pid"]) != record["started"]:
            break
        time.sleep(0.1)
    return {"changed": True, "pid": record["pid"], "urls": record["urls"], "msg": "stopped pid %d" % record["pid"]}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bind", action="append", default=[])
    args = parser.parse_args(argv)
    directory = os.path.abspath(args.dir)
    try:
        if args.action == "start":
            if not args.bind:
                raise ValueError("start needs at least one --bind address")
            result = start(directory, args.port, sorted(set(args.bind)))
        else:
            result = stop(directory, args.port)
    except (ValueError, RuntimeError, OSError) as exc:
        print(json.dumps({"failed": True, "msg": str(exc)}))
        return 1
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

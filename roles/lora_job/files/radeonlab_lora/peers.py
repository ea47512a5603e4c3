# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m radeonlab_lora.peers --port P --peers N --timeout S``: on rank 0 of a distributed job, before any
host starts, listen on the rendezvous port until N other hosts have connected or S seconds have passed, then print
one JSON line and exit 0::

    {"port": 29500, "expected": 1, "reached_from": ["192.0.2.11"], "ok": true, "error": null}

It proves what torchrun will need: the port is free on rank 0 (nothing else holds it) and each other host can open
a connection to it (no firewall, the right address). The play reads the result; the port is closed again before
training starts.
"""

from __future__ import annotations

import argparse
import json
import socket
import time


def listen(port: int, peers: int, timeout_s: float) -> dict:
    result = {"port": port, "expected": peers, "reached_from": [], "ok": False, "error": None}
    try:
        server = socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True) if socket.has_dualstack_ipv6() \
            else socket.create_server(("", port))
    except OSError as exc:
        result["error"] = f"cannot listen on port {port}: {exc.strerror or exc} (another process holds it?)"
        return result
    deadline = time.monotonic() + timeout_s
    with server:
        while len(result["reached_from"]) < peers:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            server.settimeout(left)
            try:
                connection, address = server.accept()
            except socket.timeout:
                break
            connection.close()
            result["reached_from"].append(address[0].removeprefix("::ffff:"))
    result["ok"] = len(result["reached_from"]) >= peers
    if not result["ok"]:
        result["error"] = f"{len(result['reached_from'])} of {peers} other host(s) reached port {port} within {timeout_s:.0f} s"
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m radeonlab_lora.peers")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--peers", type=int, required=True, help="how many other hosts must connect")
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    print(json.dumps(listen(args.port, args.peers, args.timeout), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

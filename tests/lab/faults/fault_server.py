#!/usr/bin/env python3
"""A lab server that fails on purpose (test infrastructure only), for the package fault tests.

Two kinds, each on a port of its own (never the shared lab servers' 8765/8768):

  --dir DIR     serves DIR as tests/lab/static_server.py does (listing, ~tags): a wheelhouse for pip
  --proxy       a plain HTTP forward proxy (what apt's Acquire::http::Proxy::<host> talks to) in front of the
                lab mirror, so the role's apt keeps its real sources and the mirror's URLs

and one fault for the bodies of package files (paths ending in --match, default .whl and .deb):

  --cut-after N   send the full Content-Length, then only N bytes, then drop the connection
  --hold FILE     while FILE exists, trickle the body (1 KiB a second: the client's read timeout never fires);
                  at full speed once it is removed

Logs one line per request (<UTC time> <client> <method> <path> <status> <bytes sent>, as static_server.py) to
--log and writes the port it bound (--port 0: any free one) to --portfile once it serves.
"""
import argparse
import datetime
import functools
import http.server
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import static_server  # noqa: E402  (tests/lab/static_server.py)


class Fault:
    cut_after = None
    hold = None
    match = (".whl", ".deb")

    @classmethod
    def applies(cls, path):
        return urllib.parse.urlsplit(path).path.endswith(cls.match)

    @classmethod
    def copy(cls, handler, source, out):
        """Copy source to out as the fault says; handler._sent counts the bytes."""
        faulty = cls.applies(handler.path)
        while True:
            size = 256 * 1024
            held = faulty and cls.hold and os.path.exists(cls.hold)
            if held:
                size = 512
            if faulty and cls.cut_after is not None:
                size = min(size, cls.cut_after - handler._sent)
                if size <= 0:
                    handler.close_connection = True
                    return
            buf = source.read(size)
            if not buf:
                return
            out.write(buf)
            out.flush()
            handler._sent += len(buf)
            if held:
                time.sleep(0.5)


class DirHandler(static_server.Handler):
    def copyfile(self, source, outputfile):
        Fault.copy(self, source, outputfile)


class ProxyHandler(static_server.Handler):
    """GET/HEAD http://host/path through to that URL (no other proxy), answered with its status and body."""

    passed = ("Content-Type", "Content-Length", "Last-Modified", "ETag", "Date")
    asked = ("If-Modified-Since", "If-None-Match", "Range", "Accept")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def do_GET(self):
        self._forward(body=True)

    def do_HEAD(self):
        self._forward(body=False)

    def _forward(self, body):
        request = urllib.request.Request(self.path, method=self.command,
                                         headers={k: self.headers[k] for k in self.asked if self.headers[k]})
        try:
            response = self.opener.open(request, timeout=30)
        except urllib.error.HTTPError as error:
            response = error
        except (urllib.error.URLError, OSError, ValueError):
            self.send_error(502, "Bad Gateway")
            return
        with response:
            self.send_response(response.status if hasattr(response, "status") else response.code)
            for name in self.passed:
                if response.headers.get(name):
                    self.send_header(name, response.headers[name])
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            if body:
                Fault.copy(self, response, self.wfile)


def main():
    ap = argparse.ArgumentParser()
    kind = ap.add_mutually_exclusive_group(required=True)
    kind.add_argument("--dir")
    kind.add_argument("--proxy", action="store_true")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--portfile", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cut-after", type=int)
    ap.add_argument("--hold")
    ap.add_argument("--match", action="append")
    a = ap.parse_args()
    Fault.cut_after, Fault.hold = a.cut_after, a.hold
    if a.match:
        Fault.match = tuple(a.match)
    handler_class = ProxyHandler if a.proxy else DirHandler
    handler_class.log_path = os.path.abspath(a.log)
    handler_class.name = "faults"
    handler_class.server_version = "radeonlab-lab-faults"
    handler_class.listing = handler_class.tags = True
    handler = handler_class if a.proxy else functools.partial(handler_class, directory=os.path.abspath(a.dir))
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    httpd = http.server.ThreadingHTTPServer((a.bind, a.port), handler)
    httpd.daemon_threads = True
    with open(a.portfile + ".tmp", "w") as fh:
        fh.write("%d\n" % httpd.server_address[1])
    os.replace(a.portfile + ".tmp", a.portfile)
    sys.stderr.write("%s fault server on %s:%d (cut after %s, hold %s)\n" % (
        datetime.datetime.now(datetime.timezone.utc).isoformat(), a.bind, httpd.server_address[1], a.cut_after, a.hold))
    httpd.serve_forever()


if __name__ == "__main__":
    main()

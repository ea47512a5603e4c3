#!/usr/bin/env python3
"""Static HTTP server for the radeonlab lab mirror (test infrastructure only).

Serves only the repository trees of LAB_DIR (rocm/, amdgpu/ and the stand-in
README); anything else -- including LAB_DIR/.private (the throwaway signing
key) and any dot-path -- is 404. Appends one line per request to the access log:

    <UTC ISO time> <client> <method> <path, %-decoded> <status> <bytes sent>

so tests can prove what was (not) downloaded, e.g. that a second converge
fetched no .deb (status 200 on /pool/ paths). apt's If-Modified-Since requests
for unchanged index files are answered 304.
"""
import argparse
import datetime
import functools
import http.server
import os
import sys
import threading
import urllib.parse

ALLOWED_TOP = {"rocm", "amdgpu", "LAB-STANDIN-README.txt"}


class Handler(http.server.SimpleHTTPRequestHandler):
    log_path = None
    log_lock = threading.Lock()
    server_version = "radeonlab-lab-mirror"
    sys_version = ""

    def _allowed(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        parts = [p for p in path.split("/") if p]
        if not parts or parts[0] not in ALLOWED_TOP:
            return False
        return not any(p.startswith(".") for p in parts)

    def send_head(self):
        if not self._allowed():
            self.send_error(404, "Not Found")
            return None
        return super().send_head()

    def list_directory(self, path):  # no directory listings: apt never needs them
        self.send_error(404, "Not Found")
        return None

    def copyfile(self, source, outputfile):
        while True:
            buf = source.read(64 * 1024)
            if not buf:
                break
            outputfile.write(buf)
            self._sent += len(buf)

    def handle_one_request(self):
        # send_response() calls log_request() before the body is written, so the
        # status is remembered there and the line is written once the request is done
        self._code, self._sent = None, 0
        try:
            super().handle_one_request()
        finally:
            if self._code is not None:
                self._write_log()

    def log_request(self, code="-", size="-"):
        self._code = code.value if isinstance(code, http.HTTPStatus) else code

    def _write_log(self):
        line = "%s %s %s %s %s %d\n" % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            self.client_address[0],
            getattr(self, "command", None) or "-",
            # decoded (apt asks for "~" as "%7e"), so logs can be grepped for file names
            urllib.parse.unquote(getattr(self, "path", None) or "-").replace(" ", "%20"),
            self._code,
            self._sent,
        )
        with self.log_lock:  # reopened per line: survives LAB_DIR being wiped and rebuilt
            with open(self.log_path, "a") as fh:
                fh.write(line)

    def log_message(self, fmt, *args):  # errors etc. go to stderr, not the access log
        sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--log", required=True)
    ap.add_argument("--pidfile", required=True)
    a = ap.parse_args()
    Handler.log_path = os.path.abspath(a.log)
    handler = functools.partial(Handler, directory=os.path.abspath(a.dir))
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    httpd = http.server.ThreadingHTTPServer((a.bind, a.port), handler)
    httpd.daemon_threads = True
    with open(a.pidfile + ".tmp", "w") as fh:  # written only once the port is bound
        fh.write("%d\n" % os.getpid())
    os.replace(a.pidfile + ".tmp", a.pidfile)
    print("serving %s on http://%s:%d/" % (a.dir, a.bind, a.port), flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()

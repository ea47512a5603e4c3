#!/usr/bin/env python3
"""Static HTTP server of the lab (test infrastructure only), behind mirror/serve.sh and wheelhouse/serve.sh.

Serves one directory. Dot-paths (the mirror's .private/ signing key, the wheelhouse role's .radeonlab/
stamps and logs) are never served: 404. Appends one line per request to the access log:

    <UTC ISO time> <client> <method> <path> <status> <bytes sent>

so tests can prove what was (not) downloaded, e.g. that a second converge fetched no .deb or .whl.
The log is reopened for every line, so the server survives its directory being wiped and rebuilt.
Clients' If-Modified-Since requests for unchanged files are answered 304.

Options that tell the two lab servers apart:

  --allow-top NAME  serve only these first path segments (repeatable; default: everything)
  --listing         answer a directory with a plain HTML listing without dot-names (what
                    ``pip install --no-index --find-links URL`` reads); without it: 404
  --tags            a first path segment ~<tag> is dropped to find the file but kept in the log, so
                    clients sharing the server can tell their requests apart: /~pytorch_rocm/x.whl
                    serves /x.whl (and a listing's relative links stay under /~pytorch_rocm/)
  --log-decoded     log %-decoded paths (apt asks for "~" as "%7e"), so logs can be grepped for names
  --name NAME       Server header radeonlab-lab-NAME; listing title "radeonlab NAME"
"""
import argparse
import datetime
import functools
import html
import http.server
import io
import os
import re
import sys
import threading
import urllib.parse

_TAG = re.compile(r"^/~[A-Za-z0-9_.-]+(?=/|$)")


class Handler(http.server.SimpleHTTPRequestHandler):
    # set by main() from the command line
    log_path = None
    name = "static"
    allow_top = None  # a set of first path segments, or None for all
    listing = False
    tags = False
    log_decoded = False

    log_lock = threading.Lock()
    sys_version = ""

    def _untagged(self, path):
        return _TAG.sub("", path, count=1) if self.tags else path

    def _allowed(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self._untagged(self.path)).path)
        parts = [p for p in path.split("/") if p]
        if self.allow_top is not None and (not parts or parts[0] not in self.allow_top):
            return False
        return not any(p.startswith(".") for p in parts)

    def translate_path(self, path):
        return super().translate_path(self._untagged(path))

    def send_head(self):
        if not self._allowed():
            self.send_error(404, "Not Found")
            return None
        return super().send_head()

    def list_directory(self, path):
        if not self.listing:
            self.send_error(404, "Not Found")
            return None
        try:
            names = sorted(n for n in os.listdir(path) if not n.startswith("."))
        except OSError:
            self.send_error(404, "Not Found")
            return None
        body = ["<!DOCTYPE html>", "<html><head><title>radeonlab %s</title></head><body>" % html.escape(self.name)]
        for name in names:
            suffix = "/" if os.path.isdir(os.path.join(path, name)) else ""
            body.append('<a href="%s%s">%s%s</a><br>' % (
                urllib.parse.quote(name), suffix, html.escape(name), suffix))
        body.append("</body></html>")
        data = ("\n".join(body) + "\n").encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)

    def copyfile(self, source, outputfile):
        while True:
            buf = source.read(256 * 1024)
            if not buf:
                break
            outputfile.write(buf)
            self._sent += len(buf)

    def handle_one_request(self):
        # send_response() calls log_request() before the body is written, so the status is
        # remembered there and the line is written once the request is done
        self._code, self._sent = None, 0
        try:
            super().handle_one_request()
        finally:
            if self._code is not None:
                self._write_log()

    def log_request(self, code="-", size="-"):
        self._code = code.value if isinstance(code, http.HTTPStatus) else code

    def _write_log(self):
        path = getattr(self, "path", None) or "-"
        line = "%s %s %s %s %s %d\n" % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            self.client_address[0],
            getattr(self, "command", None) or "-",
            (urllib.parse.unquote(path) if self.log_decoded else path).replace(" ", "%20"),
            self._code,
            self._sent,
        )
        with self.log_lock:
            with open(self.log_path, "a") as fh:
                fh.write(line)

    def log_message(self, fmt, *args):  # errors etc. go to stderr, not the access log
        sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--pidfile", required=True)
    ap.add_argument("--name", default="static")
    ap.add_argument("--allow-top", action="append", metavar="NAME")
    ap.add_argument("--listing", action="store_true")
    ap.add_argument("--tags", action="store_true")
    ap.add_argument("--log-decoded", action="store_true")
    a = ap.parse_args()
    # a daemon: hold no descriptor of whoever started it (a caller waiting for its pipes to close
    # would wait forever, and an inherited lock would block the next `serve.sh start`)
    os.closerange(3, 4096)
    Handler.log_path = os.path.abspath(a.log)
    Handler.name = a.name
    Handler.server_version = "radeonlab-lab-" + a.name
    Handler.allow_top = None if a.allow_top is None else frozenset(a.allow_top)
    Handler.listing, Handler.tags, Handler.log_decoded = a.listing, a.tags, a.log_decoded
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

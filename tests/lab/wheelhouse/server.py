#!/usr/bin/env python3
"""Static HTTP server for the lab's fleet wheelhouse (test infrastructure only).

Serves the wheel files of one directory (what radeonlab.llm.pytorch_rocm downloads on the
controller) with a plain HTML directory listing, which is what
``pip install --no-index --find-links http://127.0.0.1:8766/`` reads. Dot-paths (the role's
.radeonlab/ stamps and logs) are neither listed nor served. Appends one line per request to the
access log, in the lab mirror's format:

    <UTC ISO time> <client> <method> <path> <status> <bytes sent>

so tests can prove what was (not) downloaded, e.g. that a second converge fetched no .whl.

Several scenarios may share the server at once. A client that wants its own lines in the log uses a
tag as the first path segment: http://127.0.0.1:8766/~pytorch_rocm/ serves the same directory, and
every request through it (the listing and, since its links are relative, the wheels) is logged as
/~pytorch_rocm/...
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
    log_fh = None
    log_lock = threading.Lock()
    server_version = "radeonlab-lab-wheelhouse"
    sys_version = ""

    def _allowed(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        return not any(p.startswith(".") for p in path.split("/") if p)

    def translate_path(self, path):
        # /~<tag>/x is /x: the tag only labels the requests in the access log
        return super().translate_path(_TAG.sub("", path, count=1))

    def send_head(self):
        if not self._allowed():
            self.send_error(404, "Not Found")
            return None
        return super().send_head()

    def list_directory(self, path):
        try:
            names = sorted(n for n in os.listdir(path) if not n.startswith("."))
        except OSError:
            self.send_error(404, "Not Found")
            return None
        body = ["<!DOCTYPE html>", "<html><head><title>radeonlab wheelhouse</title></head><body>"]
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
        line = "%s %s %s %s %s %d\n" % (
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            self.client_address[0],
            getattr(self, "command", None) or "-",
            (getattr(self, "path", None) or "-").replace(" ", "%20"),
            self._code,
            self._sent,
        )
        with self.log_lock:
            self.log_fh.write(line)
            self.log_fh.flush()

    def log_message(self, fmt, *args):  # errors etc. go to stderr, not the access log
        sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8766)
    ap.add_argument("--log", required=True)
    ap.add_argument("--pidfile", required=True)
    a = ap.parse_args()
    # a daemon: hold no descriptor of whoever started it (a caller waiting for its pipes to close
    # would wait forever, and an inherited lock would block the next `serve.sh start`)
    os.closerange(3, 4096)
    Handler.log_fh = open(a.log, "a", buffering=1)
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

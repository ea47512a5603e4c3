#!/usr/bin/env bash
# Serve the controller's fleet wheelhouse to the lab hosts over HTTP -- test infrastructure only.
#
#   serve.sh start|stop|restart|status|url|log|log-lines|clear-log
#
#   LAB_WHEELHOUSE_DIR    the wheelhouse radeonlab.llm.pytorch_rocm fills on the controller
#                         (default: <repo>/.cache/wheelhouse; created when missing)
#   LAB_WHEELHOUSE_PORT   port (default 8768; the lab mirror uses 8765, the play's own wheelhouse server 8766 and 8767 in the site scenario)
#   LAB_WHEELHOUSE_BIND   address (default 127.0.0.1: the lab hosts share the controller's loopback;
#                         the wheelhouse is never exposed further unless you set this yourself)
#
# The lab hosts install with `pip install --no-index --find-links http://127.0.0.1:8768/`, which
# reads the directory listing. Dot-paths (the role's .radeonlab/ stamps and logs) are not served.
# Scenarios that share the server tag their requests with a first path segment:
# http://127.0.0.1:8768/~<scenario>/ serves the same directory and logs /~<scenario>/... paths.
# State lives next to the wheelhouse, in <dir>.serve/ (never served):
#   access.log  one line per request: <UTC time> <client> <method> <path> <status> <bytes sent>
#   server.log  server errors;  server-<port>.pid
# The server is tests/lab/static_server.py (--listing --tags); start/stop/status live in tests/lab/serve_lib.sh.
# start is idempotent (does nothing when this directory's server already answers on the port) and
# returns only once the server answers. `log-lines` prints the access log's line count (tests
# record it after a converge and then prove that no wheel was fetched again).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WH_DIR=${LAB_WHEELHOUSE_DIR:-$REPO/.cache/wheelhouse}
WH_DIR=${WH_DIR%/}
PORT=${LAB_WHEELHOUSE_PORT:-8768}
BIND=${LAB_WHEELHOUSE_BIND:-127.0.0.1}
STATE=$WH_DIR.serve
PIDFILE=$STATE/server-$PORT.pid
LOCKFILE=$STATE/.serve.lock
ACCESS_LOG=$STATE/access.log
ERROR_LOG=$STATE/server.log
URL=http://$BIND:$PORT/
SERVE_NAME=wheelhouse
SERVE_DIR=$WH_DIR
SERVE_OPTS=(--listing --tags)
SERVE_PROBE=/
PORT_VAR=LAB_WHEELHOUSE_PORT
USAGE="start|stop|restart|status|url|log|log-lines|clear-log"
# shellcheck source=tests/lab/serve_lib.sh
. "$HERE/../serve_lib.sh"

serve_prepare() {
    mkdir -p "$WH_DIR" "$STATE"
}

case ${1:-} in
    log) echo "$ACCESS_LOG" ;;
    log-lines) if [[ -f $ACCESS_LOG ]]; then wc -l < "$ACCESS_LOG" | tr -d ' '; else echo 0; fi ;;
    clear-log) mkdir -p "$STATE"; : > "$ACCESS_LOG"; say "cleared $ACCESS_LOG" ;;
    *) serve_command "$@" ;;
esac

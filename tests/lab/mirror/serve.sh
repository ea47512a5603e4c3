#!/usr/bin/env bash
# Serve the lab mirror (built by build.sh) over HTTP -- test infrastructure only.
#
#   serve.sh start|stop|restart|status|url|clear-log
#
#   LAB_DIR            what build.sh built (default: <repo>/.cache/lab)
#   LAB_MIRROR_PORT    port (default 8765)
#   LAB_MIRROR_BIND    address (default 127.0.0.1; the lab is never exposed further
#                      unless you set this yourself)
#
# Only LAB_DIR/rocm, LAB_DIR/amdgpu, LAB_DIR/hub (the tiny model as a Hugging Face hub serves it, written by
# tests/lab/tinymodel/hub.py) and LAB_DIR/LAB-STANDIN-README.txt are served
# (never LAB_DIR/.private, which holds the throwaway signing key).
# Access log: LAB_DIR/mirror-access.log, one line per request:
#   <UTC time> <client> <method> <%-decoded path> <status> <bytes sent>
# Server errors: LAB_DIR/mirror-server.log. Pidfile: LAB_DIR/.mirror-<port>.pid.
# The server is tests/lab/static_server.py (--allow-top ... --log-decoded); start/stop/
# status live in tests/lab/serve_lib.sh.
# start is idempotent (does nothing when this LAB_DIR's server already answers on
# the port) and returns only once the server answers.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
LAB_DIR=${LAB_DIR:-$REPO/.cache/lab}
PORT=${LAB_MIRROR_PORT:-8765}
BIND=${LAB_MIRROR_BIND:-127.0.0.1}
PIDFILE=$LAB_DIR/.mirror-$PORT.pid
LOCKFILE=$LAB_DIR/.mirror-$PORT.lock
ACCESS_LOG=$LAB_DIR/mirror-access.log
ERROR_LOG=$LAB_DIR/mirror-server.log
URL=http://$BIND:$PORT
SERVE_NAME=mirror
SERVE_DIR=$LAB_DIR
SERVE_OPTS=(--allow-top rocm --allow-top amdgpu --allow-top hub --allow-top LAB-STANDIN-README.txt --log-decoded)
SERVE_PROBE=/rocm/rocm.gpg.key
PORT_VAR=LAB_MIRROR_PORT
USAGE="start|stop|restart|status|url|clear-log"
# shellcheck source=tests/lab/serve_lib.sh
. "$HERE/../serve_lib.sh"

serve_prepare() {
    [[ -s $LAB_DIR/rocm/rocm.gpg.key ]] || die "no mirror in $LAB_DIR; run tests/lab/mirror/build.sh first"
}

case ${1:-} in
    clear-log) : > "$ACCESS_LOG"; say "cleared $ACCESS_LOG" ;;
    *) serve_command "$@" ;;
esac

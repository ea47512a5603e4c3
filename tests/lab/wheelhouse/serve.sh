#!/usr/bin/env bash
# Serve the controller's fleet wheelhouse to the lab hosts over HTTP -- test infrastructure only.
#
#   serve.sh start|stop|restart|status|url|log|log-lines|clear-log
#
#   LAB_WHEELHOUSE_DIR    the wheelhouse radeonlab.llm.pytorch_rocm fills on the controller
#                         (default: <repo>/.cache/wheelhouse; created when missing)
#   LAB_WHEELHOUSE_PORT   port (default 8766; the lab mirror uses 8765)
#   LAB_WHEELHOUSE_BIND   address (default 127.0.0.1: the lab hosts share the controller's loopback;
#                         the wheelhouse is never exposed further unless you set this yourself)
#
# The lab hosts install with `pip install --no-index --find-links http://127.0.0.1:8766/`, which
# reads the directory listing. Dot-paths (the role's .radeonlab/ stamps and logs) are not served.
# Scenarios that share the server tag their requests with a first path segment:
# http://127.0.0.1:8766/~<scenario>/ serves the same directory and logs /~<scenario>/... paths.
# State lives next to the wheelhouse, in <dir>.serve/ (never served):
#   access.log  one line per request: <UTC time> <client> <method> <path> <status> <bytes sent>
#   server.log  server errors;  server-<port>.pid
# start is idempotent (does nothing when this directory's server already answers on the port) and
# returns only once the server answers. `log-lines` prints the access log's line count (tests
# record it after a converge and then prove that no wheel was fetched again).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WH_DIR=${LAB_WHEELHOUSE_DIR:-$REPO/.cache/wheelhouse}
WH_DIR=${WH_DIR%/}
PORT=${LAB_WHEELHOUSE_PORT:-8766}
BIND=${LAB_WHEELHOUSE_BIND:-127.0.0.1}
STATE=$WH_DIR.serve
PIDFILE=$STATE/server-$PORT.pid
ACCESS_LOG=$STATE/access.log
ERROR_LOG=$STATE/server.log
URL=http://$BIND:$PORT/

say() { printf 'lab-wheelhouse: %s\n' "$*"; }
die() { printf 'lab-wheelhouse: ERROR: %s\n' "$*" >&2; exit 1; }

# pid of our server for this port, or nothing
our_pid() {
    local pid
    [[ -f $PIDFILE ]] || return 0
    pid=$(cat "$PIDFILE" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    # guard against pid reuse: it must be our server.py for this directory and port
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null \
        | grep -qF -- "$HERE/server.py --dir $WH_DIR --bind $BIND --port $PORT " || return 0
    echo "$pid"
}

# HTTP status of HEAD <path> (000 when nothing answers)
http_status() {
    python3 - "${URL%/}$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=2) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
PY
}

start() {
    mkdir -p "$WH_DIR" "$STATE"
    exec 9> "$STATE/.serve.lock"
    flock 9
    local pid; pid=$(our_pid)
    if [[ -n $pid ]]; then
        if [[ $(http_status /) == 200 ]]; then
            [[ $(http_status /~serve-sh/) == 200 ]] \
                || die "pid $pid runs an older server.py (no /~<tag>/ paths); run: $0 restart"
            say "already serving $WH_DIR on $URL (pid $pid), nothing to do"
            return 0
        fi
        die "server pid $pid exists but does not answer on $URL; see $ERROR_LOG (serve.sh stop, then start)"
    fi
    [[ $(http_status /) == 000 ]] || die "something else already answers on $URL; set LAB_WHEELHOUSE_PORT"
    rm -f "$PIDFILE"
    touch "$ACCESS_LOG"
    nohup python3 "$HERE/server.py" --dir "$WH_DIR" --bind "$BIND" --port "$PORT" \
        --log "$ACCESS_LOG" --pidfile "$PIDFILE" </dev/null >>"$ERROR_LOG" 2>&1 9>&- &
    local child=$!
    for _ in $(seq 1 100); do
        if [[ -f $PIDFILE && $(http_status /) == 200 ]]; then
            say "serving $WH_DIR on $URL (pid $(cat "$PIDFILE")); access log $ACCESS_LOG"
            return 0
        fi
        kill -0 "$child" 2>/dev/null || break
        sleep 0.1
    done
    kill "$child" 2>/dev/null || true
    tail -n 5 "$ERROR_LOG" >&2 || true
    die "server did not come up on $URL (see $ERROR_LOG)"
}

stop() {
    local pid; pid=$(our_pid)
    if [[ -z $pid ]]; then
        rm -f "$PIDFILE"
        say "not running on port $PORT, nothing to do"
        return 0
    fi
    kill "$pid"
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    rm -f "$PIDFILE"
    say "stopped (pid $pid)"
}

status() {
    local pid; pid=$(our_pid)
    if [[ -n $pid && $(http_status /) == 200 ]]; then
        say "serving $WH_DIR on $URL (pid $pid)"
        return 0
    fi
    say "not running on $URL"
    return 3
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    restart) stop; start ;;
    status) status ;;
    url) echo "$URL" ;;
    log) echo "$ACCESS_LOG" ;;
    log-lines) if [[ -f $ACCESS_LOG ]]; then wc -l < "$ACCESS_LOG" | tr -d ' '; else echo 0; fi ;;
    clear-log) mkdir -p "$STATE"; : > "$ACCESS_LOG"; say "cleared $ACCESS_LOG" ;;
    *) echo "usage: $0 start|stop|restart|status|url|log|log-lines|clear-log" >&2; exit 2 ;;
esac

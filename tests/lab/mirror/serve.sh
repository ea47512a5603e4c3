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
# Only LAB_DIR/rocm, LAB_DIR/amdgpu and LAB_DIR/LAB-STANDIN-README.txt are served
# (never LAB_DIR/.private, which holds the throwaway signing key).
# Access log: LAB_DIR/mirror-access.log, one line per request:
#   <UTC time> <client> <method> <%-decoded path> <status> <bytes sent>
# Server errors: LAB_DIR/mirror-server.log. Pidfile: LAB_DIR/.mirror-<port>.pid.
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

say() { printf 'lab-mirror: %s\n' "$*"; }
die() { printf 'lab-mirror: ERROR: %s\n' "$*" >&2; exit 1; }

is_our_server() { # pid: is it this script's server.py for this LAB_DIR and port?
    { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null |
        grep -qF -- "$HERE/server.py --dir $LAB_DIR --bind $BIND --port $PORT "
}

# pid of our server for this port, or nothing. A server of ours whose pidfile
# went missing (e.g. LAB_DIR wiped and rebuilt under it) is found and adopted.
our_pid() {
    local pid p
    pid=$(cat "$PIDFILE" 2>/dev/null || true)
    if [[ $pid =~ ^[0-9]+$ ]] && is_our_server "$pid"; then
        echo "$pid"
        return 0
    fi
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        if is_our_server "$p"; then
            echo "$p" > "$PIDFILE"
            echo "$p"
            return 0
        fi
    done
}

lock() { # serialise start/stop per port; never wait forever
    exec 9> "$LOCKFILE"
    flock -w 30 9 || die "another serve.sh holds $LOCKFILE for over 30 s"
}

# HTTP status of GET <path> (000 when nothing answers)
http_status() {
    python3 - "$URL$1" <<'PY'
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
    [[ -s $LAB_DIR/rocm/rocm.gpg.key ]] || die "no mirror in $LAB_DIR; run tests/lab/mirror/build.sh first"
    lock
    local pid; pid=$(our_pid)
    if [[ -n $pid ]]; then
        if [[ $(http_status /rocm/rocm.gpg.key) == 200 ]]; then
            say "already serving $LAB_DIR on $URL (pid $pid), nothing to do"
            return 0
        fi
        die "server pid $pid exists but does not answer on $URL; see $ERROR_LOG (serve.sh stop, then start)"
    fi
    [[ $(http_status /) == 000 ]] || die "something else already answers on $URL; set LAB_MIRROR_PORT"
    rm -f "$PIDFILE"
    nohup python3 "$HERE/server.py" --dir "$LAB_DIR" --bind "$BIND" --port "$PORT" \
        --log "$ACCESS_LOG" --pidfile "$PIDFILE" </dev/null >>"$ERROR_LOG" 2>&1 9>&- &
    local child=$!
    for _ in $(seq 1 100); do
        if [[ -f $PIDFILE && $(http_status /rocm/rocm.gpg.key) == 200 ]]; then
            say "serving $LAB_DIR on $URL (pid $(cat "$PIDFILE")); access log $ACCESS_LOG"
            return 0
        fi
        kill -0 "$child" 2>/dev/null || break
        sleep 0.1
    done
    kill "$child" 2>/dev/null || true
    exec 9>&-
    tail -n 5 "$ERROR_LOG" >&2 || true
    die "server did not come up on $URL (see $ERROR_LOG)"
}

stop() {
    lock
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
    if [[ -n $pid && $(http_status /rocm/rocm.gpg.key) == 200 ]]; then
        say "serving $LAB_DIR on $URL (pid $pid)"
        return 0
    fi
    say "not running on $URL"
    return 3
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    restart) stop; exec 9>&-; start ;;
    status) status ;;
    url) echo "$URL" ;;
    clear-log) : > "$ACCESS_LOG"; say "cleared $ACCESS_LOG" ;;
    *) echo "usage: $0 start|stop|restart|status|url|clear-log" >&2; exit 2 ;;
esac

# shellcheck shell=bash
# Shared by tests/lab/mirror/serve.sh and tests/lab/wheelhouse/serve.sh (test infrastructure only):
# start, stop and ask after one tests/lab/static_server.py daemon. The sourcing script sets
#
#   SERVE_NAME    mirror | wheelhouse: message prefix lab-<name>, the server's --name
#   SERVE_DIR     the directory served
#   SERVE_OPTS    array: the server's options for this kind (--allow-top ..., --listing, ...)
#   SERVE_PROBE   a path that answers 200 once the server serves SERVE_DIR
#   PORT_VAR      the variable that chooses the port (named when the port is taken)
#   BIND PORT URL PIDFILE LOCKFILE ACCESS_LOG ERROR_LOG
#
# and defines serve_prepare (run first by start: check or create what it serves), then runs
# `serve_command "$@"` for the subcommands start|stop|restart|status|url, with USAGE for the rest.

STATIC_SERVER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/static_server.py

say() { printf 'lab-%s: %s\n' "$SERVE_NAME" "$*"; }
die() { printf 'lab-%s: ERROR: %s\n' "$SERVE_NAME" "$*" >&2; exit 1; }

is_our_server() { # pid: is it our static_server.py of this kind, for this directory and port?
    local -a argv
    { mapfile -d '' -t argv < "/proc/$1/cmdline"; } 2>/dev/null || return 1
    [[ "${argv[*]} " == *"$STATIC_SERVER --name $SERVE_NAME --dir $SERVE_DIR --bind $BIND --port $PORT "* ]]
}

# pid of our server for this port, or nothing. A server of ours whose pidfile went missing
# (e.g. its directory wiped and rebuilt under it) is found and adopted.
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
            { echo "$p" > "$PIDFILE"; } 2>/dev/null || true
            echo "$p"
            return 0
        fi
    done
}

lock() { # serialise start/stop; never wait forever
    [[ -d ${LOCKFILE%/*} ]] || return 0 # no state yet: nothing to serialise against
    exec 9> "$LOCKFILE"
    flock -w 30 9 || die "another serve.sh holds $LOCKFILE for over 30 s"
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

start() { # idempotent; returns once the server answers
    serve_prepare
    lock
    local pid; pid=$(our_pid)
    if [[ -n $pid ]]; then
        if [[ $(http_status "$SERVE_PROBE") == 200 ]]; then
            say "already serving $SERVE_DIR on $URL (pid $pid), nothing to do"
            return 0
        fi
        die "server pid $pid exists but does not answer on $URL; see $ERROR_LOG (serve.sh stop, then start)"
    fi
    [[ $(http_status /) == 000 ]] || die "something else already answers on $URL; set $PORT_VAR"
    rm -f "$PIDFILE"
    touch "$ACCESS_LOG"
    # its own session: a server started from an Ansible task (the role scenarios' prepare) otherwise shares that
    # task's session and was found dead minutes later, before the converge's pip reached it
    setsid nohup python3 "$STATIC_SERVER" --name "$SERVE_NAME" --dir "$SERVE_DIR" --bind "$BIND" --port "$PORT" \
        "${SERVE_OPTS[@]}" --log "$ACCESS_LOG" --pidfile "$PIDFILE" </dev/null >>"$ERROR_LOG" 2>&1 9>&- &
    local child=$!
    for _ in $(seq 1 100); do
        if [[ -f $PIDFILE && $(http_status "$SERVE_PROBE") == 200 ]]; then
            say "serving $SERVE_DIR on $URL (pid $(cat "$PIDFILE")); access log $ACCESS_LOG"
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
    if [[ -n $pid && $(http_status "$SERVE_PROBE") == 200 ]]; then
        say "serving $SERVE_DIR on $URL (pid $pid)"
        return 0
    fi
    say "not running on $URL"
    return 3
}

serve_command() {
    case ${1:-} in
        start) start ;;
        stop) stop ;;
        restart) stop; exec 9>&-; start ;;
        status) status ;;
        url) echo "$URL" ;;
        *) echo "usage: $0 $USAGE" >&2; exit 2 ;;
    esac
}

#!/usr/bin/env bash
# A throwaway MariaDB for tools/bench_host_manager.py.
#
#   tools/mariadb.sh start   install MariaDB from Debian if missing, start a
#                            private server on 127.0.0.1:$MARIADB_PORT with
#                            its own datadir, print the --db URL
#   tools/mariadb.sh stop    stop it and delete its datadir
#   tools/mariadb.sh status
#
# The server listens on loopback only, runs as the current user and never
# touches the system's MariaDB data or service.
set -euo pipefail

PORT=${MARIADB_PORT:-3307}
STATE=${MARIADB_STATE:-${TMPDIR:-/tmp}/nova-drs-mariadb}
DATADIR=$STATE/data
SOCKET=$STATE/mysqld.sock
PIDFILE=$STATE/mysqld.pid
URL="mysql+pymysql://root@127.0.0.1:$PORT"

install() {
    if ! command -v mariadbd >/dev/null && ! command -v mysqld >/dev/null; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server
    fi
}

server() {
    command -v mariadbd || command -v mysqld
}

running() {
    [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
    if running; then
        echo "$URL"
        return
    fi
    install
    mkdir -p "$STATE"
    local user_opt=()
    if [ "$(id -u)" = 0 ]; then
        user_opt=(--user=root)
    fi
    if [ ! -d "$DATADIR/mysql" ]; then
        mariadb-install-db --no-defaults --datadir="$DATADIR" \
            --auth-root-authentication-method=normal "${user_opt[@]}" \
            --skip-test-db >"$STATE/install.log" 2>&1
    fi
    "$(server)" --no-defaults --datadir="$DATADIR" --socket="$SOCKET" \
        --pid-file="$PIDFILE" --port="$PORT" --bind-address=127.0.0.1 \
        --skip-name-resolve --log-error="$STATE/error.log" \
        --innodb-buffer-pool-size=512M "${user_opt[@]}" &
    for _ in $(seq 60); do
        if mariadb-admin --no-defaults --socket="$SOCKET" -uroot ping \
                >/dev/null 2>&1; then
            echo "$URL"
            return
        fi
        sleep 1
    done
    echo "MariaDB did not start; see $STATE/error.log" >&2
    exit 1
}

stop() {
    if running; then
        mariadb-admin --no-defaults --socket="$SOCKET" -uroot shutdown
    fi
    rm -rf "$STATE"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) if running; then echo "running: $URL"; else echo stopped; fi ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: a new data folder in a temporary directory,
# listening on 127.0.0.1 only, on a free port, trusting local connections.
#
#   eval "$(scripts/postgres-cluster.sh start)"   # exports KAGAMI_TEST_POSTGRES_URL and _DIR
#   scripts/postgres-cluster.sh stop "$KAGAMI_TEST_POSTGRES_DIR"
#
# The cluster runs with fsync=off (fast, for tests); POSTGRES_CLUSTER_FSYNC=on keeps it, as a
# real server does (benchmarks). `start ssl` also turns TLS on, with a certificate for 127.0.0.1 and localhost made by openssl
# and signed by a CA of the cluster's own, whose certificate it exports as
# KAGAMI_TEST_POSTGRES_CA (plain connections are still accepted).
#
# `pause DIR` stops the server and keeps its data; `resume DIR` starts it again on the same
# port (the tests of a database restarted mid-run).
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user
# (Debian's package creates it). Only what `start` prints goes to standard output.
set -euo pipefail

bin_dir() {
    if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return
    fi
    # Debian keeps the server's programs out of PATH, one folder per major version.
    local newest
    newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$newest" ] || [ ! -x "$newest/pg_ctl" ]; then
        echo "postgres-cluster: no PostgreSQL server found (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "$newest"
}

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Runs a command that leaves the server running, without the descriptors this script
# inherited (beyond standard input, output and error): a server holding them would keep the
# program that started the script from seeing it end.
detached() (
    for fd in /proc/$BASHPID/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    "$@"
)

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# A CA and a server certificate for 127.0.0.1 and localhost, in DIR/tls; the key belongs to the
# cluster's owner, readable by it alone, as the server demands.
make_certificates() {
    local tls=$1/tls
    mkdir -p "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Kagami test PostgreSQL CA" \
        -keyout "$tls/ca.key" -out "$tls/ca.pem" >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" >/dev/null 2>&1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
        -extfile "$tls/server.ext" -out "$tls/server.crt" >/dev/null 2>&1
    chmod 0600 "$tls/server.key"
    chmod 0644 "$tls/ca.pem" "$tls/server.crt"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$tls"; fi
    echo "-c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key"
}

start() {
    local bin dir port attempt extra=""
    bin=$(bin_dir)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/kagami-postgres.XXXXXX")
    chmod 0755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            echo "postgres-cluster: running as root needs the 'postgres' user (installed with the postgresql package)" >&2
            exit 1
        fi
        chown postgres: "$dir"
    fi
    as_owner "$bin/initdb" --pgdata="$dir/data" --username=kagami --auth=trust --encoding=UTF8 --no-locale \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    if [ "${1:-}" = ssl ]; then extra=$(make_certificates "$dir"); fi
    extra="$extra -c fsync=${POSTGRES_CLUSTER_FSYNC:-off}"
    echo "$extra" >"$dir/options"
    # Another process may take the port between the look-up and the start: try a few.
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if detached as_owner "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -k $dir -c max_connections=200 $extra" \
            start >/dev/null 2>&1; then
            as_owner "$bin/createdb" --host=127.0.0.1 --port="$port" --username=kagami kagami_test
            echo "$port" >"$dir/port"
            echo "export KAGAMI_TEST_POSTGRES_URL=postgres://kagami@127.0.0.1:$port/kagami_test"
            echo "export KAGAMI_TEST_POSTGRES_DIR=$dir"
            if [ -f "$dir/tls/ca.pem" ]; then echo "export KAGAMI_TEST_POSTGRES_CA=$dir/tls/ca.pem"; fi
            return
        fi
    done
    echo "postgres-cluster: the server did not start; its log:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
}

stop() {
    local dir=${1:?usage: postgres-cluster.sh stop DIR}
    local bin
    bin=$(bin_dir)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

pause() {
    local dir=${1:?usage: postgres-cluster.sh pause DIR}
    as_owner "$(bin_dir)/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null
}

resume() {
    local dir=${1:?usage: postgres-cluster.sh resume DIR}
    local port
    port=$(cat "$dir/port")
    detached as_owner "$(bin_dir)/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -k $dir -c max_connections=200 $(cat "$dir/options" 2>/dev/null || echo "-c fsync=off")" \
        start >/dev/null
}

case "${1:-}" in
    start) start "${2:-}" ;;
    stop) stop "${2:-}" ;;
    pause) pause "${2:-}" ;;
    resume) resume "${2:-}" ;;
    *) echo "usage: postgres-cluster.sh start [ssl] | stop DIR | pause DIR | resume DIR" >&2; exit 2 ;;
esac

# Shared by the proxy benchmarks (sourced, not run): tools, the kagami binary, scratch space,
# process cleanup and ports. Callers set NEEDED_APT (Debian packages) and, when they run
# mitmdump, MITMPROXY_VERSION first, and run from the repository root.

# --- tools -------------------------------------------------------------------------------
missing=()
for package in ${NEEDED_APT:-}; do
    case "$package" in
        nginx) command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx) ;;
        *) command -v "$package" >/dev/null || missing+=("$package") ;;
    esac
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} (apt)"
    apt_get() { if [ "$(id -u)" = 0 ]; then apt-get "$@"; else sudo apt-get "$@"; fi; }
    apt_get update -qq
    DEBIAN_FRONTEND=noninteractive apt_get install -y -qq "${missing[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

if [ -n "${MITMPROXY_VERSION:-}" ] && [ ! -x bench/.venv/bin/mitmdump ]; then
    echo "installing mitmproxy $MITMPROXY_VERSION into bench/.venv"
    [ -x bench/.venv/bin/python ] || python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q "mitmproxy==$MITMPROXY_VERSION"
fi
MITMDUMP="$ROOT/bench/.venv/bin/mitmdump"

KAGAMI_BUILD="given binary ${KAGAMI:-}"
if [ -z "${KAGAMI:-}" ]; then
    KAGAMI_BUILD="release build"
    echo "building kagami (release)"
    swift build -c release --product kagami >/dev/null
    KAGAMI="$(swift build -c release --show-bin-path)/kagami"
fi

# Kagami connects to loopback only while it is measured.
export KAGAMI_UPSTREAM_ALLOW=loopback

# --- scratch space and cleanup -----------------------------------------------------------
WORK=$(mktemp -d "/tmp/kagami-bench-${BENCH_NAME:-proxy}.XXXXXX")
chmod 755 "$WORK"
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    # nginx stops its workers on SIGTERM; give every process a few seconds before SIGKILL.
    for pid in "${PIDS[@]:-}"; do
        for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
wait_for_port() {
    local port=$1 tries=0
    until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2).close()" 2>/dev/null; do
        tries=$((tries + 1))
        if [ $tries -gt 200 ]; then echo "nothing listens on 127.0.0.1:$port" >&2; exit 1; fi
        sleep 0.05
    done
}

# Starts an nginx of its own (config and temp files under $WORK/NAME) with SERVER as its
# server blocks, in the foreground, so this script owns (and reaps) the master process.
write_nginx_conf() {
    local name=$1 server=$2
    mkdir -p "$WORK/$name"
    chmod 755 "$WORK/$name"
    cat > "$WORK/$name/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes auto;
daemon off;
pid $WORK/$name/nginx.pid;
error_log $WORK/$name/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/$name/client_body;
    proxy_temp_path $WORK/$name/proxy;
    fastcgi_temp_path $WORK/$name/fastcgi;
    uwsgi_temp_path $WORK/$name/uwsgi;
    scgi_temp_path $WORK/$name/scgi;
    default_type application/octet-stream;
    keepalive_requests 1000000;
$server
}
CONF
    # In the foreground, so this script owns (and reaps) the master process.
    "$NGINX" -p "$WORK/$name" -e "$WORK/$name/error.log" -c "$WORK/$name/nginx.conf" &
    PIDS+=("$!")
}

# kB of one process's VmRSS or VmHWM (run.sh sums several pids with its own memory_kb).
process_kb() { awk -v field="$1:" '$1 == field { print $2 }' "/proc/$2/status" 2>/dev/null || echo 0; }

# Starts TARGET (kagami or mitmdump) as a reverse proxy in front of http://127.0.0.1:ORIGIN,
# Kagami recording into a session file; sets PROXY_PID and PROXY_PORT once it listens.
start_reverse_proxy() {
    local target=$1 origin=$2 port
    port=$(free_port)
    case "$target" in
        kagami)
            "$KAGAMI" proxy --reverse "http://127.0.0.1:$origin" --port "$port" --no-ui \
                --session "$WORK/kagami-$port.sqlite" >"$WORK/kagami-$port.log" 2>&1 &
            ;;
        mitmdump)
            mkdir -p "$WORK/mitm-$port"
            "$MITMDUMP" --mode "reverse:http://127.0.0.1:$origin" --listen-host 127.0.0.1 -p "$port" \
                --set confdir="$WORK/mitm-$port" -q >"$WORK/mitmdump-$port.log" 2>&1 &
            ;;
    esac
    PROXY_PID=$!
    PIDS+=("$PROXY_PID")
    PROXY_PORT=$port
    wait_for_port "$port"
}

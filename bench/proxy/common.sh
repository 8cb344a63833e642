# Shared by the benchmarks (sourced, not run): the repository root as working folder (ROOT),
# tools, the kagami binary, scratch space, process cleanup, ports, an nginx origin and an nginx
# reverse proxy in front of it, and wrk's settings. Callers set NEEDED_APT (Debian packages),
# BENCH_NAME (the scratch folder's name) and, when they run mitmdump, MITMPROXY_VERSION first,
# and source it by its path: `source "$(dirname "$0")/common.sh"` from bench/proxy.

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)

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

# wrk's settings, for the scripts that drive it.
WRK_THREADS="${WRK_THREADS:-2}"
WRK_CONNECTIONS="${WRK_CONNECTIONS:-50}"
WRK_DURATION="${WRK_DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
WRK_TIMEOUT="${WRK_TIMEOUT:-120}"  # seconds; a wrk that hangs is reported, not waited for

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

# Writes $WORK/www/NAME, BYTES of the letter k (or, with `random`, of /dev/urandom), for the
# origin to serve.
www_file() {
    local name=$1 bytes=$2
    mkdir -p "$WORK/www"
    if [ "${3:-}" = random ]; then
        head -c "$bytes" /dev/urandom > "$WORK/www/$name"
    else
        head -c "$bytes" /dev/zero | tr '\0' 'k' > "$WORK/www/$name"
    fi
    chmod -R a+rX "$WORK/www"
}

# Starts the origin: an nginx serving $WORK/www on 127.0.0.1; sets ORIGIN_PORT once it listens.
# LINE, when given, is one more line of its server block (another listen, say).
start_origin() {
    ORIGIN_PORT=$(free_port)
    write_nginx_conf origin "    server {
        listen 127.0.0.1:$ORIGIN_PORT;${1:+
        $1}
        root $WORK/www;
        location / { }
    }"
    wait_for_port "$ORIGIN_PORT"
}

# Starts an nginx reverse proxy in front of the origin (HTTP/1.1, connections kept alive), its
# listen line ending in OPTIONS (http2, say) when given; sets NGINX_PROXY_PORT once it listens.
start_nginx_proxy() {
    NGINX_PROXY_PORT=$(free_port)
    write_nginx_conf nginx-proxy "    upstream origin {
        server 127.0.0.1:$ORIGIN_PORT;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$NGINX_PROXY_PORT${1:+ $1};
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
        }
    }"
    wait_for_port "$NGINX_PROXY_PORT"
}

# A line of the table (printf's arguments), to the terminal and to $WORK/table.txt.
row() { printf "$@" | tee -a "$WORK/table.txt"; }

# Writes RESULT (a path from the repository root): the heading TITLE, the line ABOUT, and the
# table as it was printed.
write_table_result() {
    {
        echo "# $1"
        echo
        echo "$2"
        echo
        echo '```'
        cat "$WORK/table.txt"
        echo '```'
    } > "$ROOT/$RESULT"
    echo "written to $RESULT"
}

# CPU time in clock ticks of the given processes, summed (utime + stime of each /proc/PID/stat;
# nginx's master and workers are listed one by one).
cpu_ticks() {
    local total=0 pid value
    for pid in $1; do
        value=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0)
        total=$((total + ${value:-0}))
    done
    echo "$total"
}
CLOCK_TICKS=$(getconf CLK_TCK)
# The master and worker processes of the nginx started as NAME (write_nginx_conf).
nginx_pids() {
    local master
    master=$(cat "$WORK/$1/nginx.pid")
    echo "$master $(pgrep -P "$master" | tr '\n' ' ')"
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

# Writes FILE: the benchmark's two paths (/small, /large) as an API, for `--contract`: the check
# matches each exchange to its operation and checks status and media type (the files have no
# schema to validate).
write_bench_api() {
    cat > "$1" <<YAML
openapi: 3.1.0
info: {title: Benchmark files, version: "1"}
paths:
  /small:
    get:
      operationId: small
      responses:
        "200": {description: the small file, content: {"*/*": {}}}
  /large:
    get:
      operationId: large
      responses:
        "200": {description: the large file, content: {"*/*": {}}}
YAML
}

# Writes FILE: 20 enabled rules of five tools (4 each of Block List, Map Local serving from
# FOLDER, Map Remote to the origin, No Caching, Rewrite) whose locations match nothing the
# benchmarks send: the cost of the rule pipeline itself.
write_rules20() {
    local tool i location
    {
        for tool in blockList mapLocal mapRemote noCaching rewrite; do
            echo "$tool:"
            for i in 0 1 2 3; do
                location="{host: \"*.unrelated-$tool-$i.example\", path: \"/other/*\"}"
                case "$tool" in
                    blockList) echo "  - {name: block $i, locations: [$location], action: \"403\"}" ;;
                    mapLocal) echo "  - {name: local $i, from: $location, local: $2}" ;;
                    mapRemote) echo "  - {name: remote $i, from: $location, to: {host: 127.0.0.1, port: $ORIGIN_PORT}}" ;;
                    noCaching) echo "  - {name: fresh $i, locations: [$location]}" ;;
                    rewrite) echo "  - {name: rewrite $i, locations: [$location], rules: [{type: Add Header, where: both, replace: {name: X-Rule, value: \"$i\"}}]}" ;;
                esac
            done
        done
    } > "$1"
}

# Writes FILE: a wrk script asking a forward proxy for the origin's /NAME (wrk has no proxy
# option: it sends the absolute-form request line itself).
write_forward_script() {
    cat > "$1" <<LUA
local request_bytes = wrk.format("GET", "http://127.0.0.1:$ORIGIN_PORT/$2", { ["Host"] = "127.0.0.1:$ORIGIN_PORT" })
request = function() return request_bytes end
LUA
}

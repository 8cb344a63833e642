#!/usr/bin/env bash
# HTTPS interception throughput: Kagami decrypting CONNECT tunnels vs mitmdump decrypting them,
# both in front of the same nginx TLS origin, driven by the same load generator with the same
# settings. wrk has no proxy option, so this uses hey (Debian package, Go's HTTP client), which
# sends CONNECT through an HTTP proxy for https URLs and keeps its connections alive.
# Rows: nginx-direct-https (hey straight to the origin: the load generator's ceiling),
# mitmdump-https, kagami-https; each with connections kept alive, then with a new connection per
# request (-disable-keepalive: a CONNECT and two TLS handshakes each through a proxy). Everything listens on and talks to 127.0.0.1 only.
# Each row also has the CPU time per request of the proxy, the origin and hey, which a busy
# machine disturbs less than the request rate.
# Then, for Kagami, what a resumed TLS session saves it: Kagami's CPU time per connection for
# RESUMES connections one after the other from Python's ssl (tls_reconnect.py), each with a full
# handshake, then each resuming the session of the one before (hey never resumes).
# Usage: bench/proxy/https.sh   (writes bench/results/proxy-https-YYYY-MM-DD.md)
# Environment: KAGAMI (a built binary; skips the release build), CONNECTIONS (50),
#   DURATION (10s), WARMUP (2s), BYTES (100), RESUMES (2000).
set -euo pipefail
CONNECTIONS="${CONNECTIONS:-50}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
BYTES="${BYTES:-100}"
RESUMES="${RESUMES:-2000}"
MITMPROXY_VERSION=11.0.2

NEEDED_APT="nginx hey openssl"
BENCH_NAME=https
source "$(dirname "$0")/common.sh"

# The origin's own CA and certificate for 127.0.0.1; both proxies verify the origin against it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=Bench Origin CA" \
    -keyout "$WORK/origin-ca.key" -out "$WORK/origin-ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$WORK/origin.key" -out "$WORK/origin.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$WORK/origin.ext"
openssl x509 -req -in "$WORK/origin.csr" -CA "$WORK/origin-ca.pem" -CAkey "$WORK/origin-ca.key" -CAcreateserial \
    -days 2 -extfile "$WORK/origin.ext" -out "$WORK/origin.pem" 2>/dev/null

ORIGIN_PORT=$(free_port)
www_file small "$BYTES"
write_nginx_conf origin "    server {
        listen 127.0.0.1:$ORIGIN_PORT ssl;
        ssl_certificate $WORK/origin.pem;
        ssl_certificate_key $WORK/origin.key;
        root $WORK/www;
        location / { }
    }"
wait_for_port "$ORIGIN_PORT"
URL="https://127.0.0.1:$ORIGIN_PORT/small"

# Runs hey with ARGUMENTS, its report to OUT; OUT.cpu gets the CPU time (clock ticks) the proxy
# ($pid, none for nginx-direct) and the origin's nginx spent meanwhile, and hey's own (seconds).
measured_hey() {
    local out=$1 proxy_before origin_before hey_seconds
    shift
    proxy_before=$(cpu_ticks "${pid:-}")
    origin_before=$(cpu_ticks "$(nginx_pids origin)")
    hey_seconds=$( { TIMEFORMAT='%U %S'; time hey "$@" > "$out" 2>&1; } 2>&1 | awk '{ print $1 + $2 }')
    echo "$(( $(cpu_ticks "${pid:-}") - proxy_before )) $(( $(cpu_ticks "$(nginx_pids origin)") - origin_before )) $hey_seconds" > "$out.cpu"
}

# Resets the peak RSS (VmHWM) of process PID, none for nginx-direct, so the next run's is its own.
reset_peak() { [ -z "$1" ] || echo 5 > "/proc/$1/clear_refs"; }
# "peak anonymous" RSS in kB of process PID since its last reset_peak (empty for none).
peak_and_anonymous() { [ -z "$1" ] || echo "$(process_kb VmHWM "$1") $(process_kb RssAnon "$1")"; }

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
for target in nginx-direct-https mitmdump-https kagami-https; do
    proxy_args=()
    pid=""
    case "$target" in
        mitmdump-https)
            port=$(free_port)
            "$MITMDUMP" --listen-host 127.0.0.1 -p "$port" --set confdir="$WORK/mitm" \
                --set ssl_verify_upstream_trusted_ca="$WORK/origin-ca.pem" -q >"$WORK/$target.log" 2>&1 &
            pid=$!; proxy_args=(-x "http://127.0.0.1:$port") ;;
        kagami-https)
            port=$(free_port)
            "$KAGAMI" proxy --port "$port" --no-ui --ca-dir "$WORK/kagami-ca" --session "$WORK/$target.sqlite" \
                --upstream-ca "$WORK/origin-ca.pem" >"$WORK/$target.log" 2>&1 &
            pid=$!; proxy_args=(-x "http://127.0.0.1:$port") ;;
    esac
    if [ -n "$pid" ]; then PIDS+=("$pid"); wait_for_port "$port"; fi
    echo "$target (load $(cut -d' ' -f1-3 /proc/loadavg))"
    hey -z "$WARMUP" -c "$CONNECTIONS" "${proxy_args[@]}" "$URL" > "$WORK/$target.warmup" 2>&1
    reset_peak "${pid:-}"
    measured_hey "$WORK/$target.hey" -z "$DURATION" -c "$CONNECTIONS" "${proxy_args[@]}" "$URL"
    memory_kept=$(peak_and_anonymous "${pid:-}")
    # Every request on a new connection: a CONNECT (through a proxy) and a TLS handshake each.
    reset_peak "${pid:-}"
    measured_hey "$WORK/$target-new.hey" -z "$DURATION" -c "$CONNECTIONS" -disable-keepalive "${proxy_args[@]}" "$URL"
    memory_new=$(peak_and_anonymous "${pid:-}")
    if [ "$target" = kagami-https ]; then
        for handshake in full resumed; do
            before=$(cpu_ticks "$pid")
            python3 bench/proxy/tls_reconnect.py --proxy-port "$port" --port "$ORIGIN_PORT" --cafile "$WORK/kagami-ca/kagami-ca.pem" \
                --count "$RESUMES" $([ "$handshake" = resumed ] && echo --resume) > "$WORK/reconnect-$handshake.txt"
            printf '%s\t%s\t%s\n' "$handshake" "$(( $(cpu_ticks "$pid") - before ))" "$(cat "$WORK/reconnect-$handshake.txt")" >> "$WORK/reconnect.tsv"
        done
    fi
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    recorded=$(grep -o 'Stopped\. [0-9]* exchange' "$WORK/$target.log" 2>/dev/null | grep -o '[0-9]*' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$WORK/$target.hey" "$WORK/$target-new.hey" "$memory_kept" "$memory_new" "$recorded" >> "$RESULTS"
done

DATE=$(date -u +%F)
HEY_VERSION=$(dpkg-query -W -f='${Version}' hey 2>/dev/null || echo unknown)
mkdir -p bench/results
python3 - "$RESULTS" "$WORK/reconnect.tsv" > "bench/results/proxy-https-$DATE.md" <<PY
import re, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
reconnects = [line.split() for line in open(sys.argv[2])]
def parse(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    lat = {p: float(v) * 1000 for p, v in re.findall(r"(\d+)% in ([\d.]+) secs", text)}
    codes = dict(re.findall(r"\[(\d+)\]\s+(\d+) responses", text))
    errors = re.findall(r"\[\d+\]\s+(Get .*)", text)
    proxy, origin, hey = open(path + ".cpu").read().split()
    return rps, lat, codes, errors, (int(proxy) / $CLOCK_TICKS, int(origin) / $CLOCK_TICKS, float(hey))
print("# HTTPS interception benchmark, $DATE\n")
print("- Machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)")
print("- Tools: $(nginx -v 2>&1 | sed 's/.*: //'); hey $HEY_VERSION; mitmproxy $MITMPROXY_VERSION; kagami $KAGAMI_BUILD at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
print("- Settings: hey -z $DURATION -c $CONNECTIONS (after a $WARMUP warm-up), GET of a $BYTES-byte file over TLS from nginx; proxies decrypt (CONNECT + their own certificate), verify the origin against its test CA, and capture (Kagami into a session file, mitmdump in memory)")
print("- Command: \`bench/proxy/https.sh\`; load generator, origin and proxies share the same cores\n")
print("Each target is measured with connections kept alive, then with a new connection (CONNECT and TLS handshakes) per request; peak RSS is each run's own (the proxy's peak reset before it), anonymous RSS (its heap) is at the run's end; flows recorded cover both.\n")
print("CPU per request is each process's CPU time over the run (/proc, and the shell's \`time\` for hey) divided by the requests answered: less disturbed by other work on the machine than req/s.\n")
print("| target | connections | req/s | p50 ms | p99 ms | 2xx | errors | CPU per request, µs: proxy / origin / hey | peak RSS MB | anonymous RSS MB | flows recorded |")
print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
found = {}
def megabytes(kilobytes): return f"{int(kilobytes) / 1024:.1f}" if kilobytes else ""
for target, kept, new, memory_kept, memory_new, recorded in rows:
    for connections, path, memory in (("kept alive", kept, memory_kept), ("new per request", new, memory_new)):
        peak, anonymous = (memory.split() + ["", ""])[:2]
        rps, lat, codes, errors, cpu = parse(path)
        found[(target, connections)] = rps
        ok = sum(int(n) for c, n in codes.items() if c.startswith("2"))
        per_request = " / ".join("–" if seconds == 0 and index == 0 else f"{seconds / max(ok, 1) * 1e6:.0f}" for index, seconds in enumerate(cpu))
        print(f"| {target} | {connections} | {rps:,.0f} | {lat.get('50', 0):.2f} | {lat.get('99', 0):.2f} | {ok:,} | {len(errors)} | {per_request} | {megabytes(peak)} | {megabytes(anonymous)} | {recorded} |")
print()
for connections in ("kept alive", "new per request"):
    kagami = found.get(("kagami-https", connections))
    if kagami and found.get(("mitmdump-https", connections)):
        print(f"- {connections}: kagami-https / mitmdump-https: {kagami / found[('mitmdump-https', connections)]:.2f}× (target ≥ 20×)")
    if kagami and found.get(("nginx-direct-https", connections)):
        print(f"- {connections}: kagami-https / nginx-direct-https (the load generator's ceiling without a proxy): {kagami / found[('nginx-direct-https', connections)]:.2f}×")
print()
print("Kagami's CPU time per connection, $RESUMES connections one after the other from Python's ssl (CONNECT, TLS, one GET each; the client without TCP_NODELAY), and the time each took:\n")
print("| handshake | Kagami CPU per connection | time per connection | 200s | sessions resumed |")
print("|---|--:|--:|--:|--:|")
for handshake, ticks, ok, resumed, seconds in reconnects:
    print(f"| {handshake} | {int(ticks) / $CLOCK_TICKS / $RESUMES * 1e6:.0f} µs | {float(seconds) / $RESUMES * 1e3:.2f} ms | {int(ok):,} | {int(resumed):,} |")
PY
cat "bench/results/proxy-https-$DATE.md"

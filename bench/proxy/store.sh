#!/usr/bin/env bash
# `kagami proxy` recording into PostgreSQL (`--store postgres://… --session NAME`) against the same
# proxy recording into a session file (SQLite), in the same run: req/s, latency and the exchanges
# stored, driven by wrk through `kagami proxy --reverse` in front of one nginx origin, targets
# interleaved round by round; the table gives every round and the ratio of the medians.
# Everything listens on and talks to 127.0.0.1 only. The database is a throwaway cluster
# (scripts/postgres-cluster.sh, fsync on, as a real server) unless KAGAMI_BENCH_POSTGRES_URL names one.
# Usage: bench/proxy/store.sh [ROUNDS]   (default 3)
# Environment: KAGAMI (a built binary; skips the release build), WRK_THREADS (2),
#   WRK_CONNECTIONS (50), WRK_DURATION (10s), WARMUP (2s), BYTES (100: the response body).
# Writes bench/results/proxy-store-YYYY-MM-DD.md.
set -euo pipefail

ROUNDS="${1:-3}"
BYTES="${BYTES:-100}"
COMMAND_LINE="bench/proxy/store.sh $*"
BENCH_NAME=proxy-store
NEEDED_APT="nginx wrk"
source "$(dirname "$0")/common.sh"

CLUSTER=""
if [ -z "${KAGAMI_BENCH_POSTGRES_URL:-}" ]; then
    eval "$(POSTGRES_CLUSTER_FSYNC=on scripts/postgres-cluster.sh start)"
    CLUSTER=$KAGAMI_TEST_POSTGRES_DIR
    KAGAMI_BENCH_POSTGRES_URL=$KAGAMI_TEST_POSTGRES_URL
fi
stop_cluster() { if [ -n "$CLUSTER" ]; then scripts/postgres-cluster.sh stop "$CLUSTER"; fi; }
trap 'cleanup; stop_cluster' EXIT
# Spool files (if the server were away) stay in the scratch space.
export KAGAMI_HOME="$WORK/home"

www_file file "$BYTES"
start_origin

SESSION_PREFIX="bench-$(date -u +%H%M%S)-$$"
RESULTS="$WORK/results.tsv"
: > "$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
    for target in sqlite postgres; do
        run="r$round-$target"
        port=$(free_port)
        case "$target" in
            sqlite) where=(--session "$WORK/$run.sqlite") ;;
            postgres) where=(--store "$KAGAMI_BENCH_POSTGRES_URL" --session "$SESSION_PREFIX-$run") ;;
        esac
        "$KAGAMI" proxy --reverse "http://127.0.0.1:$ORIGIN_PORT" --port "$port" --no-ui "${where[@]}" >"$WORK/$run.log" 2>&1 &
        PROXY_PID=$!
        PIDS+=("$PROXY_PID")
        wait_for_port "$port"
        echo "round $round: $target (load $(cut -d' ' -f1-3 /proc/loadavg))"
        for phase in warmup measured; do
            duration=$WRK_DURATION
            [ "$phase" = warmup ] && duration=$WARMUP
            timeout -k 5 "$WRK_TIMEOUT" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$duration" --latency \
                "http://127.0.0.1:$port/file" > "$WORK/$run.$phase.wrk" || echo "wrk did not finish within $WRK_TIMEOUT s" >> "$WORK/$run.$phase.wrk"
        done
        # Stopped as a user stops it: SIGTERM, the store flushed; the count it prints is what it recorded.
        started=$(date +%s.%N)
        kill -TERM "$PROXY_PID" 2>/dev/null || true
        for _ in $(seq 600); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$PROXY_PID" 2>/dev/null; then
            echo "  process $PROXY_PID did not exit within 60 s of SIGTERM; killed" >&2
            kill -9 "$PROXY_PID" 2>/dev/null || true
        fi
        wait "$PROXY_PID" 2>/dev/null || true
        stop_seconds=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
        recorded=$(grep -o 'Stopped\. [0-9]* exchange' "$WORK/$run.log" | grep -o '[0-9]*' || true)
        # What the store holds afterwards, counted by reading it back.
        stored=$("$KAGAMI" flows "${where[@]}" | wc -l)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$target" "$WORK/$run.warmup.wrk" "$WORK/$run.measured.wrk" \
            "$recorded" "$stored" "$stop_seconds" >> "$RESULTS"
        if grep -qiE 'error|warning|fatal|away' "$WORK/$run.log"; then
            echo "  $target log:"; grep -iE 'error|warning|fatal|away' "$WORK/$run.log" | sort | uniq -c | sort -rn | head -5 | sed 's/^/    /'
        fi
        rm -f "$WORK/$run.sqlite" "$WORK/$run.sqlite-wal" "$WORK/$run.sqlite-shm" "$WORK/$run.sqlite-flows" "$WORK/$run.sqlite-bodies"
    done
done

DATE=$(date -u +%F)
OUTPUT="bench/results/proxy-store-$DATE.md"
mkdir -p bench/results
python3 - "$RESULTS" > "$OUTPUT" <<PY
import re, statistics, sys

def wrk(path):
    text = open(path).read()
    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    requests = re.search(r"(\d+) requests in", text)
    latency = {p: re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M) for p in ("50", "99")}
    def ms(match):
        if not match:
            return None
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    errors = re.search(r"Socket errors: (.*)", text)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return {"rate": float(rate.group(1)) if rate else 0.0, "requests": int(requests.group(1)) if requests else 0,
            "p50": ms(latency["50"]), "p99": ms(latency["99"]), "errors": errors.group(1) if errors else "0",
            "non2xx": int(non2xx.group(1)) if non2xx else 0}

rows = []
for line in open(sys.argv[1]):
    round_, target, warmup, measured, recorded, stored, stop = line.rstrip("\n").split("\t")
    w, m = wrk(warmup), wrk(measured)
    rows.append((int(round_), target, m, w["requests"] + m["requests"], recorded, stored, stop))

print("# Proxy benchmark: PostgreSQL store against SQLite, $DATE")
print()
print("- Machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)")
print("- Tools: $(swift --version 2>&1 | head -1); $("$NGINX" -v 2>&1 | sed 's/.*: //'); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); $(psql --version 2>/dev/null | head -1); kagami $KAGAMI_BUILD at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
print("- Settings: wrk -t$WRK_THREADS -c$WRK_CONNECTIONS -d$WRK_DURATION --latency (after a $WARMUP warm-up) through \`kagami proxy --reverse\` to an nginx origin serving $BYTES bytes; rounds $ROUNDS, targets interleaved; each proxy started fresh")
print("- Targets: sqlite = \`--session FILE.sqlite\`; postgres = \`--store $( [ -n "$CLUSTER" ] && echo 'postgres://…@127.0.0.1 (throwaway cluster, fsync on, synchronous_commit on)' || echo 'KAGAMI_BENCH_POSTGRES_URL') --session NAME\`. Both finish an exchange for the client once its flow is committed.")
print("- Command: \`$COMMAND_LINE\`. Load generator, origin, proxy and PostgreSQL share the same cores.")
print("- recorded: the count the proxy prints when it stops; stored: the exchanges read back from the store afterwards (\`kagami flows\`); requests: wrk's, warm-up included (a request cut off when wrk stops may still be recorded)")
print()
print("| round | store | req/s | p50 ms | p99 ms | requests | non-2xx/3xx | socket errors | recorded | stored | exit s |")
print("|--:|---|--:|--:|--:|--:|--:|---|--:|--:|--:|")
fmt = lambda v: "" if v is None else f"{v:.2f}"
for round_, target, m, requests, recorded, stored, stop in rows:
    print(f"| {round_} | {target} | {m['rate']:,.0f} | {fmt(m['p50'])} | {fmt(m['p99'])} | {requests:,} | {m['non2xx']} | {m['errors']} | {recorded} | {stored.strip()} | {stop} |")
print()
medians = {t: statistics.median(m["rate"] for _, target, m, *_ in rows if target == t) for t in ("sqlite", "postgres")}
print(f"**Median req/s: sqlite {medians['sqlite']:,.0f}, postgres {medians['postgres']:,.0f}; postgres / sqlite = {medians['postgres'] / medians['sqlite']:.2f}×**")
PY
cat "$OUTPUT"

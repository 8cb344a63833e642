#!/bin/sh
# Session store throughput: flows a second into SQLite session files and into PostgreSQL, one
# writer and four at once, as ratios; and the cost of encoding a flow's metadata.
# Usage: bench/store/run.sh [FLOWS]   (default 200,000)
# Environment: KAGAMI_BENCH_POSTGRES_URL uses that server instead of a throwaway cluster
# (scripts/postgres-cluster.sh, fsync on, as a real server); CONFIGURATION=debug measures a
# debug build (labelled so in the results). Writes bench/results/store-YYYY-MM-DD.md.
set -e
cd "$(dirname "$0")/../.."
CONFIGURATION=${CONFIGURATION:-release}
FLOWS=${1:-200000}
swift build -c "$CONFIGURATION" --product store-bench >/dev/null
CLUSTER=""
if [ -z "${KAGAMI_BENCH_POSTGRES_URL:-}" ]; then
    eval "$(POSTGRES_CLUSTER_FSYNC=on scripts/postgres-cluster.sh start)"
    CLUSTER=$KAGAMI_TEST_POSTGRES_DIR
    KAGAMI_BENCH_POSTGRES_URL=$KAGAMI_TEST_POSTGRES_URL
    trap 'scripts/postgres-cluster.sh stop "$CLUSTER"' EXIT
fi
export KAGAMI_BENCH_POSTGRES_URL
OUTPUT=$(".build/$CONFIGURATION/store-bench" "$FLOWS")
DATE=$(date -u +%F)
mkdir -p bench/results
{
    echo "# Session store benchmark, $DATE"
    echo
    echo "- Machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(date -u '+%F %H:%M UTC'), load at end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- kagami at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), **$CONFIGURATION build**; $(psql --version 2>/dev/null | head -1) on 127.0.0.1$( [ -n "$CLUSTER" ] && echo ' (throwaway cluster, fsync on, synchronous_commit on)')"
    echo "- Command: \`bench/store/run.sh $FLOWS\` ($FLOWS flows like a small JSON API call: 6 request and 6 response headers, 100-byte response body; with 4 writers each records a quarter, into a session of its own: a session file each for SQLite, one database for PostgreSQL; timed until every writer has flushed)"
    echo
    echo "$OUTPUT"
} >"bench/results/store-$DATE.md"
cat "bench/results/store-$DATE.md"

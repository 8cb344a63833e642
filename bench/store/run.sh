#!/bin/sh
# Session store throughput and the cost of encoding a flow's metadata (release build).
# Usage: bench/store/run.sh [FLOWS]   (default 200,000)
set -e
cd "$(dirname "$0")/../.."
swift build -c release --product store-bench >/dev/null
.build/release/store-bench "${1:-200000}"

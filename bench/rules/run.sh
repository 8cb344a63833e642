#!/bin/sh
# Rule pipeline cost per request: none vs 20 enabled non-matching rules (release build).
# Compare the added nanoseconds with the proxy's time per request from bench/ to get the
# throughput share (≤ 10% is the target).
set -e
cd "$(dirname "$0")/../.."
swift build -c release --product rules-bench >/dev/null
.build/release/rules-bench "${1:-200000}"

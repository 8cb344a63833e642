#!/usr/bin/env bash
# Builds Examples/TypedClient (swift-openapi-generator's build plugin on the converted
# notes.apib) and runs its test against `kagami mock`. Kept out of scripts/test.sh: its own
# cold build (the generator, AsyncHTTPClient, SwiftNIO, BoringSSL) took 9.3 minutes here.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product kagami
export KAGAMI_BINARY="$(swift build --show-bin-path)/kagami"
cd Examples/TypedClient
swift build --build-tests
swift test --skip-build

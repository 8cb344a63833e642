#!/usr/bin/env bash
# Builds Examples/InProcessTests — an app's test suite that uses KagamiKit, KagamiKitOpenAPI and
# a client swift-openapi-generator's build plugin makes from the converted notes.apib, through
# the public products only — and runs its tests. It shares this checkout's build folder, so the
# packages Kagami already built are not compiled again (about 2 minutes instead of 9).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$PWD/.build"
cd Examples/InProcessTests
swift build --build-tests --scratch-path "$scratch"
swift test --skip-build --scratch-path "$scratch"

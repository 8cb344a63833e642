#!/usr/bin/env bash
# Builds Examples/InProcessTests — an app's test suite that uses KagamiKit, KagamiKitOpenAPI and
# a client generated from notes.apib through the public products only — and runs its tests.
# It shares this checkout's build folder, so only the example's own files compile.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$PWD/.build"
cd Examples/InProcessTests
swift build --build-tests --scratch-path "$scratch"
swift test --skip-build --scratch-path "$scratch"

#!/usr/bin/env bash
# Writes Examples/InProcessTests/openapi.json again from notes.apib (`kagami convert`) and the
# typed client generated from it (swift-openapi-generator 1.14.3, built once into
# .build/openapi-generator), committed so that building the example needs no generator.
# Run it when notes.apib or the converter changes; ConvertTests fails until openapi.json is current.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
example="$root/Examples/InProcessTests"
generator="$root/.build/openapi-generator"
if [ ! -x "$generator/.build/release/swift-openapi-generator" ]; then
    rm -rf "$generator"
    git clone --quiet --branch 1.14.3 --depth 1 https://github.com/apple/swift-openapi-generator "$generator"
    (cd "$generator" && swift build -c release --product swift-openapi-generator)
fi
swift run kagami convert "$example/notes.apib" --to openapi -o "$example/openapi.json"
rm -rf "$example/Sources/NotesClient/Generated"
"$generator/.build/release/swift-openapi-generator" generate "$example/openapi.json" \
    --config "$example/openapi-generator-config.yaml" \
    --output-directory "$example/Sources/NotesClient/Generated"

#!/usr/bin/env bash
# Fails when a SwiftNIO type appears in the public declarations of KagamiKit, KagamiKitOpenAPI or the modules
# it re-exports: what an app's test suite sees must not tie it to the engine's networking stack.
# Reads the public symbol graphs of the debug build's modules.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(KagamiKit KagamiKitOpenAPI KagamiFlow KagamiRules KagamiDiff)
# The graphs are extracted from the modules the debug build left (about a second); when that
# can't load them, SwiftPM dumps the whole package's (about a minute).
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
directory=$(mktemp -d)
trap 'rm -rf "$directory"' EXIT
maps=()
for map in "$bin"/*.build/module.modulemap Sources/*/module.modulemap .build/checkouts/*/Sources/*/module.modulemap; do
    [ -f "$map" ] && maps+=(-Xcc "-fmodule-map-file=$PWD/$map")
done
includes=()
for include in .build/checkouts/*/Sources/*/include; do
    [ -d "$include" ] && includes+=(-Xcc "-I$PWD/$include")
done
extracted=yes
for module in "${modules[@]}"; do
    if ! swift symbolgraph-extract -module-name "$module" -I "$bin/Modules" -I "$bin" -target "$triple" \
        -minimum-access-level public -output-dir "$directory" "${maps[@]}" "${includes[@]}" >/dev/null 2>&1; then
        extracted=no
        break
    fi
done
if [ "$extracted" = no ]; then
    output=$(swift package dump-symbol-graph --minimum-access-level public 2>&1) || { echo "$output"; exit 1; }
    directory=$(printf '%s\n' "$output" | sed -n 's/^.*Files written to \(.*\)$/\1/p' | tail -1)
    if [ -z "$directory" ] || [ ! -d "$directory" ]; then
        echo "check-public-api: no symbol graph directory in the output of swift package dump-symbol-graph:"
        echo "$output"
        exit 1
    fi
fi

python3 - "$directory" "${modules[@]}" <<'PY'
import glob, json, os, sys

directory, modules = sys.argv[1], sys.argv[2:]
found, symbols = [], 0
for module in modules:
    files = glob.glob(os.path.join(directory, f"{module}.symbols.json")) + glob.glob(os.path.join(directory, f"{module}@*.symbols.json"))
    if not files:
        sys.exit(f"check-public-api: no symbol graph for {module} in {directory}")
    for path in files:
        with open(path) as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            symbols += 1
            fragments = list(symbol.get("declarationFragments", []))
            signature = symbol.get("functionSignature", {})
            for parameter in signature.get("parameters", []):
                fragments += parameter.get("declarationFragments", [])
            fragments += signature.get("returns", [])
            for fragment in fragments:
                usr = fragment.get("preciseIdentifier", "")
                if fragment.get("kind") == "typeIdentifier" and ("NIO" in usr or fragment.get("spelling", "").startswith("NIO")):
                    name = ".".join(symbol["pathComponents"])
                    found.append(f"{os.path.basename(path)}: {name} uses {fragment['spelling']} ({usr})")
found = list(dict.fromkeys(found))
for line in found:
    print(line)
if found:
    sys.exit(f"check-public-api: {len(found)} public declaration(s) use SwiftNIO types")
print(f"check-public-api: {symbols} public symbols of {', '.join(modules)}, none uses a SwiftNIO type")
PY

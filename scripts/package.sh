#!/usr/bin/env bash
# Builds what installs Kagami without a Swift toolchain: a release archive and a .deb.
#
#   scripts/package.sh                  release build (static Swift runtime on Linux), stripped
#   scripts/package.sh --from-debug     packages the debug build already made (the tests' check
#                                       of the packaging; needs the toolchain's libraries to run)
#   --out DIR                           where to write them (default: dist)
#
# Layout (in the archive under kagami-VERSION-linux-ARCH/, in the .deb under /usr):
#   bin/kagami -> ../lib/kagami/kagami       lib/kagami/*.resources (the web UI's files, read
#   share/man/man1/kagami.1                  beside the binary), share/doc/kagami/ (README, docs)
#   share/bash-completion/completions/kagami, share/zsh/vendor-completions/_kagami,
#   share/fish/vendor_completions.d/kagami.fish
# The man page and completions are generated from the command's own ArgumentParser tree.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=release
out=dist
while [ $# -gt 0 ]; do
    case "$1" in
        --from-debug) configuration=debug ;;
        --out) out="$2"; shift ;;
        *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$configuration" = release ]; then
    static=()
    # The Swift runtime and Foundation linked in, so the target machine needs no toolchain.
    if [ "$(uname -s)" = Linux ]; then
        static=(--static-swift-stdlib)
        # The statically linked Foundation links libcurl: without its development files the link
        # fails at the end of the build with "cannot find -lcurl".
        libraries="$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true)"
        if ! grep -q 'libcurl\.so ' <<<"$libraries"; then
            echo "package.sh: linking the Swift runtime in needs libcurl's development files (Debian: sudo apt install libcurl4-openssl-dev)" >&2
            exit 1
        fi
    fi
    swift build -c release --product kagami "${static[@]}"
fi
bin="$(swift build -c "$configuration" --show-bin-path)"
[ -x "$bin/kagami" ] || { echo "package.sh: no $bin/kagami; build it first (swift build)" >&2; exit 1; }

version="$("$bin/kagami" --version)"
arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
name="kagami-$version-linux-$arch"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"

mkdir -p "$root/bin" "$root/lib/kagami" "$root/share/man/man1" "$root/share/doc/kagami" \
    "$root/share/bash-completion/completions" "$root/share/zsh/vendor-completions" "$root/share/fish/vendor_completions.d"
strip -o "$root/lib/kagami/kagami" "$bin/kagami"
# Bundle.module finds each target's resources beside the executable.
for bundle in "$bin"/*.resources; do cp -R "$bundle" "$root/lib/kagami/"; done
ln -s ../lib/kagami/kagami "$root/bin/kagami"
python3 scripts/manpage.py "$bin/kagami" | gzip -9n > "$root/share/man/man1/kagami.1.gz"
"$bin/kagami" --generate-completion-script bash > "$root/share/bash-completion/completions/kagami"
"$bin/kagami" --generate-completion-script zsh > "$root/share/zsh/vendor-completions/_kagami"
"$bin/kagami" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/kagami.fish"
cp README.md "$root/share/doc/kagami/"
cp -R docs "$root/share/doc/kagami/docs"

# A debug package is a check of the packaging, made often: fast compression is enough.
if [ "$configuration" = release ]; then gzip=(gzip -9n); deb_compression=(-Zxz); else gzip=(gzip -1n); deb_compression=(-Zgzip -z1); fi
tar -C "$stage" -cf - --owner=0 --group=0 "$name" | "${gzip[@]}" > "$out/$name.tar.gz"

# The .deb: the same tree under /usr; Depends names the Debian packages of the shared libraries
# the binary still loads (found with ldd and dpkg -S).
deb="$stage/deb"
mkdir -p "$deb/DEBIAN" "$deb/usr"
cp -a "$root/." "$deb/usr/"
depends=()
missing=()
# The libraries the binary names itself (their own dependencies come with their packages).
needed="$(readelf -d "$bin/kagami" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')"
while read -r library path; do
    grep -qxF "$library" <<<"$needed" || continue
    package="$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)" || true
    if [ -z "$package" ]; then
        # Found by the real path too (usrmerge: /lib is /usr/lib).
        package="$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)" || true
    fi
    if [ -n "$package" ]; then depends+=("$package"); else missing+=("$library"); fi
done < <(ldd "$bin/kagami" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
if [ ${#missing[@]} -gt 0 ]; then
    echo "package.sh: not from a Debian package (the .deb needs them installed some other way): ${missing[*]}" >&2
fi
depends_line="$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')"
cat > "$deb/DEBIAN/control" <<CONTROL
Package: kagami
Version: $version
Architecture: $arch
Maintainer: Kagami <kagami@localhost>
Section: devel
Priority: optional
Depends: $depends_line
Installed-Size: $(du -sk "$deb/usr" | cut -f1)
Description: HTTP(S) debugging proxy and API mock server
 Records, inspects and rewrites HTTP, HTTPS, HTTP/2, WebSocket and gRPC traffic,
 with a web UI, rules, breakpoints, and mock servers from API descriptions.
CONTROL
dpkg-deb --root-owner-group "${deb_compression[@]}" --build "$deb" "$out/${name}.deb" >/dev/null
echo "$out/$name.tar.gz"
echo "$out/$name.deb"

#!/usr/bin/env bash
# The install check: packages the debug build the tests already made (scripts/package.sh
# --from-debug), unpacks the .deb into an empty folder as dpkg would install it, and runs the
# kagami found there: --version, its man page and completions, and `kagami proxy` on port 0
# relaying curl to an origin on 127.0.0.1 and serving the web UI from the packaged files.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
proxy_pid=""
origin_pid=""
# Stops the proxy and the origin and keeps the script's own status: `wait` on a process just
# killed says 143, which must not become the test's result.
cleanup() {
    local status=$?
    for pid in "$proxy_pid" "$origin_pid"; do
        if [ -n "$pid" ]; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
fail() { echo "package test: $*" >&2; exit 1; }

scripts/package.sh --from-debug --out "$work/dist" >/dev/null 2>"$work/package.log" || { cat "$work/package.log" >&2; fail "scripts/package.sh failed"; }
deb="$(ls "$work"/dist/*.deb)"
tar -tzf "$work"/dist/*.tar.gz >"$work/archive.txt"
grep -q '/lib/kagami/kagami_KagamiUI.resources/Web/index.html$' "$work/archive.txt" || fail "the archive has no web UI"
[ "$(dpkg-deb -f "$deb" Package)" = kagami ] || fail "the .deb is not package kagami"
dpkg -x "$deb" "$work/root"
usr="$work/root/usr"

version="$("$usr/bin/kagami" --version)"
[ "$version" = "$(dpkg-deb -f "$deb" Version)" ] || fail "kagami --version says $version, the .deb $(dpkg-deb -f "$deb" Version)"
[ -f "$usr/lib/kagami/kagami_KagamiUI.resources/Web/index.html" ] || fail "no web UI beside the binary"
# Read whole first: `grep -q` leaving early would stop zcat with SIGPIPE, a failure under pipefail.
zcat "$usr/share/man/man1/kagami.1.gz" >"$work/kagami.1"
grep -q '^\.SH KAGAMI PROXY' "$work/kagami.1" || fail "the man page has no kagami proxy section"
grep -q 'repeat' "$usr/share/bash-completion/completions/kagami" || fail "bash completion has no subcommands"
[ -s "$usr/share/zsh/vendor-completions/_kagami" ] && [ -s "$usr/share/fish/vendor_completions.d/kagami.fish" ] || fail "zsh or fish completion missing"

# An origin on 127.0.0.1, port 0.
mkdir -p "$work/site" && echo "installed kagami relays this" > "$work/site/page.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" >"$work/origin.log" 2>&1 &
origin_pid=$!
for _ in $(seq 100); do grep -q 'port [0-9]' "$work/origin.log" && break; sleep 0.1; done
origin_port="$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$work/origin.log" | head -1)"
[ -n "$origin_port" ] || fail "the origin did not start"

# Kagami runs as whoever starts it, and nothing it does may need root (a socket option only
# root may set once made every connection fail for everyone else): run as root, the check runs
# the installed kagami as nobody, with a home and a session of its own.
as_user=()
user_dir="$work/user"
mkdir -p "$user_dir"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    chmod 0711 "$work"
    chown 65534:65534 "$user_dir"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi
"${as_user[@]}" env KAGAMI_HOME="$user_dir/home" "$usr/bin/kagami" proxy --port 0 --ui-port 0 --no-ssl-proxying --session "$user_dir/session.sqlite" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 200); do grep -q 'token=' "$work/proxy.log" && break; kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
proxy="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$work/proxy.log" | head -1 | sed 's/listening on //')"
ui="$(grep -o 'http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*' "$work/proxy.log" | head -1)"
[ -n "$proxy" ] && [ -n "$ui" ] || { cat "$work/proxy.log" >&2; fail "kagami proxy did not start"; }
body="$(curl -sS --max-time 10 -x "$proxy" "http://127.0.0.1:$origin_port/page.txt" 2>&1 || true)"
[ "$body" = "installed kagami relays this" ] || fail "through the proxy: $body"
body="$(curl -sS --max-time 10 --proxytunnel -x "$proxy" "http://127.0.0.1:$origin_port/page.txt" 2>&1 || true)"
[ "$body" = "installed kagami relays this" ] || fail "through a CONNECT tunnel: $body"
page="$(curl -s --max-time 10 "$ui" || true)"
[[ "$page" == *"<title>"* ]] || fail "the web UI did not answer with its page"
echo "package test: kagami $version from the .deb ($(du -h "$deb" | cut -f1)): --version, man page, completions, proxy, tunnel and web UI pass${as_user:+ as nobody}"

#!/usr/bin/env bash
# Re-vendors htmx and its websocket extension from the npm registry at pinned
# versions. htmx-ext-ws 2.x requires htmx 2.x, so htmx.org stays on the 2.0 line.
# Run from anywhere: bash static/vendor/update.sh
set -euo pipefail
HTMX_VERSION=2.0.11
HTMX_WS_VERSION=2.0.4

here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "htmx.org@${HTMX_VERSION}" >/dev/null
npm pack --silent "htmx-ext-ws@${HTMX_WS_VERSION}" >/dev/null
mkdir htmx ws
tar -xzf "htmx.org-${HTMX_VERSION}.tgz" -C htmx
tar -xzf "htmx-ext-ws-${HTMX_WS_VERSION}.tgz" -C ws

mkdir -p "$here/htmx" "$here/htmx-ext-ws"
cp htmx/package/dist/htmx.min.js "$here/htmx/htmx.min.js"
cp htmx/package/LICENSE "$here/htmx/LICENSE"
cp ws/package/dist/ws.min.js "$here/htmx-ext-ws/ws.min.js"
cp ws/package/LICENSE "$here/htmx-ext-ws/LICENSE" 2>/dev/null || cp htmx/package/LICENSE "$here/htmx-ext-ws/LICENSE"
printf 'htmx.org %s\nhtmx-ext-ws %s\n' "$HTMX_VERSION" "$HTMX_WS_VERSION" > "$here/VERSIONS"
echo "vendored htmx.org@${HTMX_VERSION} and htmx-ext-ws@${HTMX_WS_VERSION} into $here"

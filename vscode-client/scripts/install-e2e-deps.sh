#!/usr/bin/env bash
# Installs everything the mdseek VS Code e2e test needs, idempotently:
#   1. Debian packages: libkrb5-dev (code-server native build), ripgrep, chromium
#   2. seeds @vscode/ripgrep's download cache with Debian's rg (no internet here)
#   3. code-server@4.100.3 into $MDSEEK_E2E_CACHE/code-server
#   4. playwright-core into $MDSEEK_E2E_CACHE/playwright
#   5. npm ci + vsce package in vscode-client/
# Exit codes: 0 ok; 3 = the e2e tooling (apt packages, code-server or
# playwright-core) could not be installed: CI should skip the e2e stage with
# the printed "SKIP:" message; anything else = a real failure (e.g. the
# extension does not build).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MDSEEK_E2E_CACHE:-$HOME/.cache/mdseek-e2e}"
CODE_SERVER_VERSION="${MDSEEK_CODE_SERVER_VERSION:-4.100.3}"
PLAYWRIGHT_VERSION=1.65.1
TMPDIR="${TMPDIR:-/tmp}"
export TMPDIR
mkdir -p "$CACHE"

TIMINGS=()
stage_start() { STAGE_NAME="$1"; STAGE_T0=$(date +%s.%N); echo "== [$STAGE_NAME] start"; }
stage_end() {
  local t1; t1=$(date +%s.%N)
  local dt; dt=$(awk -v a="$STAGE_T0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  echo "== [$STAGE_NAME] done in ${dt}s${1:+ ($1)}"
  TIMINGS+=("$(printf '%-14s %7ss %s' "$STAGE_NAME" "$dt" "${1:-}")")
}
print_timings() {
  echo "== install-e2e-deps timings:"
  for t in "${TIMINGS[@]}"; do echo "   $t"; done
}
trap print_timings EXIT

# ---------------------------------------------------------------- 1. apt
stage_start apt
APT_PKGS=(libkrb5-dev ripgrep chromium)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  if ! { $SUDO apt-get update -qq && \
         DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" > "$CACHE/apt.log" 2>&1; }; then
    tail -20 "$CACHE/apt.log" || true
    echo "install-e2e-deps: SKIP: could not apt-get install ${missing[*]} (log: $CACHE/apt.log); the VS Code e2e stage cannot run on this machine" >&2
    exit 3
  fi
  stage_end "installed ${missing[*]}"
else
  stage_end "cached"
fi

# ---------------------------------------------------------------- 2. ripgrep cache
stage_start rg-cache
RG_CACHE="$TMPDIR/vscode-ripgrep-cache-1.15.11"
RG_TGZ="$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ -s "$RG_TGZ" ]; then
  stage_end "cached"
else
  mkdir -p "$RG_CACHE"
  tmp="$(mktemp -d)"
  cp "$(command -v rg)" "$tmp/rg"
  tar -C "$tmp" -czf "$RG_TGZ" rg
  rm -rf "$tmp"
  stage_end "seeded $RG_TGZ"
fi

# ---------------------------------------------------------------- 3. code-server
stage_start code-server
CS_DIR="$CACHE/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
if [ -x "$CS_BIN" ] && "$CS_BIN" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION"; then
  stage_end "cached $("$CS_BIN" --version | head -1)"
else
  mkdir -p "$CS_DIR"
  [ -f "$CS_DIR/package.json" ] || echo '{"name":"mdseek-e2e-code-server","private":true}' > "$CS_DIR/package.json"
  if ! ( cd "$CS_DIR" && npm_config_unsafe_perm=true npm_config_yes=true \
         npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" --foreground-scripts \
         > "$CACHE/code-server-install.log" 2>&1 ) \
     || ! "$CS_BIN" --version >/dev/null 2>&1; then
    tail -30 "$CACHE/code-server-install.log" || true
    echo "install-e2e-deps: SKIP: code-server@$CODE_SERVER_VERSION could not be installed (log: $CACHE/code-server-install.log); the VS Code e2e stage cannot run on this machine" >&2
    exit 3
  fi
  stage_end "installed $("$CS_BIN" --version | head -1)"
fi

# ---------------------------------------------------------------- 4. playwright-core
stage_start playwright
PW_DIR="$CACHE/playwright"
if [ -f "$PW_DIR/node_modules/playwright-core/package.json" ] && \
   grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$PW_DIR/node_modules/playwright-core/package.json"; then
  stage_end "cached"
else
  mkdir -p "$PW_DIR"
  [ -f "$PW_DIR/package.json" ] || echo '{"name":"mdseek-e2e-playwright","private":true}' > "$PW_DIR/package.json"
  if ! ( cd "$PW_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund "playwright-core@$PLAYWRIGHT_VERSION" > "$CACHE/playwright-install.log" 2>&1 ); then
    tail -20 "$CACHE/playwright-install.log" || true
    echo "install-e2e-deps: SKIP: playwright-core@$PLAYWRIGHT_VERSION could not be installed; the VS Code e2e stage cannot run on this machine" >&2
    exit 3
  fi
  stage_end "installed playwright-core@$PLAYWRIGHT_VERSION"
fi

# ---------------------------------------------------------------- 5. extension
stage_start npm-ci
cd "$HERE"
stamp="node_modules/.mdseek-lock-sha"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -d node_modules ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  stage_end "cached (lockfile unchanged)"
else
  npm ci --no-audit --no-fund >/dev/null
  echo "$want" > "$stamp"
  stage_end "npm ci"
fi

stage_start package
npm run --silent package > "$CACHE/package.log" 2>&1 || { cat "$CACHE/package.log"; exit 1; }
grep -E "DONE|WARNING" "$CACHE/package.log" || true
stage_end "$HERE/build/mdseek.vsix"

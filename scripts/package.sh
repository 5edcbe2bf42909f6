#!/usr/bin/env bash
# Builds what a user installs, into dist/ (DIST=DIR for another folder):
#   dist/mdseek-<version>-py3-none-any.whl   the server and CLI (python -m build)
#   dist/mdseek_all_minilm_l6_v2_onnx-<version>-py3-none-any.whl
#                                            the default model's verified ONNX export
#                                            (scripts/model_wheel.py: the wheel .ci/setup
#                                            built is reused, so nothing is exported twice)
#   dist/mdseek-<version>.vsix               the VS Code extension (vsce): only when
#                                            node and npm are there, or when asked
# Usage: bash scripts/package.sh [--vsix | --no-vsix]
#   --vsix     build the extension, and fail if node/npm are missing
#   --no-vsix  never build it
#   (PYTHON=/path/to/python to pick the interpreter)
# Needs: the checkout's .venv (bash .ci/setup), which holds the model wheel it
# built; without it the model is exported here (mdseek's torch extra).
# Ends with a summary of what it built and what it left out.
set -euo pipefail
cd "$(dirname "$0")/.."
VSIX=auto
for arg in "$@"; do
  case "$arg" in
    --vsix) VSIX=yes ;;
    --no-vsix) VSIX=no ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown argument $arg (--vsix, --no-vsix)" >&2; exit 2 ;;
  esac
done
DIST=${DIST:-dist}
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ] && PY=.venv/bin/python
mkdir -p "$DIST"
MODEL_PY=$PY
if ! "$MODEL_PY" -c 'import mdseek' 2>/dev/null; then
  echo "package.sh: $MODEL_PY has no mdseek: run bash .ci/setup first (it makes .venv)" >&2
  exit 1
fi
built=()
left=()

BUILD_PY=$PY
if ! "$PY" -c 'import build' 2>/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$PY" -m venv "$tmp/venv"
  "$tmp/venv/bin/python" -m pip install -q build
  BUILD_PY="$tmp/venv/bin/python"
fi
echo "== wheel ($("$BUILD_PY" --version))"
"$BUILD_PY" -m build --wheel --outdir "$DIST" . >"$DIST/build.log" 2>&1 || { tail -40 "$DIST/build.log"; exit 1; }
version=$("$PY" -c 'import mdseek; print(mdseek.__version__)')
whl="$DIST/mdseek-$version-py3-none-any.whl"
built+=("$whl")

echo "== model wheel (setup's, when current; else exported and verified, 20-50 s)"
model=$("$MODEL_PY" scripts/model_wheel.py --out "$DIST" | tail -1)
built+=("$model")

vsix="$DIST/mdseek-$version.vsix"
have_node=no
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && have_node=yes
if [ "$VSIX" = yes ] && [ "$have_node" = no ]; then
  echo "package.sh: --vsix needs node 18+ and npm, which are not on PATH (the wheels are built: ${built[*]})" >&2
  exit 1
fi
if [ "$VSIX" = no ]; then
  left+=("the VS Code extension (--no-vsix)")
elif [ "$have_node" = no ]; then
  left+=("the VS Code extension (no node/npm on PATH; --vsix to insist)")
else
  echo "== VS Code extension"
  (
    cd vscode-client
    [ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null
    npm run --silent package >/dev/null
  )
  cp vscode-client/build/mdseek.vsix "$vsix"
  built+=("$vsix")
fi

echo "== built"
for f in "${built[@]}"; do
  echo "  $f ($(du -h "$f" | cut -f1))"
done
for l in "${left[@]+"${left[@]}"}"; do
  echo "  left out: $l"
done
cat <<MSG
Install (see README "Install"; no torch, no Node):
  python3 -m venv ~/.venvs/mdseek
  ~/.venvs/mdseek/bin/pip install $whl $model
MSG
if [ -f "$vsix" ] && [[ " ${built[*]} " == *" $vsix "* ]]; then
  echo "  code --install-extension $vsix"
fi

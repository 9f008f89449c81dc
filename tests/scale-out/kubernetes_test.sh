#!/usr/bin/env bash
# deploy/kubernetes offline (no cluster can run here): the base and the simulator overlay render
# with `kubectl kustomize` (through render.sh), every object matches the API models of
# python3-kubernetes (check_manifests.py; a planted unknown field and a wrong type must be
# rejected), and the Jobs run the same commands as deploy/slurm/servebench.sbatch.
# usage: kubernetes_test.sh SOURCE_DIR     exit 77 = skipped (reason on stdout)
set -euo pipefail
src=$(realpath "$1")
here=$src/tests/scale-out
render=$src/deploy/kubernetes/render.sh
if ! command -v kubectl >/dev/null; then
  echo "SKIP: kubectl missing (kustomize v4+ needed; Debian 12's kubernetes-client 1.20 embeds kustomize v2, too old)"
  exit 77
fi
kustomize=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')
if [ -z "$kustomize" ] || [ "$kustomize" -lt 4 ]; then
  echo "SKIP: kubectl's kustomize is older than v4 (Debian 12's kubernetes-client 1.20 has v2)"
  exit 77
fi
if ! /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null; then
  echo "SKIP: python3-kubernetes missing (scripts/install-deps.sh installs it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for overlay in base overlays/simulator; do
  "$render" -n 4 -s 30 "$src/deploy/kubernetes/$overlay" >"$work/rendered.yaml"
  /usr/bin/python3 "$here/check_manifests.py" "$work/rendered.yaml"
done
# The check can fail: an unknown field and a string where an integer belongs.
sed -e 's/^  parallelism: 4$/  parallelism: "4"/' -e 's/^      restartPolicy: Never$/      restartPolicy: Never\n      restartPolicyy: Never/' \
  "$work/rendered.yaml" >"$work/broken.yaml"
if /usr/bin/python3 "$here/check_manifests.py" "$work/broken.yaml" >"$work/broken.out"; then
  echo "check_manifests.py accepted broken manifests"; exit 1
fi
grep -q 'spec.parallelism: expected int' "$work/broken.out"
grep -q 'restartPolicyy: unknown field of V1PodSpec' "$work/broken.out"
/usr/bin/python3 "$here/same_commands.py" "$src"

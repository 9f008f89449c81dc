#!/usr/bin/env bash
# A single-node Slurm cluster made for this test (slurm_cluster.sh: munged, slurmctld, slurmd
# from a slurm.conf in a temp dir): `srun -n 2` and an `sbatch --array` job run, then, once
# `servebench run` has --shard, deploy/slurm/servebench.sbatch runs a 2-shard benchmark against
# `servebench sim`, merged and compared with the same run unsharded.
# usage: slurm_test.sh SERVEBENCH SOURCE_DIR     exit 77 = skipped (reason on stdout)
set -euo pipefail
sb=$(realpath "$1")
src=$(realpath "$2")
here=$src/tests/scale-out
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (munged and slurmd run as root/munge)"; exit 77; fi
for tool in slurmctld slurmd munged srun sbatch sinfo setpriv python3; do
  if ! command -v "$tool" >/dev/null && [ ! -x "/usr/sbin/$tool" ]; then
    echo "SKIP: $tool missing (scripts/install-deps.sh installs slurm-wlm, slurm-client, munge)"
    exit 77
  fi
done
# shellcheck source=slurm_cluster.sh
. "$here/slurm_cluster.sh"
work=$(mktemp -d /tmp/servebench-slurm.XXXXXX)
sim_pid=
cleanup() {
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  slurm_cluster_stop
  rm -rf "$work"
}
trap cleanup EXIT
slurm_cluster_start "$work" 4

# 1. srun: two tasks, each prints the node's name.
out=$(timeout 60 srun -n 2 hostname)
[ "$(echo "$out" | wc -l)" = 2 ] || { echo "srun -n 2 printed: $out"; exit 1; }
[ "$(echo "$out" | sort -u)" = "$(hostname -s)" ] || { echo "srun -n 2 printed: $out"; exit 1; }

# 2. An array job: each task writes its id and the array's size where the test reads them.
cat >"$work/array.sh" <<'JOB'
#!/usr/bin/env bash
echo "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" >"$OUT/task-$SLURM_ARRAY_TASK_ID"
JOB
OUT=$work timeout 60 sbatch --wait --export=ALL --array=0-2 -o /dev/null "$work/array.sh" >/dev/null
[ "$(cat "$work"/task-*)" = "$(printf '0/3\n1/3\n2/3')" ] || { echo "array tasks wrote: $(cat "$work"/task-*)"; exit 1; }
echo "slurm cluster: srun -n 2 and sbatch --array=0-2 ran"

# 3. deploy/slurm/servebench.sbatch through the real sbatch and srun, with a stub servebench that
# records its argv: two tasks, shards 0/2 and 1/2, one common start, then the merge.
mkdir -p "$work/stub" "$work/argv"
cat >"$work/stub/servebench" <<'STUB'
#!/bin/sh
if [ "$1" = run ]; then f=run.$SLURM_PROCID; else f=$1; fi
printf '%s\n' "$@" >"$ARGV_DIR/$f"
STUB
chmod +x "$work/stub/servebench"
ARGV_DIR=$work/argv SERVEBENCH=$work/stub/servebench SERVEBENCH_START_MARGIN_S=1 timeout 60 \
  sbatch --wait -N 1 -n 2 --ntasks-per-node=2 -o "$work/stub-job.out" "$src/deploy/slurm/servebench.sbatch" \
  "$work/stub-results" --num-prompts 10 >/dev/null || { cat "$work/stub-job.out"; exit 1; }
[ "$(ls "$work/argv")" = "$(printf 'merge\nrun.0\nrun.1')" ] || { ls "$work/argv"; exit 1; }
for k in 0 1; do
  [ "$(sed -n 3p "$work/argv/run.$k")" = "$k/2" ] || { cat "$work/argv/run.$k"; exit 1; }
  [ "$(tail -n 2 "$work/argv/run.$k" | tr '\n' ' ')" = "--num-prompts 10 " ] || { cat "$work/argv/run.$k"; exit 1; }
done
[ "$(sed -n 5p "$work/argv/run.0")" = "$(sed -n 5p "$work/argv/run.1")" ] || { echo "shards got different --start-at"; exit 1; }
echo "servebench.sbatch: srun ran shards 0/2 and 1/2 with one --start-at, then merge"

# 4. The sharded benchmark through deploy/slurm/servebench.sbatch, when run can shard.
if ! "$sb" run --help | grep -q -- '--shard'; then
  echo "sharded benchmark skipped: 'servebench run --help' has no --shard yet (the run part adds it)"
  exit 0
fi
port=$(slurm_free_port)
"$sb" sim --port "$port" --ttft-ms 20 --itl-ms 2 --output-len-dist max >"$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
flags=(--base-url "http://127.0.0.1:$port" --model servebench-sim --tokenizer builtin
  --num-prompts 60 --random-input-len 32 --random-output-len 16 --request-rate 100
  --percentile-metrics ttft,tpot,itl,e2el)
timeout 120 "$sb" run "${flags[@]}" --disable-tqdm --save-result --result-dir "$work/whole" \
  --result-filename result.json >"$work/whole.log" 2>&1
SERVEBENCH=$sb SERVEBENCH_START_MARGIN_S=3 timeout 180 sbatch --wait -N 1 -n 2 --ntasks-per-node=2 -o "$work/job.out" \
  "$src/deploy/slurm/servebench.sbatch" "$work/sharded" "${flags[@]}" >/dev/null ||
  { echo "sbatch failed:"; cat "$work/job.out"; exit 1; }
python3 "$here/compare_results.py" "$work/sharded/merged.json" "$work/whole/result.json" 2

#!/usr/bin/env bash
# Several hosts on one machine: network namespaces made by this test on a private /24 that exists
# only on a bridge the test creates (the bridge has an address in it, so the host routes that
# subnet to the bridge and no packet leaves the machine; every address sent to is one made here).
# `servebench sim` runs in one namespace, the load in three others, then `servebench merge`:
#  - with `run --shard`: three shards of one run, merged, compared with the run unsharded;
#  - until then: three runs with different seeds, merged with `merge --runs`, compared with the
#    sum of the three.
# usage: netns_test.sh SERVEBENCH SOURCE_DIR     exit 77 = skipped (reason on stdout)
set -euo pipefail
sb=$(realpath "$1")
here=$(realpath "$2")/tests/scale-out
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (ip netns, bridge, veth)"; exit 77; fi
command -v ip >/dev/null || { echo "SKIP: ip missing (iproute2)"; exit 77; }
tag=$$
br=sbbr$tag
ns_names=(sbsim$tag sbc0$tag sbc1$tag sbc2$tag)
work=$(mktemp -d /tmp/servebench-netns.XXXXXX)
sim_pid=
made_bridge=0
made_ns=()
cleanup() {
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  local ns
  for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [ "$made_bridge" = 1 ]; then ip link del "$br" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A /24 of 10.213.0.0/16 that no address or route of this machine touches.
subnet=
for _ in $(seq 1 50); do
  candidate=10.213.$((RANDOM % 250 + 1))
  if ! ip -4 -o addr show | grep -q " $candidate\." && ! ip -4 route show | grep -q "^$candidate\."; then
    subnet=$candidate
    break
  fi
done
[ -n "$subnet" ] || { echo "SKIP: no free /24 in 10.213.0.0/16"; exit 77; }

ip link add "$br" type bridge
made_bridge=1
ip addr add "$subnet.1/24" dev "$br"
ip link set "$br" up
for i in "${!ns_names[@]}"; do
  ns=${ns_names[$i]}
  ip netns add "$ns"
  made_ns+=("$ns")
  ip link add "sbv${tag}h$i" type veth peer name "sbv${tag}n$i"
  ip link set "sbv${tag}h$i" master "$br" up
  ip link set "sbv${tag}n$i" netns "$ns"
  ip -n "$ns" addr add "$subnet.$((10 + i))/24" dev "sbv${tag}n$i"
  ip -n "$ns" link set "sbv${tag}n$i" up
  ip -n "$ns" link set lo up
done
sim_ip=$subnet.10
url=http://$sim_ip:8000
ip netns exec "${ns_names[0]}" "$sb" sim --host "$sim_ip" --port 8000 --ttft-ms 20 --itl-ms 2 \
  --output-len-dist max >"$work/sim.log" 2>&1 &
sim_pid=$!
reachable=0
for _ in $(seq 1 100); do
  if ip netns exec "${ns_names[1]}" bash -c "exec 3<>/dev/tcp/$sim_ip/8000" 2>/dev/null; then
    reachable=1
    break
  fi
  sleep 0.1
done
[ "$reachable" = 1 ] || { echo "the simulator at $url is not reachable from ${ns_names[1]}"; cat "$work/sim.log"; exit 1; }
flags=(--base-url "$url" --model servebench-sim --tokenizer builtin --random-input-len 32
  --random-output-len 16 --request-rate 100 --percentile-metrics ttft,tpot,itl,e2el --disable-tqdm)

if "$sb" run --help | grep -q -- '--shard'; then
  ip netns exec "${ns_names[1]}" timeout 120 "$sb" run "${flags[@]}" --num-prompts 60 \
    --save-result --result-dir "$work/whole" --result-filename result.json >"$work/whole.log" 2>&1
  start_at=$(($(date +%s) + 2))
  pids=()
  for k in 0 1 2; do
    ip netns exec "${ns_names[$((k + 1))]}" timeout 120 "$sb" run "${flags[@]}" --num-prompts 60 \
      --shard "$k/3" --start-at "$start_at" --save-result --result-dir "$work/shards/shard-$k" \
      --result-filename result.json >"$work/shard-$k.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  "$sb" merge "$work/shards" -o "$work/merged.json" >"$work/merge.log"
  python3 "$here/compare_results.py" "$work/merged.json" "$work/whole/result.json" 3
  exit 0
fi

echo "run has no --shard yet: three runs with seeds 1, 2, 3 from three namespaces, merged with --runs"
pids=()
for k in 0 1 2; do
  ip netns exec "${ns_names[$((k + 1))]}" timeout 120 "$sb" run "${flags[@]}" --num-prompts 20 \
    --seed $((k + 1)) --save-result --result-dir "$work/runs/run-$k" --result-filename result.json \
    >"$work/run-$k.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$sb" merge --runs "$work/runs" -o "$work/merged.json" >"$work/merge.log"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
runs = [json.load(open(f"{work}/runs/run-{k}/result.json")) for k in range(3)]
merged = json.load(open(f"{work}/merged.json"))
for key in ["completed", "failed", "total_input_tokens", "total_output_tokens"]:
    total = sum(r[key] for r in runs)
    assert merged[key] == total, f"{key}: merged {merged[key]} != sum of the runs {total}"
assert merged["completed"] == 60 and merged["failed"] == 0, merged["completed"]
assert merged["servebench"]["merge"]["mode"] == "runs", merged["servebench"]["merge"]
assert len(merged["servebench"]["merge"]["shards"]) == 3
print(f"3 namespaces -> sim in a 4th: merged {merged['completed']} requests, "
      f"{merged['total_output_tokens']} output tokens, median TTFT {merged['median_ttft_ms']:.1f} ms")
PY

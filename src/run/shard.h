// File: run/shard.h
// One shard of a run (--shard K/N, docs/run.md "Shards"): its share of the whole plan (request
// j when j % N == K, a conversation by its id), its share of the caps, the hash every shard
// computes of the whole plan, the wait for --start-at, and its result's "shard" block.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "run/run.h"

namespace servebench::run {

// The usage errors of a run that cannot be split exactly (a search, several targets, GuideLLM's
// sweep and synchronous profiles, a cap smaller than the shard count); nothing when unsharded.
void check_shardable(const Spec& c);

// The requests of `plan` shard `index` of `count` owns, in plan order, indices unchanged.
std::vector<client::PlannedRequest> shard_plan(const std::vector<client::PlannedRequest>& plan,
                                               int index, int count);

// Shard `index`'s part of a cap `total` (0 = none stays 0): ceil((total − index) / count), so
// the first total % count shards get one more and the parts add up to total.
int shard_share(int total, int index, int count);

// A hash of the whole plan (send times, prompts, lengths, max tokens, turns) and the flags that
// shape it: 16 hex digits, the same in every shard of one run.
std::string plan_hash(const Spec& c, const std::vector<client::PlannedRequest>& plan);

// When a shard's t0 was taken (after waiting for --start-at, interruptibly by `stop`).
struct ShardStart {
  int64_t t0_mono_ns = 0;
  int64_t t0_wall_ns = 0;       // CLOCK_REALTIME at t0
  int64_t clock_offset_ns = 0;  // CLOCK_REALTIME − CLOCK_MONOTONIC at t0
  int64_t started_late_ns = 0;  // t0 − start_at when the shard came after it; else 0
};
ShardStart start_shard(const Shard& shard, const std::atomic<bool>& stop);

// The result's servebench "shard" block (docs/scale-out.md "A shard's result").
nlohmann::json shard_json(const Spec& c, const ShardStart& start, const std::string& hash,
                          size_t requests_planned, const std::string& records_file);

}  // namespace servebench::run

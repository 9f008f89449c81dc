// File: merge/merge.h
// Combines the results of one run's shards (`servebench run --shard K/N` on several machines)
// into one result: the shards' per-request records are read back, put on one timeline (each
// shard's t0 on the wall clock), and summarised again by metrics::compute, so percentiles are
// exact over the union of records, never averages of per-shard percentiles. The merged result
// is vLLM's result JSON (report::vllm_result_json) plus `servebench.merge`, which keeps every
// shard's own figures beside the total. docs/scale-out.md gives the shard block's shape.
// Does not run anything, and does not decide how a run is split (the run part does).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "record/record.h"
#include "report/report.h"

namespace servebench::merge {

// The result's `servebench.shard` block, as a shard's run writes it. Times in ns; -1 = unknown.
struct ShardBlock {
  int index = 0;                  // K in --shard K/N
  int count = 1;                  // N
  std::string plan_hash;          // the same for every shard of one run
  std::string host;               // where the shard ran
  int64_t t0_wall_ns = -1;        // CLOCK_REALTIME at the shard's t0 (unix ns)
  int64_t clock_offset_ns = 0;    // CLOCK_REALTIME - CLOCK_MONOTONIC, read at t0
  int64_t start_at_ns = -1;       // --start-at (unix ns); -1 = none
  int64_t started_late_ns = 0;    // t0 - start_at when the shard missed the common start
  int64_t requests_planned = -1;  // requests of the plan this shard owns
  std::string records_file;       // its per-request JSONL ("" = servebench.records_file)
};

// Parses a `servebench.shard` object; throws core::Error naming `where` and the bad key.
ShardBlock parse_shard_block(const nlohmann::json& block, const std::string& where);
nlohmann::json shard_block_json(const ShardBlock& block);

// One input: a result file, its shard block (none for an independent run) and its records.
struct Input {
  std::string result_path;
  nlohmann::json result;
  std::optional<ShardBlock> shard;
  std::string records_path;
  std::vector<record::RequestRecord> records;  // as read, times relative to the shard's t0
};

// Reads every argument: a result file, or a directory searched (recursively) for result files.
// With `runs` false only files with a `servebench.shard` block count; with `runs` true every
// servebench result does. A merged result (`servebench.merge`) is never an input. Throws
// core::Error naming the argument when it holds none, or the file whose records are missing.
std::vector<Input> load_inputs(const std::vector<std::string>& paths, bool runs);

// The records file a result names, looked for beside the result first (shard directories are
// copied around), then as written. Throws core::Error naming the result when none exists.
std::string find_records_file(const std::string& result_path, const nlohmann::json& result);

struct Options {
  bool partial = false;  // merge what is there when shards are missing (flagged in the result)
  bool runs = false;     // inputs are independent runs (no shard block): their load adds up
  // Metric options; unset = the shard's `metric_options`, else read off its result's keys.
  std::optional<std::vector<double>> percentiles;
  std::optional<std::vector<std::string>> percentile_metrics;
  std::map<std::string, double> goodput_slo_ms;
  std::optional<bool> detailed;  // per-request arrays; unset = when every input has them
};

struct Merged {
  metrics::Summary summary;
  report::RunInfo info;
  std::vector<record::RequestRecord> records;  // on the merged timeline, in plan order
  nlohmann::json result;                       // vLLM's keys + servebench.merge
  std::vector<int> missing;                    // shard indices absent (only with partial)
};

// Checks the inputs belong to one run (same plan hash and N, distinct K, all N present unless
// options.partial) and merges them. Throws core::Error (one line naming the shard or file).
Merged merge(std::vector<Input> inputs, const Options& options);

// Per-shard lines for the console: index, host, requests, duration, lateness, throughput, TTFT.
std::string shard_table(const nlohmann::json& merge_block);

}  // namespace servebench::merge

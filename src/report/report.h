// File: report/report.h
// Lays figures out for people and tools: vLLM's console block (byte for byte in layout), the
// `--save-result` JSON with vLLM's keys (servebench's extras under "servebench"), and the
// `--save-detailed` per-request arrays.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "record/record.h"

namespace servebench::report {

// What vLLM prints above / stores beside the metrics.
struct RunInfo {
  std::string backend = "openai";  // --backend / endpoint_type
  std::string label;               // --label
  std::string model_id;            // --model
  std::string tokenizer_id;
  int num_prompts = 0;
  double request_rate = 0;  // inf allowed
  double burstiness = 1.0;
  int max_concurrency = 0;                      // 0 = none (JSON null)
  std::string date;                             // "%Y%m%d-%H%M%S"
  std::map<std::string, std::string> metadata;  // --metadata key=value
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl"};
  std::map<std::string, double> goodput_slo_ms;
};

// The "============ Serving Benchmark Result ============" block as vLLM prints it, including
// the optional lines (failed requests, concurrency, goodput, peak figures) where vLLM has them.
std::string vllm_console_block(const metrics::Summary& summary, const RunInfo& info);
// servebench's extras, printed after the vLLM block.
std::string extras_console_block(const metrics::Summary& summary);

// vLLM's result JSON (same keys, same meanings). With `detailed`, adds the per-request arrays
// (input_lens, output_lens, ttfts, itls, generated_texts, errors, start_times).
nlohmann::json vllm_result_json(const metrics::Summary& summary, const RunInfo& info,
                                std::span<const record::RequestRecord> records, bool detailed);

}  // namespace servebench::report

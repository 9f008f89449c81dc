// File: run/point.h
// Executing one point of a run: its files, its plan, vLLM's warmups, the main run (client,
// probes, server-metrics sampling, stop rules), the console blocks and the result JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "dataset/dataset.h"
#include "run/point_setup.h"
#include "run/run.h"
#include "server_metrics/server_metrics.h"
#include "tokenizer/tokenizer.h"

namespace servebench::run {

struct PointResult {
  nlohmann::json result;     // the point's result JSON
  std::string result_file;   // where it was saved; "" = not saved
  bool interrupted = false;  // Ctrl-C: the points not started are not part of the sweep
};

// Runs `point` (one value of each list, its stage, its GuideLLM benchmark) against `target`
// with the run's prompts; `date` names its files (a sweep's files share it), `scrape` the
// /metrics pages to sample (server_metrics_recorder.h).
PointResult execute_point(const Spec& point, const Target& target, const tokenizer::Tokenizer& tok,
                          const std::vector<dataset::Prompt>& prompts,
                          const client::BodyOptions& body,
                          const std::optional<server_metrics::SamplerOptions>& scrape,
                          const std::string& date);

}  // namespace servebench::run

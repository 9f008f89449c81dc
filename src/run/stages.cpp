// inference-perf's load stages (stages.h). inference-perf
// (inference_perf/loadgen/load_generator.py, LoadGenerator.run_stage and mp_run) sends
// int(rate × duration) requests per stage, waits until every one of them has finished, sleeps
// load.interval (default 1 s, config.py LoadConfig) and starts the next stage; its reports name
// stage i "stage_<i>" (reportgen: stage_<i>_lifecycle_metrics).
#include "run/stages.h"

#include <chrono>
#include <thread>

#include "core/interrupt.h"
#include "run/names.h"

namespace servebench::run {
namespace {

std::string padded_stage_name(size_t index, size_t count) {
  const size_t width = std::to_string(count - 1).size();
  std::string digits = std::to_string(index);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return "stage_" + digits;
}

}  // namespace

const char* stage_arrival_name(schedule::StageArrival a) {
  return a == schedule::StageArrival::kPoisson ? "poisson" : "constant";
}

std::string stage_name(int index) {
  return "stage_" + std::to_string(index);
}

void enter_stage(Spec& point, size_t index, const std::string& model_id, const std::string& date) {
  const schedule::LoadStage& stage = point.stages.at(index);
  point.stage_index = static_cast<int>(index);
  point.request_rate = stage.rate;
  point.num_prompts = point.num_prompts_requested =
      static_cast<int>(schedule::stage_request_count(stage));
  if (!point.result_filename.empty()) return;  // --result-filename, allowed with one stage
  const std::string label = (point.label.empty() ? point.backend : point.label) + "-" +
                            padded_stage_name(index, point.stages.size());
  point.result_filename =
      result_file_name(label, stage.rate, point.max_concurrency, model_id, date);
}

std::string stage_traffic_lines(const Spec& point) {
  const schedule::LoadStage& stage = point.stages.at(static_cast<size_t>(point.stage_index));
  return "Traffic request rate: " + python_float(stage.rate) + "\n" +
         "Stage: " + stage_name(point.stage_index) + " of " + std::to_string(point.stages.size()) +
         ", " + std::to_string(schedule::stage_request_count(stage)) + " requests over " +
         python_float(stage.duration_s) + " s, " + stage_arrival_name(point.stage_arrival) +
         " arrivals (inference-perf)\n";
}

void pause_between_stages(const Spec& c, size_t done) {
  if (done == 0 || done >= c.stages.size() || c.stage_interval_s <= 0) return;
  // Ended early by SIGINT/SIGTERM (the sweep then stops before the next stage).
  core::sleep_unless_interrupted(static_cast<int64_t>(c.stage_interval_s * 1e9));
}

}  // namespace servebench::run

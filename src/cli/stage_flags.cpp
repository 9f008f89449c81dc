// inference-perf's stages as flags (stage_flags.h): its config's `load:` section
// (inference_perf/config.py LoadConfig: type, interval, stages of rate and duration).
#include "cli/stage_flags.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"

namespace servebench::cli {
namespace {

schedule::LoadStage checked(const schedule::LoadStage& stage) {
  schedule::stage_request_count(stage);  // throws on a bad rate, duration or count
  return stage;
}

// "1:60,5:60".
std::vector<schedule::LoadStage> parse_pairs_list(const std::string& text) {
  std::vector<schedule::LoadStage> stages;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const size_t colon = item.find(':');
    if (item.empty() || colon == std::string::npos || item.find(':', colon + 1) != item.npos) {
      usage("--stages", "expected RATE:DURATION items separated by commas (e.g. 1:60,5:60), got '" +
                            item + "'");
    }
    schedule::LoadStage stage;
    stage.rate = parse_double("--stages", item.substr(0, colon));
    stage.duration_s = parse_double("--stages", item.substr(colon + 1));
    stages.push_back(checked(stage));
    if (comma == std::string::npos) return stages;
    start = comma + 1;
  }
}

double yaml_number(const YAML::Node& node, const std::string& where) {
  if (!node || !node.IsScalar()) usage("--stages", where + ": expected a number");
  return parse_double("--stages", node.Scalar());
}

// `where`: the file, or "" for an inline list (the error already names --stages).
StagesSpec parse_yaml(const YAML::Node& root, const std::string& file) {
  const std::string where = file.empty() ? "inline list" : file;
  StagesSpec spec;
  YAML::Node list = root;
  if (root.IsMap()) {
    // inference-perf's whole config, or its load section, or just {stages: […]}.
    const YAML::Node load = root["load"] ? root["load"] : root;
    list = load["stages"];
    if (!list) usage("--stages", where + ": no 'stages' list");
    if (const YAML::Node type = load["type"]) {
      if (!type.IsScalar()) usage("--stages", where + ": type must be constant or poisson");
      spec.arrival = parse_stage_arrival(type.Scalar());
    }
    if (const YAML::Node interval_node = load["interval"]) {
      const double interval = yaml_number(interval_node, where + ": interval");
      if (!(interval >= 0) || std::isinf(interval))
        usage("--stages", where + ": interval must be a non-negative number of seconds");
      spec.interval_s = interval;
    }
  }
  if (!list.IsSequence() || list.size() == 0)
    usage("--stages", where + ": 'stages' must be a non-empty list of {rate, duration}");
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string at = where + ": stage " + std::to_string(i);
    if (!item.IsMap()) usage("--stages", at + ": expected {rate: R, duration: D}");
    spec.stages.push_back(checked({yaml_number(item["rate"], at + " rate"),
                                   yaml_number(item["duration"], at + " duration")}));
  }
  return spec;
}

}  // namespace

StagesSpec parse_stages(const std::string& text) {
  if (text.empty()) usage("--stages", "needs a value");
  std::error_code ec;
  const bool inline_yaml = text.front() == '[' || text.front() == '{';
  if (!inline_yaml && std::filesystem::is_regular_file(text, ec)) {
    try {
      return parse_yaml(YAML::LoadFile(text), text);
    } catch (const YAML::Exception& e) {
      throw core::Error(core::ErrorKind::kInput, text, std::string("not YAML/JSON: ") + e.what());
    }
  }
  if (inline_yaml) {
    try {
      return parse_yaml(YAML::Load(text), "");
    } catch (const YAML::Exception& e) {
      usage("--stages", std::string("not YAML/JSON: ") + e.what());
    }
  }
  return {parse_pairs_list(text), std::nullopt, std::nullopt};
}

schedule::StageArrival parse_stage_arrival(const std::string& text) {
  if (text == "constant") return schedule::StageArrival::kConstant;
  if (text == "poisson") return schedule::StageArrival::kPoisson;
  usage("--stage-arrival", "unknown arrival '" + text + "'; use constant or poisson");
}

void apply_stage_flags(const StageFlags& f, const Given& given, run::Spec& c) {
  if (!given("--stages")) {
    for (const char* flag : {"--stage-arrival", "--stage-interval"})
      if (given(flag)) usage(flag, "applies only with --stages");
    return;
  }
  for (const char* flag :
       {"--request-rate", "--burstiness", "--num-prompts", "--ramp-up-strategy"}) {
    if (given(flag)) {
      usage(flag, "--stages sets each stage's rate and request count (rate × duration); drop " +
                      std::string(flag));
    }
  }
  if (c.max_concurrencies.size() > 1)
    usage("--max-concurrency", "with --stages give one value (it applies to every stage)");
  if (c.limits.profile != run::LoadProfile::kNone || c.limits.duration_s > 0)
    usage("--stages", "cannot be combined with --profile or --duration (stages set both)");
  if (c.self_timed) {
    usage("--stages", "the " + c.dataset.name +
                          " dataset replays its trace's own timestamps; stages set their own");
  }
  if (c.dataset.sharegpt.multi_turn) usage("--multi-turn", "cannot be combined with --stages");
  if (run::runs_several_targets(c))
    usage("--stages", "cannot be combined with several targets (--base-url list, --sim-instances)");

  const StagesSpec spec = parse_stages(f.stages);
  for (const char* flag : {"--result-filename", "--records"}) {
    if (given(flag) && spec.stages.size() > 1) {
      usage(flag, "names one file, but --stages makes " + std::to_string(spec.stages.size()) +
                      " runs; use --result-dir (each stage gets its own file)");
    }
  }
  c.stages = spec.stages;
  c.stage_arrival = given("--stage-arrival") ? parse_stage_arrival(f.arrival)
                                             : spec.arrival.value_or(c.stage_arrival);
  if (given("--stage-interval")) {
    c.stage_interval_s = parse_double("--stage-interval", f.interval);
    if (!(c.stage_interval_s >= 0) || std::isinf(c.stage_interval_s))
      usage("--stage-interval", "must be a non-negative number of seconds, got " + f.interval);
  } else if (spec.interval_s) {
    c.stage_interval_s = *spec.interval_s;
  }
  c.request_rates.clear();
  size_t largest = 0;
  for (const schedule::LoadStage& stage : c.stages) {
    c.request_rates.push_back(stage.rate);
    largest = std::max(largest, schedule::stage_request_count(stage));
  }
  c.request_rate = c.request_rates.front();
  c.num_prompts = static_cast<int>(largest);
}

}  // namespace servebench::cli

// Merging shard results: the one-run check, one timeline from the shards' wall-clock t0s, the
// duration from the union of the shards' intervals, metrics::compute over the union of records,
// and vLLM's result JSON with `servebench.merge` (docs/scale-out.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "merge/merge.h"

namespace servebench::merge {
using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const char* const kMetricNames[] = {
    "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"};

double number_or_inf(const json& j, const char* key, double fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (j[key].is_string()) return j[key].get<std::string>() == "-inf" ? -kInf : kInf;
  return j[key].is_number() ? j[key].get<double>() : fallback;
}

std::string string_or_empty(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The percentile metrics and percentiles a result was written with, read off its keys
// ("mean_ttft_ms", "p99.9_ttft_ms") when the shard block does not carry them.
void metric_options_from_keys(const json& result, std::vector<std::string>& names,
                              std::vector<double>& percentiles) {
  for (const char* name : kMetricNames) {
    if (result.contains("mean_" + std::string(name) + "_ms")) names.emplace_back(name);
  }
  if (names.empty()) return;
  const std::string suffix = "_" + names.front() + "_ms";
  for (const auto& [key, value] : result.items()) {
    if (key.size() <= suffix.size() + 1 || key[0] != 'p' || !key.ends_with(suffix)) continue;
    const std::string word = key.substr(1, key.size() - 1 - suffix.size());
    if (word.find_first_not_of("0123456789.") != std::string::npos) continue;
    percentiles.push_back(std::stod(word));
  }
  std::sort(percentiles.begin(), percentiles.end());
}

metrics::Options metric_options(const Input& first, const Options& options,
                                std::vector<std::string>& percentile_metrics) {
  metrics::Options mo;
  std::vector<std::string> names;
  std::vector<double> ps;
  const json& sb = first.result["servebench"];
  if (sb.contains("shard") && sb["shard"].contains("metric_options")) {
    const json& m = sb["shard"]["metric_options"];
    names = m.value("percentile_metrics", std::vector<std::string>{});
    ps = m.value("percentiles", std::vector<double>{});
    mo.goodput_slo_ms = m.value("goodput_slo_ms", std::map<std::string, double>{});
  } else {
    metric_options_from_keys(first.result, names, ps);
  }
  if (!names.empty()) percentile_metrics = names;
  if (!ps.empty()) mo.percentiles = ps;
  if (options.percentile_metrics) percentile_metrics = *options.percentile_metrics;
  if (options.percentiles) mo.percentiles = *options.percentiles;
  if (!options.goodput_slo_ms.empty()) mo.goodput_slo_ms = options.goodput_slo_ms;
  return mo;
}

// Shard mode: one plan hash, one N, each K once, all K present unless partial.
std::vector<int> check_one_run(const std::vector<Input>& inputs, const Options& options) {
  const Input& first = inputs.front();
  const ShardBlock& f = *first.shard;
  std::map<int, const Input*> by_index;
  for (const Input& in : inputs) {
    const ShardBlock& s = *in.shard;
    if (s.plan_hash != f.plan_hash)
      throw core::Error(core::ErrorKind::kInput, in.result_path,
                        "plan_hash '" + s.plan_hash + "' differs from '" + f.plan_hash + "' of " +
                            first.result_path + ": not shards of one run");
    if (s.count != f.count)
      throw core::Error(core::ErrorKind::kInput, in.result_path,
                        "shard count " + std::to_string(s.count) + " differs from " +
                            std::to_string(f.count) + " of " + first.result_path);
    auto [it, fresh] = by_index.emplace(s.index, &in);
    if (!fresh)
      throw core::Error(core::ErrorKind::kInput, in.result_path,
                        "shard " + std::to_string(s.index) + "/" + std::to_string(s.count) +
                            " is also " + it->second->result_path);
  }
  std::vector<int> missing;
  for (int k = 0; k < f.count; ++k) {
    if (!by_index.count(k)) missing.push_back(k);
  }
  if (!missing.empty() && !options.partial) {
    std::string list;
    for (int k : missing) list += (list.empty() ? "" : ", ") + std::to_string(k);
    throw core::Error(core::ErrorKind::kInput, "merge",
                      "shard " + list + " of " + std::to_string(f.count) + " missing (plan_hash '" +
                          f.plan_hash + "'); merge the others with --partial");
  }
  return missing;
}

void shift(int64_t& t, int64_t by) {
  if (t >= 0) t += by;
}

void shift_record(record::RequestRecord& r, int64_t by) {
  for (int64_t* t : {&r.intended_ns, &r.sent_ns, &r.first_byte_ns, &r.first_token_ns,
                     &r.last_token_ns, &r.done_ns})
    shift(*t, by);
  for (int64_t& t : r.chunk_ns) shift(t, by);
}

// Total length of the union of [start, end) intervals, in ns.
int64_t union_length_ns(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  int64_t total = 0, start = 0, end = -1;
  for (const auto& [a, b] : intervals) {
    if (a > end) {
      if (end > start) total += end - start;
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  if (end > start) total += end - start;
  return total;
}

json distribution_brief(const metrics::Distribution& d) {
  json j = {{"mean", d.mean}, {"median", d.median}, {"max", d.max}};
  for (const auto& [p, value] : d.percentiles) j["p" + metrics::percentile_word(p)] = value;
  return j;
}

json shard_figures(const Input& in, int position, int64_t offset_ns, double duration_s,
                   const metrics::Options& mo) {
  const metrics::Summary s = metrics::compute(in.records, duration_s, mo);
  const metrics::VllmMetrics& v = s.vllm;
  json j = {
      {"index", in.shard ? in.shard->index : position},
      {"host", in.shard ? in.shard->host : ""},
      {"result_file", in.result_path},
      {"records_file", in.records_path},
      {"t0_offset_ms", static_cast<double>(offset_ns) / 1e6},
      {"started_late_ms", in.shard ? static_cast<double>(in.shard->started_late_ns) / 1e6 : 0},
      {"clock_offset_ns", in.shard ? in.shard->clock_offset_ns : 0},
      {"duration_s", duration_s},
      {"requests_planned", in.shard && in.shard->requests_planned >= 0
                               ? json(in.shard->requests_planned)
                               : json(nullptr)},
      {"requests_sent", s.extras.requests_sent},
      {"completed", v.completed},
      {"failed", v.failed},
      {"total_input_tokens", v.total_input},
      {"total_output_tokens", v.total_output},
      {"request_throughput", v.request_throughput},
      {"output_throughput", v.output_throughput},
      {"ttft_ms", distribution_brief(v.ttft_ms)},
      {"e2el_ms", distribution_brief(v.e2el_ms)},
      {"schedule_lag_ms", distribution_brief(s.extras.schedule_lag_ms)}};
  return j;
}

// An input's servebench.client block ({} when it has none: vLLM's own results).
json client_state(const json& result) {
  if (!result.contains("servebench") || !result["servebench"].is_object()) return json::object();
  const json& ours = result["servebench"];
  if (!ours.contains("client") || !ours["client"].is_object()) return json::object();
  return ours["client"];
}

report::RunInfo run_info(const std::vector<Input>& inputs, const Options& options,
                         const std::vector<std::string>& percentile_metrics,
                         const metrics::Options& mo) {
  const json& r0 = inputs.front().result;
  report::RunInfo info;
  info.backend = string_or_empty(r0, "backend");
  if (info.backend.empty()) info.backend = "openai";
  info.label = string_or_empty(r0, "label");
  info.model_id = string_or_empty(r0, "model_id");
  info.tokenizer_id = string_or_empty(r0, "tokenizer_id");
  info.has_tokenizer = !info.tokenizer_id.empty();
  info.burstiness = number_or_inf(r0, "burstiness", 1.0);
  info.percentile_metrics = percentile_metrics;
  info.goodput_slo_ms = mo.goodput_slo_ms;
  info.date = string_or_empty(r0, "date");
  int num_prompts_sum = 0, concurrency_sum = 0;
  double rate_sum = 0;
  bool same_prompts = true;
  for (const Input& in : inputs) {
    const int n = in.result.value("num_prompts", 0);
    same_prompts = same_prompts && n == r0.value("num_prompts", 0);
    num_prompts_sum += n;
    const json& mc = in.result.contains("max_concurrency") ? in.result["max_concurrency"] : json();
    concurrency_sum += mc.is_number_integer() ? mc.get<int>() : 0;
    rate_sum += number_or_inf(in.result, "request_rate", kInf);
    const std::string date = string_or_empty(in.result, "date");
    if (!date.empty() && (info.date.empty() || date < info.date)) info.date = date;
    // Requests a shard never sent (--duration ended first, SIGINT/SIGTERM): the run's, summed.
    info.not_sent += client_state(in.result).value("not_sent", size_t{0});
  }
  if (options.runs) {
    // Independent runs side by side: their loads add up.
    info.num_prompts = num_prompts_sum;
    info.request_rate = rate_sum;
    info.max_concurrency = concurrency_sum;
  } else {
    // A shard's result keeps the whole run's flags.
    info.num_prompts = same_prompts ? r0.value("num_prompts", 0) : num_prompts_sum;
    info.request_rate = number_or_inf(r0, "request_rate", kInf);
    const json& mc = r0.contains("max_concurrency") ? r0["max_concurrency"] : json();
    info.max_concurrency = mc.is_number_integer() ? mc.get<int>() : 0;
  }
  return info;
}

// Top-level string keys every input agrees on and the merged result lacks (--metadata).
void copy_common_strings(const std::vector<Input>& inputs, json& result) {
  for (const auto& item : inputs.front().result.items()) {
    // Named copies, not structured bindings: clang 14 (the sanitizer build) cannot capture those.
    const std::string& key = item.key();
    const json& value = item.value();
    if (!value.is_string() || result.contains(key)) continue;
    const bool agreed = std::all_of(inputs.begin(), inputs.end(), [&](const Input& in) {
      return in.result.contains(key) && in.result[key] == value;
    });
    if (agreed) result[key] = value;
  }
}

}  // namespace

Merged merge(std::vector<Input> inputs, const Options& options) {
  if (inputs.empty()) throw core::Error(core::ErrorKind::kUsage, "merge", "no inputs");
  Merged out;
  if (!options.runs) {
    out.missing = check_one_run(inputs, options);
    // In shard order (check_one_run made the indices distinct).
    std::map<int, Input> by_index;
    for (Input& in : inputs) {
      const int k = in.shard->index;
      by_index.emplace(k, std::move(in));
    }
    inputs.clear();
    for (auto& [k, in] : by_index) inputs.push_back(std::move(in));
  }
  const bool wall_clock = std::all_of(inputs.begin(), inputs.end(), [](const Input& in) {
    return in.shard && in.shard->t0_wall_ns >= 0;
  });
  int64_t base_ns = std::numeric_limits<int64_t>::max();
  for (const Input& in : inputs) {
    if (wall_clock) base_ns = std::min(base_ns, in.shard->t0_wall_ns);
  }
  std::vector<std::string> percentile_metrics = report::RunInfo{}.percentile_metrics;
  const metrics::Options mo = metric_options(inputs.front(), options, percentile_metrics);

  std::vector<std::pair<int64_t, int64_t>> intervals;
  json shards = json::array();
  std::unordered_map<uint64_t, size_t> owner;  // request index -> input, to find duplicates
  const uint64_t runs = inputs.size();
  bool detailed = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    const int64_t offset_ns = wall_clock ? in.shard->t0_wall_ns - base_ns : 0;
    const double duration_s = in.result.value("duration", 0.0);
    intervals.emplace_back(offset_ns, offset_ns + static_cast<int64_t>(duration_s * 1e9));
    shards.push_back(shard_figures(in, static_cast<int>(i), offset_ns, duration_s, mo));
    detailed = detailed && in.result.contains("ttfts");
    for (record::RequestRecord r : in.records) {
      shift_record(r, offset_ns);
      if (options.runs) {
        r.index = r.index * runs + i;  // interleaved, unique across the runs
        if (r.conversation >= 0) r.conversation = r.conversation * static_cast<int64_t>(runs) + i;
      } else if (!r.warmup) {
        auto [it, fresh] = owner.emplace(r.index, i);
        if (!fresh)
          throw core::Error(core::ErrorKind::kInput, in.records_path,
                            "request " + std::to_string(r.index) + " is also in " +
                                inputs[it->second].records_path + ": the shards' plans overlap");
      }
      out.records.push_back(std::move(r));
    }
  }
  std::stable_sort(out.records.begin(), out.records.end(),
                   [](const auto& a, const auto& b) { return a.index < b.index; });
  const int64_t union_ns = union_length_ns(intervals);
  int64_t span_end = 0;
  for (const auto& iv : intervals) span_end = std::max(span_end, iv.second);

  out.summary = metrics::compute(out.records, static_cast<double>(union_ns) / 1e9, mo);
  out.info = run_info(inputs, options, percentile_metrics, mo);
  out.result = report::vllm_result_json(out.summary, out.info, out.records,
                                        options.detailed.value_or(detailed));
  copy_common_strings(inputs, out.result);
  bool interrupted = false;
  for (const Input& in : inputs) interrupted |= client_state(in.result).value("interrupted", false);
  out.result["servebench"]["client"] = {{"interrupted", interrupted},
                                        {"not_sent", out.info.not_sent}};

  json present = json::array();
  for (const json& s : shards) present.push_back(s["index"]);
  const ShardBlock* f = inputs.front().shard ? &*inputs.front().shard : nullptr;
  out.result["servebench"]["merge"] = {
      {"mode", options.runs ? "runs" : "shards"},
      {"plan_hash", !options.runs && f ? json(f->plan_hash) : json(nullptr)},
      {"count", !options.runs && f ? f->count : static_cast<int>(inputs.size())},
      {"present", present},
      {"missing", out.missing},
      {"partial", !out.missing.empty()},
      {"timeline", wall_clock ? "wall_clock" : "aligned_at_t0"},
      {"t0_wall_ns", wall_clock ? json(base_ns) : json(nullptr)},
      {"union_s", static_cast<double>(union_ns) / 1e9},
      {"span_s", static_cast<double>(span_end) / 1e9},
      {"shards", std::move(shards)}};
  return out;
}

}  // namespace servebench::merge

// vLLM's --save-result JSON: main_async() and benchmark() in vllm/benchmarks/serve.py build it
// as {date, endpoint_type, backend, label, model_id, tokenizer_id, num_prompts, <metadata>,
// request_rate, burstiness, max_concurrency, ramp_up_* with a ramp-up} merged with the benchmark
// result (rps_change_events with a ramp-up), later keys winning; the per-request arrays are
// deleted unless --save-detailed. Units follow vLLM: aggregates in ms (*_ms), per-request
// ttfts/itls/latencies/start_times/queue_times in seconds.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/json_text.h"
#include "report/report.h"

namespace servebench::report {
namespace {

using nlohmann::json;

// Generated text: replaces every byte that does not start a valid UTF-8 sequence (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF) with U+FFFD, as Python's decode with
// errors="replace" does to a cut multi-byte character. Every other string goes through
// core::valid_utf8_text (`\xE9` shown).
std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  const size_t n = s.size();
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80; };
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = cont(i + 1) ? 2 : 0;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (cont(i + 1) && cont(i + 2)) {
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        const bool overlong = c == 0xE0 && c1 < 0xA0;
        const bool surrogate = c == 0xED && c1 >= 0xA0;
        len = overlong || surrogate ? 0 : 3;
      }
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (cont(i + 1) && cont(i + 2) && cont(i + 3)) {
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        const bool overlong = c == 0xF0 && c1 < 0x90;
        const bool too_big = c == 0xF4 && c1 >= 0x90;
        len = overlong || too_big ? 0 : 4;
      }
    }
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

// vLLM writes an infinite request rate as the string "inf"; JSON has no infinity.
json number_or_inf(double x) {
  if (std::isnan(x)) return nullptr;
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

json string_or_null(const std::string& s) {
  if (s.empty()) return nullptr;
  return core::valid_utf8_text(s);
}

json unfinished_json(const metrics::Unfinished& u) {
  return {{"requests", u.requests},
          {"total_input_tokens", u.input_tokens},
          {"total_output_tokens", u.output_tokens}};
}

json distribution_json(const metrics::Distribution& d) {
  json j = {{"count", d.count}, {"mean", d.mean}, {"median", d.median},
            {"std", d.std},     {"min", d.min},   {"max", d.max}};
  for (const auto& [p, value] : d.percentiles) j["p" + metrics::percentile_word(p)] = value;
  return j;
}

bool selected(const RunInfo& info, const std::string& metric) {
  return std::find(info.percentile_metrics.begin(), info.percentile_metrics.end(), metric) !=
         info.percentile_metrics.end();
}

// vLLM's process_one_metric: mean/median/std and p<word> keys for a selected metric.
void add_metric(json& j, const RunInfo& info, const std::string& name,
                const metrics::Distribution& d) {
  if (!selected(info, name)) return;
  j["mean_" + name + "_ms"] = d.mean;
  j["median_" + name + "_ms"] = d.median;
  j["std_" + name + "_ms"] = d.std;
  for (const auto& [p, value] : d.percentiles) {
    j["p" + metrics::percentile_word(p) + "_" + name + "_ms"] = value;
  }
}

double ns_to_s(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

bool completed(const record::RequestRecord& r) {
  return metrics::classify_failure(r).empty();
}

}  // namespace

json vllm_result_json(const metrics::Summary& summary, const RunInfo& info,
                      std::span<const record::RequestRecord> records, bool detailed) {
  const metrics::VllmMetrics& m = summary.vllm;
  const metrics::Extras& x = summary.extras;
  json j = json::object();
  j["date"] = info.date;
  j["endpoint_type"] = info.backend;  // vLLM keeps both names for backward compatibility
  j["backend"] = info.backend;
  j["label"] = string_or_null(info.label);
  j["model_id"] = core::valid_utf8_text(info.model_id);
  j["tokenizer_id"] = info.has_tokenizer ? string_or_null(info.tokenizer_id) : json(nullptr);
  j["num_prompts"] = info.num_prompts;
  for (const auto& [key, value] : info.metadata) {
    j[core::valid_utf8_text(key)] = core::valid_utf8_text(value);
  }
  j["request_rate"] = number_or_inf(info.request_rate);
  j["burstiness"] = number_or_inf(info.burstiness);
  j["max_concurrency"] = info.max_concurrency > 0 ? json(info.max_concurrency) : json(nullptr);
  if (!info.ramp_up_strategy.empty()) {
    j["ramp_up_strategy"] = info.ramp_up_strategy;
    j["ramp_up_start_rps"] = info.ramp_up_start_rps;
    j["ramp_up_end_rps"] = info.ramp_up_end_rps;
    json events = json::array();
    for (const RpsChangeEvent& e : info.rps_change_events)
      events.push_back({{"rps", e.rps}, {"timestamp", e.timestamp}});
    j["rps_change_events"] = std::move(events);
  }
  if (info.probes) {
    j["probe_completed"] = info.probes->completed;
    j["probe_failed"] = info.probes->failed;
    j["probe_median_e2el_ms"] = info.probes->median_e2el_ms;
    j["probe_p99_e2el_ms"] = info.probes->p99_e2el_ms;
    j["probe_max_e2el_ms"] = info.probes->max_e2el_ms;
  }
  if (info.spec_decode) {
    const server_metrics::SpecDecodeStats& sd = *info.spec_decode;
    j["spec_decode_acceptance_rate"] = sd.acceptance_rate;
    j["spec_decode_acceptance_length"] = sd.acceptance_length;
    j["spec_decode_num_drafts"] = sd.num_drafts;
    j["spec_decode_draft_tokens"] = sd.draft_tokens;
    j["spec_decode_accepted_tokens"] = sd.accepted_tokens;
    j["spec_decode_per_position_acceptance_rates"] = sd.per_position_acceptance_rates;
  }

  j["duration"] = m.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input;
  j["total_output_tokens"] = m.total_output;
  j["request_throughput"] = m.request_throughput;
  j["request_goodput"] = info.goodput_slo_ms.empty() ? json(nullptr) : json(m.request_goodput);
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;

  // Per-request arrays in plan order, warmups left out, as vLLM's `outputs`.
  std::vector<const record::RequestRecord*> rs;
  for (const auto& r : records) {
    if (!r.warmup) rs.push_back(&r);
  }
  std::stable_sort(rs.begin(), rs.end(), [](auto* a, auto* b) { return a->index < b->index; });
  json latencies = json::array(), queue_times = json::array();
  json input_lens = json::array(), output_lens = json::array(), ttfts = json::array();
  json itls = json::array(), start_times = json::array(), texts = json::array();
  json errors = json::array(), intended = json::array(), reasons = json::array();
  for (json* a : {&latencies, &queue_times}) a->get_ref<json::array_t&>().reserve(rs.size());
  if (detailed) {
    for (json* a : {&input_lens, &output_lens, &ttfts, &itls, &start_times, &texts, &errors,
                    &intended, &reasons}) {
      a->get_ref<json::array_t&>().reserve(rs.size());
    }
  }
  for (const auto* r : rs) {
    const bool ok = completed(*r);
    // vLLM leaves latency at 0 for failures and ttft at 0 until a first chunk arrived.
    latencies.push_back(ok ? ns_to_s(r->last_token_ns - r->sent_ns) : 0.0);
    queue_times.push_back(
        r->sent_ns >= 0 && r->intended_ns >= 0 ? ns_to_s(r->sent_ns - r->intended_ns) : 0.0);
    if (!detailed) continue;
    input_lens.push_back(r->input_tokens());
    output_lens.push_back(ok ? metrics::vllm_output_tokens(*r) : 0);
    ttfts.push_back(
        r->first_token_ns >= 0 && r->sent_ns >= 0 ? ns_to_s(r->first_token_ns - r->sent_ns) : 0.0);
    json gaps = json::array();
    if (r->chunk_ns.size() > 1) gaps.get_ref<json::array_t&>().reserve(r->chunk_ns.size() - 1);
    for (size_t i = 1; i < r->chunk_ns.size(); ++i) {
      gaps.push_back(ns_to_s(r->chunk_ns[i] - r->chunk_ns[i - 1]));
    }
    itls.push_back(std::move(gaps));
    start_times.push_back(r->sent_ns >= 0 ? ns_to_s(r->sent_ns) : 0.0);
    texts.push_back(valid_utf8(r->generated_text));
    errors.push_back(core::valid_utf8_text(core::redact_secrets(r->error)));
    intended.push_back(r->intended_ns >= 0 ? json(ns_to_s(r->intended_ns)) : json(nullptr));
    reasons.push_back(metrics::classify_failure(*r));
  }
  if (detailed) {
    j["input_lens"] = std::move(input_lens);
    j["output_lens"] = std::move(output_lens);
    j["ttfts"] = std::move(ttfts);
    j["itls"] = std::move(itls);
  }
  // vLLM's list of fields removed without --save-detailed does not include these two.
  j["latencies"] = std::move(latencies);
  if (detailed) j["start_times"] = std::move(start_times);
  j["queue_times"] = std::move(queue_times);
  if (detailed) {
    j["generated_texts"] = std::move(texts);
    j["errors"] = std::move(errors);
  }
  j["max_output_tokens_per_s"] = m.max_output_tokens_per_s;
  j["max_concurrent_requests"] = static_cast<int64_t>(m.max_concurrent_requests);
  j["rtfx"] = 0.0;  // audio only in vLLM; always written

  if (info.has_tokenizer) {
    add_metric(j, info, "ttft", m.ttft_ms);
    add_metric(j, info, "tpot", m.tpot_ms);
    add_metric(j, info, "itl", m.itl_ms);
  }
  add_metric(j, info, "e2el", m.e2el_ms);
  if (info.max_concurrency > 0) {
    add_metric(j, info, "client_queue_time", m.client_queue_time_ms);
    if (!std::isinf(info.request_rate)) {
      add_metric(j, info, "e2el_including_client_queue", m.e2el_including_client_queue_ms);
    }
  }

  json sb = {
      {"requests_sent", x.requests_sent},
      {"warmup_requests_ignored", x.warmup_ignored},
      {"requested_rate_rps", number_or_inf(x.requested_rate)},
      {"scheduled_rate_rps", number_or_inf(x.scheduled_rate)},
      {"achieved_rate_rps", number_or_inf(x.achieved_rate)},
      {"schedule_lag_ms", distribution_json(x.schedule_lag_ms)},
      {"ttft_from_intended_ms", distribution_json(x.ttft_from_intended_ms)},
      {"e2el_from_intended_ms", distribution_json(x.e2el_from_intended_ms)},
      {"itl_per_token_ms", distribution_json(x.itl_per_token_ms)},
      {"itl_per_token_requests", x.itl_per_token_requests},
      {"failures_by_reason", x.failures_by_reason},
      {"incomplete", unfinished_json(x.incomplete)},
      {"errored", unfinished_json(x.errored)},
  };
  if (info.client_health) {
    const ClientHealth& h = *info.client_health;
    sb["client"] = {{"cpu_user_s", h.cpu_user_s},
                    {"cpu_system_s", h.cpu_system_s},
                    {"max_loop_lag_ms", static_cast<double>(h.max_loop_lag_ns) / 1e6},
                    {"bytes_received", h.bytes_received},
                    {"sse_events", h.sse_events},
                    {"connections_opened", h.connections_opened},
                    {"t0_mono_ns", h.t0_mono_ns},
                    {"transport", h.transport},
                    {"arrival_clock", h.arrival_clock},
                    {"kernel_stamped_reads", h.kernel_stamped_reads},
                    {"reads_stamped_at_read", h.reads_stamped_at_read},
                    {"read_delay_ms",
                     {{"p50", static_cast<double>(h.read_delay_p50_ns) / 1e6},
                      {"p99", static_cast<double>(h.read_delay_p99_ns) / 1e6},
                      {"p99.9", static_cast<double>(h.read_delay_p999_ns) / 1e6},
                      {"max", static_cast<double>(h.read_delay_max_ns) / 1e6}}}};
  }
  if (detailed) {
    sb["intended_times_s"] = std::move(intended);
    sb["failure_reasons"] = std::move(reasons);
  }
  j["servebench"] = std::move(sb);
  make_valid_utf8(j);  // whatever string was missed above: dump() must not throw
  return j;
}

void make_valid_utf8(json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!core::is_valid_utf8(s)) s = core::valid_utf8_text(s);
  } else if (j.is_array()) {
    for (json& e : j) make_valid_utf8(e);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      make_valid_utf8(it.value());
      bad_key = bad_key || !core::is_valid_utf8(it.key());
    }
    if (bad_key) {
      json fixed = json::object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        fixed[core::valid_utf8_text(it.key())] = std::move(it.value());
      }
      j = std::move(fixed);
    }
  }
}

json pytorch_benchmark_records(const json& result, const json& args, const std::string& model) {
  // vLLM's save_to_pytorch_benchmark_format: these aggregates, one record each; everything else
  // except the big per-request arrays goes to extra_info.
  static const char* const kMetrics[] = {"median_ttft_ms", "mean_ttft_ms", "std_ttft_ms",
                                         "p99_ttft_ms",    "mean_tpot_ms", "median_tpot_ms",
                                         "std_tpot_ms",    "p99_tpot_ms",  "median_itl_ms",
                                         "mean_itl_ms",    "std_itl_ms",   "p99_itl_ms"};
  static const char* const kIgnored[] = {"ttfts", "itls", "generated_texts", "errors"};
  json extra_info = json::object();
  for (const auto& [key, value] : result.items()) {
    const bool is_metric =
        std::find(std::begin(kMetrics), std::end(kMetrics), key) != std::end(kMetrics);
    const bool ignored =
        std::find(std::begin(kIgnored), std::end(kIgnored), key) != std::end(kIgnored);
    if (!is_metric && !ignored) extra_info[key] = value;
  }
  json bench_args = args.is_object() ? args : json::object();
  if (!bench_args.contains("tensor_parallel_size") && extra_info.contains("tensor_parallel_size")) {
    bench_args["tensor_parallel_size"] = extra_info["tensor_parallel_size"];
  }
  json records = json::array();
  for (const char* name : kMetrics) {
    if (!result.contains(name)) continue;
    records.push_back(
        {{"benchmark", {{"name", "vLLM benchmark"}, {"extra_info", {{"args", bench_args}}}}},
         {"model", {{"name", model}}},
         {"metric",
          {{"name", name},
           {"benchmark_values", json::array({result[name]})},
           {"extra_info", extra_info}}}});
  }
  return records;
}

}  // namespace servebench::report

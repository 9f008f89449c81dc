// The /metrics text: Prometheus exposition format 0.0.4, one HELP and TYPE per family.
#include "sim/metrics_exposition.h"

#include <algorithm>
#include <cstdio>

#include "core/json_text.h"
#include "sim/sim.h"

namespace servebench::sim::detail {
namespace {

void append_histogram(std::string& out, const char* name, const char* help, const char* labels,
                      const std::vector<const FrontMetrics*>& fronts,
                      Histogram FrontMetrics::*which, const double* bounds, size_t n) {
  append_family(out, name, "histogram", help);
  // `<name><suffix>{<labels><more_labels>} <value>`
  auto sample = [&](const char* suffix, std::string_view more_labels, std::string_view value) {
    out += name;
    out += suffix;
    out += '{';
    out += labels;
    out += more_labels;
    out += "} ";
    out += value;
    out += '\n';
  };
  uint64_t cumulative = 0, count = 0, sum_ns = 0;
  char num[64];
  for (size_t i = 0; i <= n; ++i) {
    for (const FrontMetrics* m : fronts) cumulative += (m->*which).buckets[i].get();
    std::string le = ",le=\"";
    if (i < n) {
      std::snprintf(num, sizeof num, "%g", bounds[i]);
      le += num;
    } else {
      le += "+Inf";
    }
    le += '"';
    sample("_bucket", le, std::to_string(cumulative));
  }
  for (const FrontMetrics* m : fronts) {
    count += (m->*which).count.get();
    sum_ns += (m->*which).sum_ns.get();
  }
  std::snprintf(num, sizeof num, "%.9f", static_cast<double>(sum_ns) * 1e-9);
  sample("_sum", "", num);
  sample("_count", "", std::to_string(count));
}

uint64_t sum_of(const std::vector<const FrontMetrics*>& fronts, Counter FrontMetrics::*c) {
  uint64_t t = 0;
  for (const FrontMetrics* m : fronts) t += (m->*c).get();
  return t;
}

// One-sample family: HELP, TYPE and `<name>{labels} value`.
void append_single(std::string& out, const char* name, const char* type, const char* help,
                   const std::string& labels, const std::string& value) {
  append_family(out, name, type, help);
  append_sample(out, name, labels, value);
}

// servebench's own: how late tokens left versus the model's schedule (never silent drift).
void append_lag(std::string& out, const std::string& labels,
                const std::vector<const FrontMetrics*>& fronts) {
  append_histogram(out, "servebench_sim:emission_lag_seconds",
                   "Token send time minus its scheduled due time, in seconds.", labels.c_str(),
                   fronts, &FrontMetrics::lag, kLagBuckets, std::size(kLagBuckets));
  uint64_t lag_max = 0;
  for (const FrontMetrics* m : fronts) lag_max = std::max(lag_max, m->lag_max_ns.get());
  char num[64];
  std::snprintf(num, sizeof num, "%.9f", static_cast<double>(lag_max) * 1e-9);
  append_single(out, "servebench_sim:emission_lag_max_seconds", "gauge",
                "Largest emission lag seen since start, in seconds.", labels, num);
}

}  // namespace

void append_family(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void append_sample(std::string& out, std::string_view name, std::string_view labels,
                   std::string_view value) {
  out += name;
  out += '{';
  out += labels;
  out += "} ";
  out += value;
  out += '\n';
}

std::string frontend_exposition_text(std::string_view served_model_name,
                                     std::string_view frontend_name,
                                     const std::vector<const FrontMetrics*>& fronts,
                                     const ScheduleStats& engines) {
  std::string labels = "model=\"";
  core::append_json_escaped(labels, served_model_name);
  labels += "\",frontend=\"";
  core::append_json_escaped(labels, frontend_name);
  labels += '"';
  std::string out;
  const uint64_t ok =
      sum_of(fronts, &FrontMetrics::success_length) + sum_of(fronts, &FrontMetrics::success_stop);
  out +=
      "# HELP dynamo_frontend_requests_total Requests processed by the frontend.\n"
      "# TYPE dynamo_frontend_requests_total counter\n";
  out += "dynamo_frontend_requests_total{" + labels + ",status=\"success\"} " + std::to_string(ok) +
         "\n";
  out += "dynamo_frontend_requests_total{" + labels + ",status=\"error\"} " +
         std::to_string(sum_of(fronts, &FrontMetrics::rejected)) + "\n";
  append_single(out, "dynamo_frontend_inflight_requests", "gauge",
                "Requests in flight at the frontend's workers.", labels,
                std::to_string(engines.running + engines.waiting));
  append_single(out, "dynamo_frontend_queued_requests", "gauge",
                "Requests waiting for a worker's batch.", labels, std::to_string(engines.waiting));
  append_single(out, "dynamo_frontend_disconnected_clients", "counter",
                "Clients that went away before their answer ended.", labels,
                std::to_string(sum_of(fronts, &FrontMetrics::cancelled)));
  append_single(out, "dynamo_frontend_output_tokens_total", "counter",
                "Output tokens sent by the frontend.", labels,
                std::to_string(sum_of(fronts, &FrontMetrics::generation_tokens)));
  append_single(out, "dynamo_frontend_input_tokens_total", "counter",
                "Prompt tokens of the requests the frontend admitted.", labels,
                std::to_string(sum_of(fronts, &FrontMetrics::prompt_tokens)));
  append_histogram(out, "dynamo_frontend_time_to_first_token_seconds",
                   "Time to first token in seconds.", labels.c_str(), fronts, &FrontMetrics::ttft,
                   kTtftBuckets, std::size(kTtftBuckets));
  append_histogram(out, "dynamo_frontend_inter_token_latency_seconds",
                   "Inter-token latency in seconds.", labels.c_str(), fronts, &FrontMetrics::itl,
                   kItlBuckets, std::size(kItlBuckets));
  append_histogram(out, "dynamo_frontend_request_duration_seconds",
                   "Duration of LLM requests in seconds.", labels.c_str(), fronts,
                   &FrontMetrics::e2e, kE2eBuckets, std::size(kE2eBuckets));
  append_lag(out, labels, fronts);
  return out;
}

std::string exposition_text(std::string_view served_model_name,
                            const std::vector<const FrontMetrics*>& fronts,
                            const ScheduleStats& engine) {
  std::string labels = "engine=\"0\",model_name=\"";
  core::append_json_escaped(labels, served_model_name);
  labels += '"';
  std::string out;
  auto sum = [&](Counter FrontMetrics::*c) {
    uint64_t t = 0;
    for (const FrontMetrics* m : fronts) t += (m->*c).get();
    return t;
  };
  auto line = [&](const char* name, const char* type, const char* help, const std::string& value,
                  const std::string& sample, const std::string& extra_labels = {}) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    out += sample + "{" + labels + extra_labels + "} " + value + "\n";
  };
  char num[64];
  line("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
       std::to_string(engine.running), "vllm:num_requests_running");
  line("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
       std::to_string(engine.waiting), "vllm:num_requests_waiting");
  std::snprintf(num, sizeof num, "%.6f", engine.kv_cache_usage);
  line("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", num,
       "vllm:kv_cache_usage_perc");
  line("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.",
       std::to_string(engine.preemptions), "vllm:num_preemptions_total");
  line("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
       std::to_string(sum(&FrontMetrics::prompt_tokens)), "vllm:prompt_tokens_total");
  line("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
       std::to_string(sum(&FrontMetrics::generation_tokens)), "vllm:generation_tokens_total");
  out +=
      "# HELP vllm:request_success Count of successfully processed requests.\n"
      "# TYPE vllm:request_success counter\n";
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"length\"} " +
         std::to_string(sum(&FrontMetrics::success_length)) + "\n";
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"stop\"} " +
         std::to_string(sum(&FrontMetrics::success_stop)) + "\n";
  append_histogram(out, "vllm:time_to_first_token_seconds",
                   "Histogram of time to first token in seconds.", labels.c_str(), fronts,
                   &FrontMetrics::ttft, kTtftBuckets, std::size(kTtftBuckets));
  append_histogram(out, "vllm:inter_token_latency_seconds",
                   "Histogram of inter-token latency in seconds.", labels.c_str(), fronts,
                   &FrontMetrics::itl, kItlBuckets, std::size(kItlBuckets));
  append_histogram(out, "vllm:e2e_request_latency_seconds",
                   "Histogram of e2e request latency in seconds.", labels.c_str(), fronts,
                   &FrontMetrics::e2e, kE2eBuckets, std::size(kE2eBuckets));
  append_lag(out, labels, fronts);
  line("servebench_sim:requests_cancelled", "counter",
       "Generations ended because the client went away (or the server stopped).",
       std::to_string(sum(&FrontMetrics::cancelled)), "servebench_sim:requests_cancelled_total");
  line("servebench_sim:requests_rejected", "counter",
       "Generation requests answered with an error status before streaming.",
       std::to_string(sum(&FrontMetrics::rejected)), "servebench_sim:requests_rejected_total");
  out +=
      "# HELP servebench_sim:faults_injected Faults applied, by kind.\n"
      "# TYPE servebench_sim:faults_injected counter\n";
  for (int k = 0; k < kFaultKinds; ++k) {
    uint64_t t = 0;
    for (const FrontMetrics* m : fronts) t += m->faults[k].get();
    out += "servebench_sim:faults_injected_total{" + labels + ",kind=\"" +
           fault_kind_name(static_cast<FaultRule::Kind>(k)) + "\"} " + std::to_string(t) + "\n";
  }
  return out;
}

}  // namespace servebench::sim::detail

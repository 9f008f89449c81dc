// Console blocks. The vLLM block reproduces the print statements of `benchmark()` in
// vllm/benchmarks/serve.py byte for byte: Python's "{:<40} {:<10}" / "{:<40} {:<10.2f}" rows
// (trailing spaces included) and "{s:{c}^{n}}" headers 50 wide. fmt uses the same format
// grammar and the same correctly rounded fixed-point output as Python here.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/report.h"
#include "server_metrics/server_metrics.h"

namespace servebench::report {
namespace {

bool selected(const RunInfo& info, const std::string& metric) {
  for (const std::string& m : info.percentile_metrics) {
    if (m == metric) return true;
  }
  return false;
}

void row(std::string& out, const std::string& label, double value) {
  out += fmt::format("{:<40} {:<10.2f}\n", label, value);
}
template <typename Int>
void row_int(std::string& out, const std::string& label, Int value) {
  out += fmt::format("{:<40} {:<10}\n", label, value);
}
void row_text(std::string& out, const std::string& label, const std::string& value) {
  out += fmt::format("{:<40} {}\n", label, value);
}
void section(std::string& out, const std::string& title) {
  out += fmt::format("{:-^50}\n", title);
}

// vLLM's process_one_metric: header, Mean, Median, then one line per percentile.
void metric_section(std::string& out, const metrics::Distribution& d, const std::string& name,
                    const std::string& header) {
  section(out, header);
  row(out, fmt::format("Mean {} (ms):", name), d.mean);
  row(out, fmt::format("Median {} (ms):", name), d.median);
  for (const auto& [p, value] : d.percentiles) {
    row(out, fmt::format("P{} {} (ms):", metrics::percentile_word(p), name), value);
  }
}

// The same layout for servebench's distributions, with the maximum added.
void extras_section(std::string& out, const metrics::Distribution& d, const std::string& name,
                    const std::string& header) {
  metric_section(out, d, name, header);
  row(out, fmt::format("Max {} (ms):", name), d.max);
}

// Where the health block says chunk times came from.
std::string arrival_clock_text(const ClientHealth& h) {
  if (h.arrival_clock == "kernel") return "kernel receive stamps";
  if (h.arrival_clock == "read") return "client reads";
  return fmt::format("{} ({} of {} reads kernel-stamped)", h.arrival_clock, h.kernel_stamped_reads,
                     h.kernel_stamped_reads + h.reads_stamped_at_read);
}

}  // namespace

std::string vllm_console_block(const metrics::Summary& summary, const RunInfo& info) {
  const metrics::VllmMetrics& m = summary.vllm;
  const bool tok = info.has_tokenizer;
  const bool goodput = !info.goodput_slo_ms.empty();
  std::string out;
  out += fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  row_int(out, "Successful requests:", m.completed);
  row_int(out, "Failed requests:", m.failed);
  if (info.max_concurrency > 0) row_int(out, "Maximum request concurrency:", info.max_concurrency);
  if (!std::isinf(info.request_rate)) row(out, "Request rate configured (RPS):", info.request_rate);
  row(out, "Benchmark duration (s):", m.duration_s);
  row_int(out, "Total input tokens:", m.total_input);
  if (tok) row_int(out, "Total generated tokens:", m.total_output);
  row(out, "Request throughput (req/s):", m.request_throughput);
  if (goodput) row(out, "Request goodput (req/s):", m.request_goodput);
  if (tok) {
    row(out, "Output token throughput (tok/s):", m.output_throughput);
    row(out, "Peak output token throughput (tok/s):", m.max_output_tokens_per_s);
  }
  row(out, "Peak concurrent requests:", m.max_concurrent_requests);
  if (tok) row(out, "Total token throughput (tok/s):", m.total_token_throughput);
  if (info.probes) {
    section(out, "Probe Requests");
    row_int(out, "Probe requests completed:", info.probes->completed);
    row_int(out, "Probe requests failed:", info.probes->failed);
    row(out, "Median probe E2EL (ms):", info.probes->median_e2el_ms);
    row(out, "P99 probe E2EL (ms):", info.probes->p99_e2el_ms);
    row(out, "Max probe E2EL (ms):", info.probes->max_e2el_ms);
  }

  if (tok && selected(info, "ttft")) {
    metric_section(out, m.ttft_ms, "TTFT", "Time to First Token");
  }
  if (tok && selected(info, "tpot")) {
    metric_section(out, m.tpot_ms, "TPOT", "Time per Output Token (excl. 1st token)");
  }
  if (tok && selected(info, "itl")) metric_section(out, m.itl_ms, "ITL", "Inter-token Latency");
  if (selected(info, "e2el")) metric_section(out, m.e2el_ms, "E2EL", "End-to-end Latency");
  // vLLM collects queue times only under --max-concurrency, queue-inclusive E2EL only with a
  // finite rate as well.
  if (info.max_concurrency > 0 && selected(info, "client_queue_time")) {
    metric_section(out, m.client_queue_time_ms, "Client Queue Time", "Client-side Queueing");
  }
  if (info.max_concurrency > 0 && !std::isinf(info.request_rate) &&
      selected(info, "e2el_including_client_queue")) {
    metric_section(out, m.e2el_including_client_queue_ms, "E2EL incl. Client Queue",
                   "Queue-inclusive End-to-end Latency");
  }
  if (info.spec_decode) {
    const server_metrics::SpecDecodeStats& sd = *info.spec_decode;
    section(out, "Speculative Decoding");
    row(out, "Acceptance rate (%):", sd.acceptance_rate);
    row(out, "Acceptance length:", sd.acceptance_length);
    row_int(out, "Drafts:", sd.num_drafts);
    row_int(out, "Draft tokens:", sd.draft_tokens);
    row_int(out, "Accepted tokens:", sd.accepted_tokens);
    if (!sd.per_position_acceptance_rates.empty()) {
      out += "Per-position acceptance (%):\n";
      for (size_t i = 0; i < sd.per_position_acceptance_rates.size(); ++i)
        row(out, fmt::format("  Position {}:", i), sd.per_position_acceptance_rates[i] * 100);
    }
  }
  out += std::string(50, '=') + "\n";
  return out;
}

std::string extras_console_block(const metrics::Summary& summary) {
  return extras_console_block(summary, RunInfo{});
}

std::string extras_console_block(const metrics::Summary& summary, const RunInfo& info) {
  const metrics::Extras& x = summary.extras;
  std::string out;
  out += fmt::format("{:=^50}\n", " servebench extras (not in vLLM) ");
  row_int(out, "Requests sent:", x.requests_sent);
  if (info.not_sent > 0) row_int(out, "Requests not sent (planned):", info.not_sent);
  row_int(out, "Warmup requests (not counted):", x.warmup_ignored);
  row(out, "Request rate requested (RPS):", x.requested_rate);
  row(out, "Request rate scheduled (RPS):", x.scheduled_rate);
  row(out, "Request rate achieved (RPS):", x.achieved_rate);
  extras_section(out, x.schedule_lag_ms, "schedule lag", "Schedule lag (sent - intended)");
  extras_section(out, x.ttft_from_intended_ms, "TTFT from intended",
                 "TTFT from intended send time");
  extras_section(out, x.e2el_from_intended_ms, "E2EL from intended",
                 "E2EL from intended send time");
  if (x.itl_per_token_requests > 0) {
    extras_section(out, x.itl_per_token_ms, "ITL per token", "Per-token ITL (usage per chunk)");
    row_int(out, "Requests with tokens per chunk:", x.itl_per_token_requests);
  } else {
    section(out, "Per-token ITL (usage per chunk)");
    out += "n/a: the server sent no per-chunk usage\n";
  }
  if (!x.failures_by_reason.empty()) {
    section(out, "Failures by reason");
    for (const auto& [reason, count] : x.failures_by_reason) {
      row_int(out, reason + ":", count);
    }
  }
  if (info.client_health) {
    const ClientHealth& h = *info.client_health;
    const double duration_s = summary.vllm.duration_s;
    section(out, "Client health");
    row(out, "Client CPU user (s):", h.cpu_user_s);
    row(out, "Client CPU system (s):", h.cpu_system_s);
    if (duration_s > 0) {
      row(out,
          "Client CPU busy (% of one core):", 100.0 * (h.cpu_user_s + h.cpu_system_s) / duration_s);
    }
    row(out, "Max event-loop lag (ms):", static_cast<double>(h.max_loop_lag_ns) / 1e6);
    if (!h.arrival_clock.empty()) row_text(out, "Chunk times from:", arrival_clock_text(h));
    if (h.kernel_stamped_reads > 0) {
      row(out, "Read delay P50 (ms):", static_cast<double>(h.read_delay_p50_ns) / 1e6);
      row(out, "Read delay P99 (ms):", static_cast<double>(h.read_delay_p99_ns) / 1e6);
      row(out, "Read delay max (ms):", static_cast<double>(h.read_delay_max_ns) / 1e6);
    }
    row_int(out, "Bytes received:", h.bytes_received);
    row_int(out, "SSE events:", h.sse_events);
    row_int(out, "Connections opened:", h.connections_opened);
  }
  out += std::string(50, '=') + "\n";
  return out;
}

namespace {

// Whole numbers (token counts) without decimals, the rest with two.
std::string scaled(const nlohmann::json& value, double scale) {
  if (!value.is_number()) return "n/a";
  const double v = value.get<double>() * scale;
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v)
                                                   : fmt::format("{:.2f}", v);
}

// " [engine=1]" when a metric has several series, so each line says which it is.
std::string series_suffix(const nlohmann::json& series, size_t count) {
  if (count < 2 || !series.contains("labels")) return "";
  std::string out;
  for (const auto& [name, value] : series["labels"].items()) {
    if (name == "model_name") continue;
    out += (out.empty() ? "" : ",") + name + "=" + value.get<std::string>();
  }
  return out.empty() ? "" : " [" + out + "]";
}

}  // namespace

std::string server_metrics_console_block(const nlohmann::json& server_metrics) {
  std::string out;
  out += fmt::format("{:=^50}\n", " Server metrics (scraped) ");
  for (const nlohmann::json& endpoint :
       server_metrics.value("endpoints", nlohmann::json::array())) {
    out += fmt::format("{:<40} {}\n", "Endpoint:", endpoint.value("url", ""));
    out += fmt::format("{:<40} {} / {}\n", "Scrapes / failed:", endpoint.value("scrapes", 0),
                       endpoint.value("failures", 0));
    if (endpoint.contains("first_error") && endpoint["first_error"].is_string())
      out += fmt::format("{:<40} {}\n",
                         "First scrape error:", endpoint["first_error"].get<std::string>());
    const nlohmann::json& metrics = endpoint["metrics"];
    for (const server_metrics::KnownMetric& known : server_metrics::known_metrics()) {
      for (const char* name : known.names) {
        if (!metrics.contains(name)) continue;
        const nlohmann::json& family = metrics[name];
        const std::string type = family.value("type", "");
        const nlohmann::json& all = family["series"];
        for (const nlohmann::json& s : all) {
          const std::string label = known.label + series_suffix(s, all.size());
          if (type == "counter") {
            out += fmt::format("{:<40} {} ({}/s)\n",
                               label + ", increase:", scaled(s["increase"], known.scale),
                               scaled(s["rate_per_s"], known.scale));
          } else if (type == "histogram") {
            out += fmt::format("{:<40} {} / {} / {}\n",
                               label + ", mean/p50/p99:", scaled(s["mean"], known.scale),
                               scaled(s["p50"], known.scale), scaled(s["p99"], known.scale));
          } else {
            out += fmt::format("{:<40} {} / {}\n", label + ", mean/max:",
                               scaled(s.value("mean", nlohmann::json()), known.scale),
                               scaled(s.value("max", nlohmann::json()), known.scale));
          }
        }
        break;
      }
    }
  }
  out += std::string(50, '=') + "\n";
  return out;
}

std::string sim_lag_warning(const nlohmann::json& server_metrics) {
  if (!server_metrics.is_object() || !server_metrics.contains("headline")) return "";
  const nlohmann::json& h = server_metrics["headline"];
  const auto number = [&h](const char* key) {
    return h.is_object() && h.contains(key) && h[key].is_number() ? h[key].get<double>()
                                                                  : std::nan("");
  };
  const double max = number("sim_emission_lag_max_ms_max");
  // The p99 is interpolated inside a histogram bucket, so it can read above the largest lag
  // itself (a gauge since the simulator started, so never below this run's largest).
  const double p99 = std::isnan(max) ? number("sim_emission_lag_ms_p99")
                                     : std::fmin(number("sim_emission_lag_ms_p99"), max);
  if (!(p99 > kSimLagP99WarnMs) && !(max > kSimLagMaxWarnMs)) return "";
  std::string figures;
  if (!std::isnan(p99)) figures += fmt::format("p99 {:.1f} ms", p99);
  if (!std::isnan(max)) figures += fmt::format("{}max {:.1f} ms", figures.empty() ? "" : ", ", max);
  return fmt::format(
      "WARNING: the simulator fell behind its own schedule (emission lag {}; warns above p99 "
      "{:g} ms or max {:g} ms): the machine is too busy for this load, and TTFT/ITL include "
      "that lag.",
      figures, kSimLagP99WarnMs, kSimLagMaxWarnMs);
}

}  // namespace servebench::report

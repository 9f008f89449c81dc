// Timelines: what a run did second by second, from its per-request records (client side) and
// from the server's scraped series (server side), one panel per quantity with every run
// overlaid, as a Grafana dashboard shows a benchmark (seed 003 linked Grafana for this).
// docs/reports.md ("Timelines") lists the panels and where each comes from.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"
#include "metrics/metrics.h"
#include "report/charts.h"
#include "report/guidellm_layout.h"
#include "report/text_tables.h"
#include "report/timeline_requests.h"
#include "server_metrics/server_metrics.h"

namespace servebench::report {
namespace {

using nlohmann::json;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Windows: 1 s, shorter for a run under 20 s (at least 20 windows), longer past 20 minutes (at
// most about 600), so a chart neither starves nor drowns in points.
double window_for(double span_s) {
  if (span_s <= 0) return 1;
  for (double w : {0.5, 0.25, 0.2, 0.1}) {
    if (span_s / w >= 20 || w == 0.1) {
      if (span_s < 20) return w;
      break;
    }
  }
  for (double w : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0}) {
    if (span_s / w <= 600) return w;
  }
  return 60;
}

double span_of(const std::vector<RequestTimes>& requests) {
  double end = 0;
  for (const RequestTimes& t : requests) {
    for (double v : {t.sent_s, t.end_s, t.first_token_s}) {
      if (std::isfinite(v)) end = std::max(end, v);
    }
    if (!t.chunk_s.empty() && std::isfinite(t.chunk_s.back()))
      end = std::max(end, t.chunk_s.back());
  }
  return end;
}

// Per-window series of one run's requests; x = the window's middle.
struct ClientSeries {
  std::vector<double> sent, completed, failed, tokens, in_flight;
  std::vector<std::vector<double>> ttft_ms, itl_ms;  // samples per window
};

ClientSeries client_series(const std::vector<RequestTimes>& requests, double window_s,
                           size_t windows) {
  ClientSeries c;
  for (auto* v : {&c.sent, &c.completed, &c.failed, &c.tokens, &c.in_flight}) v->assign(windows, 0);
  c.ttft_ms.assign(windows, {});
  c.itl_ms.assign(windows, {});
  auto slot = [&](double t) -> std::optional<size_t> {
    if (!std::isfinite(t) || t < 0) return std::nullopt;
    return std::min(windows - 1, static_cast<size_t>(t / window_s));
  };
  for (const RequestTimes& r : requests) {
    if (auto w = slot(r.sent_s)) c.sent[*w] += 1;
    if (auto w = slot(r.end_s)) (r.success ? c.completed : c.failed)[*w] += 1;
    if (auto w = slot(r.first_token_s)) c.ttft_ms[*w].push_back((r.first_token_s - r.sent_s) * 1e3);
    for (size_t k = 0; k < r.chunk_s.size(); ++k) {
      const auto w = slot(r.chunk_s[k]);
      if (!w) continue;
      c.tokens[*w] += k < r.chunk_tokens.size() ? r.chunk_tokens[k] : 0;
      if (k > 0) c.itl_ms[*w].push_back((r.chunk_s[k] - r.chunk_s[k - 1]) * 1e3);
    }
    // In flight over [sent, end): its share of each window it overlaps.
    const double from = std::max(0.0, r.sent_s), to = r.end_s;
    if (!std::isfinite(from) || !std::isfinite(to) || to <= from) continue;
    for (size_t w = *slot(from); w < windows && static_cast<double>(w) * window_s < to; ++w) {
      const double lo = std::max(from, static_cast<double>(w) * window_s);
      const double hi = std::min(to, static_cast<double>(w + 1) * window_s);
      if (hi > lo) c.in_flight[w] += hi - lo;
    }
  }
  for (auto* v : {&c.sent, &c.completed, &c.failed, &c.tokens, &c.in_flight}) {
    for (double& x : *v) x /= window_s;  // per second; in flight: the time-average
  }
  return c;
}

// ---- server series ----

using Points = std::vector<std::pair<double, double>>;  // (t s, value), t ascending

Points timeseries_of(const json& series, const std::string& where, const std::string& source) {
  Points out;
  const auto it = series.find("timeseries");
  if (it == series.end()) return out;
  if (!it->is_array()) {
    throw core::Error(core::ErrorKind::kInput, source, where + ".timeseries: not an array");
  }
  for (const json& p : *it) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number()) {
      throw core::Error(core::ErrorKind::kInput, source,
                        where + ".timeseries: not [t, value] pairs");
    }
    out.emplace_back(p[0].get<double>(), p[1].is_number() ? p[1].get<double>() : kNan);
  }
  return out;
}

// A counter's rate at each scrape over about one window back (resets count from 0, as
// Prometheus' rate() does), so that server rates are as smooth as the client's.
Points rate_of(const Points& counter, double window_s) {
  Points out;
  std::vector<double> increase(counter.size(), 0);
  for (size_t i = 1; i < counter.size(); ++i) {
    const double dv = counter[i].second - counter[i - 1].second;
    increase[i] = increase[i - 1] + (std::isfinite(dv) ? (dv >= 0 ? dv : counter[i].second) : 0);
  }
  size_t from = 0;
  for (size_t i = 1; i < counter.size(); ++i) {
    while (from + 1 < i && counter[i].first - counter[from + 1].first >= window_s) ++from;
    const double dt = counter[i].first - counter[from].first;
    if (dt > 0) out.emplace_back(counter[i].first, (increase[i] - increase[from]) / dt);
  }
  return out;
}

enum class Combine { kSum, kMax, kMean };

// Several series as one: at every time any of them has, the latest value of each so far.
Points combine(const std::vector<Points>& parts, Combine how) {
  std::map<double, int> times;
  for (const Points& p : parts) {
    for (const auto& [t, v] : p) times[t] = 0;
  }
  Points out;
  std::vector<size_t> next(parts.size(), 0);
  for (const auto& [t, unused] : times) {
    double sum = 0, max = -std::numeric_limits<double>::infinity();
    size_t count = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      while (next[k] < parts[k].size() && parts[k][next[k]].first <= t) ++next[k];
      if (next[k] == 0) continue;
      const double v = parts[k][next[k] - 1].second;
      if (!std::isfinite(v)) continue;
      sum += v;
      max = std::max(max, v);
      ++count;
    }
    if (count == 0) continue;
    out.emplace_back(t, how == Combine::kSum   ? sum
                        : how == Combine::kMax ? max
                                               : sum / static_cast<double>(count));
  }
  return out;
}

struct ServerPanel {
  const char* slug;
  const char* title;
  const char* y_label;
  std::vector<std::string> names;  // the family under any of its names, first found per endpoint
  bool counter;                    // drawn as a rate
  Combine combine;
  double scale;
  const char* skip_label = "";  // a series whose `device` label is this is left out ("lo")
};

std::vector<ServerPanel> server_panels() {
  auto known = [](const char* key) {
    for (const server_metrics::KnownMetric& m : server_metrics::known_metrics()) {
      if (std::string(m.key) == key)
        return std::vector<std::string>(m.names.begin(), m.names.end());
    }
    return std::vector<std::string>{};
  };
  return {
      {"server-running", "Running requests (server)", "requests", known("running_requests"), false,
       Combine::kSum, 1},
      {"server-waiting", "Waiting requests (server)", "requests", known("waiting_requests"), false,
       Combine::kSum, 1},
      {"server-kv-cache", "KV cache usage (server)", "%", known("kv_cache_usage_pct"), false,
       Combine::kMax, 100},
      {"server-prompt-tokens", "Prompt tokens per second (server)", "tok/s", known("prompt_tokens"),
       true, Combine::kSum, 1},
      {"server-generation-tokens", "Generation tokens per second (server)", "tok/s",
       known("generation_tokens"), true, Combine::kSum, 1},
      {"server-preemptions", "Preemptions per second (server)", "1/s", known("preemptions"), true,
       Combine::kSum, 1},
      // NVIDIA's DCGM exporter (dcgm-exporter's default counters), when scraped.
      {"gpu-utilization",
       "GPU utilization (DCGM, mean over GPUs)",
       "%",
       {"DCGM_FI_DEV_GPU_UTIL"},
       false,
       Combine::kMean,
       1},
      {"gpu-power",
       "GPU power (DCGM, all GPUs)",
       "W",
       {"DCGM_FI_DEV_POWER_USAGE"},
       false,
       Combine::kSum,
       1},
      {"gpu-memory",
       "GPU memory used (DCGM, all GPUs)",
       "GiB",
       {"DCGM_FI_DEV_FB_USED"},
       false,
       Combine::kSum,
       1.0 / 1024},
      // NVLink traffic inside a node (dcgm-exporter's profiling fields, bytes/s per GPU).
      {"nvlink-transmit",
       "NVLink sent (DCGM, all GPUs)",
       "MB/s",
       {"DCGM_FI_PROF_NVLINK_TX_BYTES"},
       false,
       Combine::kSum,
       1e-6},
      {"nvlink-receive",
       "NVLink received (DCGM, all GPUs)",
       "MB/s",
       {"DCGM_FI_PROF_NVLINK_RX_BYTES"},
       false,
       Combine::kSum,
       1e-6},
      // node_exporter's network and InfiniBand byte counters, when scraped.
      {"network-receive",
       "Network received (node_exporter)",
       "MB/s",
       {"node_network_receive_bytes_total", "node_network_receive_bytes"},
       true,
       Combine::kSum,
       1e-6,
       "lo"},
      {"network-transmit",
       "Network sent (node_exporter)",
       "MB/s",
       {"node_network_transmit_bytes_total", "node_network_transmit_bytes"},
       true,
       Combine::kSum,
       1e-6,
       "lo"},
      {"infiniband-receive",
       "InfiniBand received (node_exporter)",
       "MB/s",
       {"node_infiniband_port_data_received_bytes_total"},
       true,
       Combine::kSum,
       1e-6},
      {"infiniband-transmit",
       "InfiniBand sent (node_exporter)",
       "MB/s",
       {"node_infiniband_port_data_transmitted_bytes_total"},
       true,
       Combine::kSum,
       1e-6},
  };
}

// The series of the panel's family in an endpoint's compact `timeline` (every result has it):
// {"t_s": [...], "<family>": {"<canonical labels>": [value per scrape or null]}}, the first of
// the panel's names found.
std::vector<Points> timeline_series(const json& timeline, const ServerPanel& panel,
                                    const std::string& where, const std::string& source) {
  std::vector<Points> out;
  const auto t_s = timeline.find("t_s");
  if (t_s == timeline.end() || !t_s->is_array())
    throw core::Error(core::ErrorKind::kInput, source, where + ".t_s: not an array");
  for (const std::string& name : panel.names) {
    const auto family = timeline.find(name);
    if (family == timeline.end() || !family->is_object()) continue;
    for (const auto& [labels, values] : family->items()) {
      if (!values.is_array() || values.size() != t_s->size()) {
        throw core::Error(core::ErrorKind::kInput, source,
                          where + "." + name + ": not one value per scrape");
      }
      if (*panel.skip_label) {
        bool skip = false;
        for (const auto& [label, value] : server_metrics::split_labels(labels))
          skip = skip || (label == "device" && value == panel.skip_label);
        if (skip) continue;
      }
      Points p;
      for (size_t k = 0; k < values.size(); ++k) {
        if (!(*t_s)[k].is_number() || !values[k].is_number()) continue;  // a failed scrape
        p.emplace_back((*t_s)[k].get<double>(), values[k].get<double>());
      }
      if (!p.empty()) out.push_back(std::move(p));
    }
    break;  // the first name this endpoint exposes
  }
  return out;
}

// One panel's line for one run, from the result's scraped series: the compact `timeline`, else
// the --save-detailed series' `timeseries` (empty without either).
Points server_line(const RunResult& run, const ServerPanel& panel, double window_s) {
  const json* endpoints = nullptr;
  if (run.result.contains("servebench") && run.result["servebench"].is_object()) {
    const json& sb = run.result["servebench"];
    if (sb.contains("server_metrics") && sb["server_metrics"].is_object() &&
        sb["server_metrics"].contains("endpoints") && sb["server_metrics"]["endpoints"].is_array())
      endpoints = &sb["server_metrics"]["endpoints"];
  }
  if (!endpoints) return {};
  std::vector<Points> parts;
  for (size_t e = 0; e < endpoints->size(); ++e) {
    const json& endpoint = (*endpoints)[e];
    if (!endpoint.is_object()) continue;
    if (endpoint.contains("timeline") && endpoint["timeline"].is_object()) {
      const std::string where =
          "servebench.server_metrics.endpoints[" + std::to_string(e) + "].timeline";
      std::vector<Points> series = timeline_series(endpoint["timeline"], panel, where, run.source);
      if (panel.counter)
        for (Points& p : series) p = rate_of(p, window_s);
      if (!series.empty()) parts.push_back(combine(series, panel.combine));
      continue;
    }
    if (!endpoint.contains("metrics") || !endpoint["metrics"].is_object()) continue;
    for (const std::string& name : panel.names) {
      const auto family = endpoint["metrics"].find(name);
      if (family == endpoint["metrics"].end() || !family->is_object() ||
          !family->contains("series") || !(*family)["series"].is_array())
        continue;
      const std::string where = "servebench.server_metrics.endpoints[" + std::to_string(e) +
                                "].metrics." + name + ".series";
      std::vector<Points> series;
      for (const json& s : (*family)["series"]) {
        if (!s.is_object()) continue;
        const json labels = s.value("labels", json::object());
        if (*panel.skip_label && labels.is_object() &&
            labels.value("device", std::string()) == panel.skip_label)
          continue;
        Points p = timeseries_of(s, where, run.source);
        if (p.empty()) continue;
        series.push_back(panel.counter ? rate_of(p, window_s) : std::move(p));
      }
      if (!series.empty()) parts.push_back(combine(series, panel.combine));
      break;  // the first name this endpoint exposes
    }
  }
  // The mean of the values in each window, at the window's middle, as the client's panels.
  std::map<int64_t, std::pair<double, int>> windows;
  for (const auto& [t, v] : combine(parts, panel.combine)) {
    if (t < 0) continue;  // the baseline scrape just before the start
    auto& [sum, count] = windows[static_cast<int64_t>(std::floor(t / window_s))];
    sum += v;
    ++count;
  }
  Points out;
  for (const auto& [w, sum_count] : windows) {
    out.emplace_back((static_cast<double>(w) + 0.5) * window_s,
                     sum_count.first / sum_count.second * panel.scale);
  }
  return out;
}

// A run's line: its test name, and for the benchmarks of a GuideLLM profile or inference-perf's
// stages (which share one test name) the benchmark: "guidellm-ib constant@0.93",
// "inference-perf-ib stage_3 (8 qps)".
std::string line_name(const RunResult& r) {
  if (std::string benchmark = benchmark_name(r); !benchmark.empty())
    return r.test_name + " " + benchmark;
  const auto sb = r.result.find("servebench");
  if (sb != r.result.end() && sb->is_object() && sb->contains("stage") &&
      (*sb)["stage"].is_object()) {
    const json& stage = (*sb)["stage"];
    if (const auto name = string_at(stage, "name")) {
      const auto rate = stage.find("rate");
      return r.test_name + " " + *name +
             (rate != stage.end() && rate->is_number()
                  ? " (" + text::python_g(rate->get<double>()) + " qps)"
                  : std::string());
    }
  }
  return r.test_name;
}

struct PanelLines {
  ChartData chart;
  bool any_nonzero = false;
};

}  // namespace

std::vector<ChartData> timeline_panels(std::span<const CompareInput> inputs, double window_s) {
  struct Run {
    std::string name;
    const RunResult* result;
    std::optional<std::vector<RequestTimes>> requests;
  };
  std::vector<Run> runs;
  std::map<std::string, int> name_count;
  for (const CompareInput& input : inputs) {
    for (const RunResult& r : input.runs) ++name_count[line_name(r)];
  }
  double span = 0;
  for (const CompareInput& input : inputs) {
    for (const RunResult& r : input.runs) {
      const std::string name = line_name(r);
      Run run{name_count[name] > 1 ? input.name + "/" + name : name, &r, requests_from_records(r)};
      if (!run.requests) run.requests = requests_from_detailed_arrays(r);
      if (run.requests) span = std::max(span, span_of(*run.requests));
      runs.push_back(std::move(run));
    }
  }
  const double w = window_s > 0 ? window_s : window_for(span);
  const size_t windows = std::max<size_t>(1, static_cast<size_t>(std::ceil(span / w)));

  // The client's panels, in the order of ClientSeries' rates, then TTFT and ITL.
  const char* const kClient[][3] = {
      {"sent", "Requests sent per second", "req/s"},
      {"completed", "Requests completed per second", "req/s"},
      {"failed", "Requests failed per second", "req/s"},
      {"output-tokens", "Output tokens per second (client)", "tok/s"},
      {"in-flight", "Requests in flight (client, time-averaged)", "requests"},
      {"ttft", "TTFT (by first token): p50 solid, p99 dashed", "ms"},
      {"itl", "ITL (per chunk, by arrival): p50 solid, p99 dashed", "ms"}};
  std::vector<PanelLines> client(std::size(kClient)), server;
  for (size_t k = 0; k < client.size(); ++k) {
    client[k].chart.slug = std::string("timeline-") + kClient[k][0];
    client[k].chart.title = kClient[k][1];
    client[k].chart.y_label = kClient[k][2];
    client[k].chart.y_key = client[k].chart.slug;
  }
  const std::vector<ServerPanel> panels = server_panels();
  server.resize(panels.size());
  for (size_t k = 0; k < panels.size(); ++k) {
    server[k].chart.slug = std::string("timeline-") + panels[k].slug;
    server[k].chart.title = panels[k].title;
    server[k].chart.y_label = panels[k].y_label;
    server[k].chart.y_key = server[k].chart.slug;
  }

  double x_max = span;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& run = runs[i];
    const int color = static_cast<int>(i);
    auto line = [&](const std::string& name, bool dashed) {
      ChartLine l;
      l.name = name;
      l.markers = false;
      l.dashed = dashed;
      l.color = color;
      return l;
    };
    if (run.requests) {
      // Each run's lines end with its own last window.
      const size_t run_windows = std::clamp<size_t>(
          static_cast<size_t>(std::ceil(span_of(*run.requests) / w)), 1, windows);
      const ClientSeries c = client_series(*run.requests, w, run_windows);
      const std::vector<double>* rates[] = {&c.sent, &c.completed, &c.failed, &c.tokens,
                                            &c.in_flight};
      for (size_t k = 0; k < 5; ++k) {
        ChartLine l = line(run.name, false);
        for (size_t x = 0; x < run_windows; ++x) {
          l.points.push_back({(static_cast<double>(x) + 0.5) * w, (*rates[k])[x], false});
          client[k].any_nonzero = client[k].any_nonzero || (*rates[k])[x] > 0;
        }
        client[k].chart.lines.push_back(std::move(l));
      }
      const std::vector<std::vector<double>>* samples[] = {&c.ttft_ms, &c.itl_ms};
      for (size_t k = 0; k < 2; ++k) {
        ChartLine p50 = line(run.name + " p50", false), p99 = line(run.name + " p99", true);
        for (size_t x = 0; x < run_windows; ++x) {
          const double mid = (static_cast<double>(x) + 0.5) * w;
          const std::vector<double>& s = (*samples[k])[x];
          if (s.empty()) {
            p50.points.push_back({mid, kNan, false});
            p99.points.push_back({mid, kNan, false});
            continue;
          }
          const metrics::Distribution d = metrics::summarize(s, {50, 99});
          p50.points.push_back({mid, d.percentiles[0].second, false});
          p99.points.push_back({mid, d.percentiles[1].second, false});
          client[5 + k].any_nonzero = true;
        }
        client[5 + k].chart.lines.push_back(std::move(p50));
        client[5 + k].chart.lines.push_back(std::move(p99));
      }
    }
    for (size_t k = 0; k < panels.size(); ++k) {
      const Points points = server_line(*run.result, panels[k], w);
      if (points.empty()) continue;
      ChartLine l = line(run.name, false);
      for (const auto& [t, v] : points) {
        l.points.push_back({t, v, false});
        server[k].any_nonzero = server[k].any_nonzero || v > 0;
        x_max = std::max(x_max, t);
      }
      server[k].chart.lines.push_back(std::move(l));
    }
  }

  std::vector<ChartData> out;
  for (std::vector<PanelLines>* group : {&client, &server}) {
    for (PanelLines& p : *group) {
      // A panel of zeros says nothing (no failures, no preemptions): left out.
      if (p.chart.lines.empty() || !p.any_nonzero) continue;
      p.chart.x_label = "Seconds since the run's start (windows of " + text::python_g(w) + " s)";
      p.chart.x_min = 0;
      p.chart.x_max = x_max > 0 ? x_max * 1.02 : 1;
      out.push_back(std::move(p.chart));
    }
  }
  return out;
}

}  // namespace servebench::report

// The SLO search of `--search-slo` (search.h). Each probe is one point (run_sweep: the same
// prompts, client and result file as any run) at one request rate (or max concurrency) with the
// SLOs as vLLM's --goodput; a probe meets the SLOs when at least --search-attainment % of the
// requests sent were successful and within every SLO (vLLM's goodput condition,
// calculate_metrics in vllm/benchmarks/serve.py: ttft, tpot, e2el each ≤ its SLO). The search
// doubles (or halves) the load from the start until one probe meets and one fails, then bisects
// between them, within --search-max-runs runs.
#include "run/search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/interrupt.h"
#include "report/report.h"
#include "run/names.h"
#include "run/sweep.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

std::string load_text(double load, bool concurrency) {
  return concurrency ? fmt::format("{}", static_cast<int64_t>(load)) : python_float(load);
}

// What one probe measured, read back from its saved result.
struct Measured {
  double attainment = 0;  // good / sent
  int64_t good = 0, sent = 0;
};

Measured measure(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
  if (!r.is_object() || !r.contains("duration") || !r["request_goodput"].is_number()) {
    throw core::Error(core::ErrorKind::kInput, path, "the probe saved no complete result");
  }
  Measured m;
  m.sent = r.value("completed", int64_t{0}) + r.value("failed", int64_t{0});
  // request_goodput = good requests / duration (vLLM), so good = goodput × duration.
  m.good = std::llround(r["request_goodput"].get<double>() * r["duration"].get<double>());
  m.attainment = m.sent > 0 ? static_cast<double>(m.good) / static_cast<double>(m.sent) : 0.0;
  return m;
}

}  // namespace

std::optional<double> next_load(const std::vector<Probe>& probes, double start, bool whole) {
  if (probes.empty()) return start;
  std::optional<double> lo, hi;  // highest met, lowest failed
  for (const Probe& p : probes) {
    if (p.met && (!lo || p.load > *lo)) lo = p.load;
    if (!p.met && (!hi || p.load < *hi)) hi = p.load;
  }
  if (!hi) return *lo * 2;  // every probe met: go up
  if (!lo) {
    // Every probe failed: go down (a concurrency below 1, or a rate that small, is the end).
    const double down = whole ? std::floor(*hi / 2) : *hi / 2;
    if (whole ? down < 1 : down < 1e-3) return std::nullopt;
    return down;
  }
  if (*lo >= *hi) return std::nullopt;  // noise: a lower load failed; the answer stands
  if (whole) {
    if (*hi - *lo <= 1) return std::nullopt;
    return std::floor((*lo + *hi) / 2);
  }
  if ((*hi - *lo) / *lo <= 0.05) return std::nullopt;
  return (*lo + *hi) / 2;
}

std::optional<double> best_load(const std::vector<Probe>& probes) {
  std::optional<double> best;
  for (const Probe& p : probes) {
    if (p.met && (!best || p.load > *best)) best = p.load;
  }
  return best;
}

int execute_search(Spec c) {
  const SearchPlan plan = *c.search;
  c.search.reset();
  const bool whole = plan.concurrency;
  const char* what = whole ? "max concurrency" : "request rate";
  double start = whole ? std::max(1, c.max_concurrency) : c.request_rate;
  if (!whole && (std::isinf(start) || start <= 0)) start = 1.0;
  const std::string dir = c.result_dir.empty() ? "." : c.result_dir;
  std::string slo_text;
  for (const auto& [k, v] : plan.slo_ms) {
    slo_text += (slo_text.empty() ? "" : ", ") + k + " <= " + python_float(v) + " ms";
  }
  std::printf(
      "SLO search over the %s from %s: %s for at least %s%% of requests, at most %d "
      "runs\n",
      what, load_text(start, whole).c_str(), slo_text.c_str(),
      python_float(plan.attainment * 100).c_str(), plan.max_runs);
  std::fflush(stdout);
  std::vector<Probe> probes;
  nlohmann::json probe_log = nlohmann::json::array();
  for (int run = 1; run <= plan.max_runs; ++run) {
    const std::optional<double> load = next_load(probes, start, whole);
    if (!load) break;
    if (core::interrupted()) {  // between probes: those done are saved
      std::fprintf(stderr, "servebench: stopped by %s between the search's probes: %zu done\n",
                   core::interrupt_name(), probes.size());
      return core::interrupt_exit_code();
    }
    Spec point = c;
    point.goodput_slo_ms = plan.slo_ms;
    point.save_result = true;
    point.result_dir = dir;
    const std::string file =
        fmt::format("search-{}-{}.json", whole ? "concurrency" : "rate", load_text(*load, whole));
    point.result_filename = file;
    if (whole) {
      point.max_concurrency = static_cast<int>(*load);
      point.max_concurrencies = {point.max_concurrency};
    } else {
      point.request_rate = *load;
      point.request_rates = {*load};
    }
    point.records_path.clear();
    std::printf("\nSLO search probe %d/%d: %s %s\n", run, plan.max_runs, what,
                load_text(*load, whole).c_str());
    std::fflush(stdout);
    const int code = run_sweep(std::move(point));
    if (code != 0) return code;  // SIGINT/SIGTERM: the probes so far are saved
    const std::string path = (fs::path(dir) / file).string();
    const Measured m = measure(path);
    const bool met = m.attainment >= plan.attainment;
    probes.push_back({*load, met});
    std::printf(
        "SLO search probe %d/%d: %s %s: %lld of %lld requests within the SLOs (%s%%): "
        "%s\n",
        run, plan.max_runs, what, load_text(*load, whole).c_str(), static_cast<long long>(m.good),
        static_cast<long long>(m.sent), fmt::format("{:.1f}", m.attainment * 100).c_str(),
        met ? "meets" : "misses");
    std::fflush(stdout);
    probe_log.push_back({{"load", *load},
                         {"good", m.good},
                         {"sent", m.sent},
                         {"attainment", m.attainment},
                         {"met", met},
                         {"result", path}});
  }
  const std::optional<double> best = best_load(probes);
  std::optional<double> lowest_miss;
  for (const Probe& p : probes) {
    if (!p.met && (!lowest_miss || p.load < *lowest_miss)) lowest_miss = p.load;
  }
  std::printf("\n");
  if (!best) {
    std::printf("SLO search: no probed %s meets the SLOs (lowest probed: %s)\n", what,
                load_text(*lowest_miss, whole).c_str());
  } else if (!lowest_miss) {
    std::printf(
        "SLO search: every probed %s met the SLOs; the highest, %s, is a lower bound "
        "(raise --search-max-runs)\n",
        what, load_text(*best, whole).c_str());
  } else {
    std::printf("SLO search: highest %s meeting the SLOs: %s (%s misses)\n", what,
                load_text(*best, whole).c_str(), load_text(*lowest_miss, whole).c_str());
  }
  std::fflush(stdout);
  nlohmann::json summary = {
      {"searched", whole ? "max_concurrency" : "request_rate"},
      {"slo_ms", plan.slo_ms},
      {"attainment_required", plan.attainment},
      {"probes", probe_log},
      {"best", best ? nlohmann::json(*best) : nlohmann::json(nullptr)},
      {"lowest_miss", lowest_miss ? nlohmann::json(*lowest_miss) : nlohmann::json(nullptr)}};
  const std::string summary_path = (fs::path(dir) / "search.json").string();
  report::make_valid_utf8(summary);
  core::write_file_atomic(summary_path, summary.dump(2) + "\n", "--result-dir");
  return 0;
}

}  // namespace servebench::run

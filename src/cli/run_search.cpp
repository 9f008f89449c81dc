// The SLO search of `servebench run --search-slo` (run_search.h). Each probe is one full run
// (execute_run: the same prompts, client and result file as any run) at one request rate (or max
// concurrency) with the SLOs as vLLM's --goodput; a probe meets the SLOs when at least
// --search-attainment % of the requests sent were successful and within every SLO (vLLM's
// goodput condition, calculate_metrics in vllm/benchmarks/serve.py: ttft, tpot, e2el each
// ≤ its SLO). The search doubles (or halves) the load from the start until one probe meets
// and one fails, then bisects between them, within --search-max-runs runs.
#include "cli/run_search.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_support.h"
#include "core/error.h"
#include "metrics/metrics.h"

namespace servebench::cli::run {
namespace {

namespace fs = std::filesystem;

// "ttft:500,tpot:50" and "ttft:500 tpot:50" (vLLM's --goodput) alike.
std::vector<std::string> slo_items(const std::vector<std::string>& given) {
  std::vector<std::string> items;
  for (const std::string& g : given) {
    std::string item;
    for (char c : g + ",") {
      if (c == ',' || c == ' ' || c == '\t') {
        if (!item.empty()) items.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
  }
  return items;
}

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

void add_search_flags(CLI::App& run, const std::shared_ptr<SearchFlags>& flags) {
  const std::string group = "SLO search (servebench)";
  run.add_option("--search-slo,--search_slo", flags->slo,
                 "find the highest request rate meeting these SLOs in ms, e.g. "
                 "\"ttft:500,tpot:50\" (keys as --goodput: ttft, tpot, e2el)")
      ->expected(1, CLI::detail::expected_max_vector_size)
      ->allow_extra_args()
      ->group(group);
  run.add_flag("--search-concurrency,--search_concurrency", flags->concurrency,
               "search the max concurrency instead (request rate as given, default inf)")
      ->group(group);
  run.add_option("--search-attainment,--search_attainment", flags->attainment,
                 "% of requests sent that must be within every SLO [90]")
      ->group(group);
  run.add_option("--search-max-runs,--search_max_runs", flags->max_runs,
                 "most runs the search makes [8]")
      ->group(group);
}

bool search_requested(const CLI::App& run, const SearchFlags& flags) {
  if (!flags.slo.empty()) return true;
  for (const char* flag : {"--search-concurrency", "--search-attainment", "--search-max-runs"}) {
    if (run.get_option(flag)->count() > 0) usage(flag, "needs --search-slo");
  }
  return false;
}

SearchPlan validate_search(const SearchFlags& f, const RunConfig& c) {
  SearchPlan p;
  const std::vector<std::string> items = slo_items(f.slo);
  if (items.empty()) usage("--search-slo", "expected KEY:VALUE SLOs in ms (e.g. ttft:500,tpot:50)");
  try {
    p.slo_ms = metrics::parse_goodput(items);
  } catch (const core::Error& e) {
    std::string message = e.what();
    if (message.rfind(e.where() + ": ", 0) == 0) message.erase(0, e.where().size() + 2);
    usage("--search-slo", message);
  }
  p.concurrency = f.concurrency;
  const double attainment = parse_double("--search-attainment", f.attainment);
  if (!(attainment > 0 && attainment <= 100)) {
    usage("--search-attainment", "a percentage in (0, 100], got '" + f.attainment + "'");
  }
  p.attainment = attainment / 100.0;
  p.max_runs = static_cast<int>(parse_int("--search-max-runs", f.max_runs, 2, 100));
  if (c.request_rates.size() > 1 || c.max_concurrencies.size() > 1) {
    usage("--search-slo",
          "searches one load; give one --request-rate and --max-concurrency (the start), not "
          "lists");
  }
  if (!c.goodput_slo_ms.empty()) usage("--goodput", "set by --search-slo; give one of them");
  // The search sets the load itself, run after run, on one target.
  if (c.limits.profile != LoadProfile::kNone) usage("--profile", "not with --search-slo");
  if (!c.stages.empty()) usage("--stages", "not with --search-slo");
  if (c.ramp_up) usage("--ramp-up-strategy", "not with --search-slo");
  if (c.target_urls.size() > 1 || c.sim_instances > 1) {
    usage("--search-slo", "searches one target; give one --base-url (or one simulator)");
  }
  if (c.append_result) usage("--append-result", "each probe writes its own result file");
  if (!c.result_filename.empty()) {
    usage("--result-filename", "each probe names its own file; use --result-dir");
  }
  return p;
}

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

int execute_search(RunConfig c, const SearchPlan& plan) {
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
    RunConfig point = c;
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
    const int code = execute_run(std::move(point));
    if (code != 0) return code;  // Ctrl-C: the probes so far are saved
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
  std::ofstream out(summary_path, std::ios::binary | std::ios::trunc);
  out << summary.dump(2) << "\n";
  if (!out.flush()) {
    throw core::Error(core::ErrorKind::kInput, "--result-dir",
                      "cannot write '" + summary_path + "'");
  }
  return 0;
}

}  // namespace servebench::cli::run

// The --search-* flags (search_flags.h); the search itself is the run part's (run/search.cpp).
#include "cli/search_flags.h"

#include <CLI/CLI.hpp>

#include "cli/values.h"
#include "core/error.h"
#include "metrics/metrics.h"

namespace servebench::cli {
namespace {

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

run::SearchPlan validate_search(const SearchFlags& f, const run::Spec& c) {
  run::SearchPlan p;
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
  if (c.limits.profile != run::LoadProfile::kNone) usage("--profile", "not with --search-slo");
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

}  // namespace servebench::cli

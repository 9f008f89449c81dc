// `servebench run --search-slo`'s own summary, search.json (docs/run.md, "SLO search"): which
// load was searched, the SLOs, every probe (load, good, sent, attainment, met, result) and the
// answer (best, lowest_miss). Read as the probes' own results, each carrying its probe under
// `servebench.search`, so every layout and chart reads them; `search_markdown` tables them.
#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "report/import_formats.h"
#include "report/tables.h"

namespace servebench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad_search(const std::string& path, const std::string& message) {
  throw core::Error(core::ErrorKind::kInput, path, "SLO search summary: " + message);
}

// A probe's result as search.json names it: beside search.json first (the directory may have
// moved), else the path as written (relative to where the run ran).
std::string probe_path(const std::string& search_path, const std::string& written) {
  const fs::path beside = fs::path(search_path).parent_path() / fs::path(written).filename();
  std::error_code ec;
  if (fs::is_regular_file(beside, ec)) return beside.string();
  return written;
}

std::string load_text(double load, bool concurrency) {
  if (concurrency) return fmt::format("{}", static_cast<int64_t>(load));
  const std::string s = fmt::format("{}", load);
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;  // Python's float repr
}

const char* slo_key_title(const std::string& key) {
  if (key == "ttft") return "TTFT";
  if (key == "tpot") return "TPOT";
  if (key == "e2el") return "E2EL";
  return nullptr;
}

}  // namespace

bool is_search_summary(const json& j) {
  return j.is_object() && j.contains("searched") && j.contains("probes") && j["probes"].is_array();
}

std::vector<std::string> search_probe_paths(const json& summary, const std::string& path) {
  std::vector<std::string> out;
  for (const json& probe : summary["probes"]) {
    if (!probe.is_object() || !probe.contains("result") || !probe["result"].is_string()) {
      bad_search(path, "a probe has no \"result\" path");
    }
    out.push_back(probe_path(path, probe["result"].get<std::string>()));
  }
  return out;
}

namespace importers {

std::vector<RunResult> search_runs(const json& summary, const std::string& path) {
  const std::vector<std::string> paths = search_probe_paths(summary, path);
  if (paths.empty()) bad_search(path, "no probes (the search was stopped before its first)");
  json common = json::object();
  for (const char* key : {"searched", "slo_ms", "attainment_required", "best", "lowest_miss"}) {
    if (summary.contains(key)) common[key] = summary[key];
  }
  common["summary"] = path;
  std::vector<RunResult> runs;
  for (size_t i = 0; i < paths.size(); ++i) {
    const json& probe = summary["probes"][i];
    for (const char* key : {"load", "good", "sent", "attainment"}) {
      if (!probe.contains(key) || !probe[key].is_number()) {
        bad_search(path, "probe " + std::to_string(i + 1) + ": \"" + key + "\" is not a number");
      }
    }
    if (!probe.contains("met") || !probe["met"].is_boolean()) {
      bad_search(path, "probe " + std::to_string(i + 1) + ": \"met\" is not true or false");
    }
    RunResult run = load_run(paths[i]);
    json search = common;
    search["probe"] = i + 1;
    for (const char* key : {"load", "good", "sent", "attainment", "met"}) {
      search[key] = probe[key];
    }
    if (!run.result.contains("servebench") || !run.result["servebench"].is_object()) {
      run.result["servebench"] = json::object();
    }
    run.result["servebench"]["search"] = std::move(search);
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace importers

std::string search_markdown(std::span<const RunResult> runs) {
  std::vector<const RunResult*> probes;
  for (const RunResult& r : runs) {
    const json* s = nullptr;
    if (r.result.contains("servebench") && r.result["servebench"].is_object() &&
        r.result["servebench"].contains("search")) {
      s = &r.result["servebench"]["search"];
    }
    if (s && s->is_object()) probes.push_back(&r);
  }
  if (probes.empty()) return "";
  // One table per search (its summary file), probes by load.
  std::vector<std::string> summaries;
  for (const RunResult* r : probes) {
    const std::string s = r->result["servebench"]["search"].value("summary", "");
    if (std::find(summaries.begin(), summaries.end(), s) == summaries.end()) summaries.push_back(s);
  }
  std::string out;
  for (const std::string& summary : summaries) {
    std::vector<const RunResult*> these;
    for (const RunResult* r : probes) {
      if (r->result["servebench"]["search"].value("summary", "") == summary) these.push_back(r);
    }
    std::stable_sort(these.begin(), these.end(), [](const RunResult* a, const RunResult* b) {
      return a->result["servebench"]["search"]["load"].get<double>() <
             b->result["servebench"]["search"]["load"].get<double>();
    });
    const json& first = these.front()->result["servebench"]["search"];
    const bool concurrency = first.value("searched", "") == "max_concurrency";
    const char* what = concurrency ? "max concurrency" : "request rate";
    std::vector<std::pair<std::string, double>> slos;
    if (first.contains("slo_ms") && first["slo_ms"].is_object()) {
      for (const auto& [key, value] : first["slo_ms"].items()) {
        if (value.is_number() && slo_key_title(key)) slos.emplace_back(key, value.get<double>());
      }
    }
    const double required = first.value("attainment_required", 0.0);
    std::string slo_text;
    for (const auto& [key, ms] : slos) {
      slo_text +=
          (slo_text.empty() ? "" : ", ") + fmt::format("{} <= {} ms", slo_key_title(key), ms);
    }
    if (!out.empty()) out += "\n";
    out += fmt::format("## SLO search ({})\n\n", summary);
    out += fmt::format("SLOs: {} for at least {}% of requests\n\n", slo_text, required * 100);
    out += concurrency ? "| Max concurrency " : "| Request rate (req/s) ";
    out += "| Sent | Within SLOs | Attainment (%) ";
    for (const auto& [key, ms] : slos) {
      out += fmt::format("| P99 {} (ms), SLO {} ", slo_key_title(key), ms);
    }
    out += "| Meets |\n";
    out += "|---|---|---|---|";
    for (size_t i = 0; i < slos.size(); ++i) out += "---|";
    out += "---|\n";
    for (const RunResult* r : these) {
      const json& s = r->result["servebench"]["search"];
      out += fmt::format("| {} | {} | {} | {:.1f} ",
                         load_text(s["load"].get<double>(), concurrency), s["sent"].get<int64_t>(),
                         s["good"].get<int64_t>(), s["attainment"].get<double>() * 100);
      for (const auto& [key, ms] : slos) {
        const std::optional<double> p99 = figure(*r, "p99_" + key + "_ms");
        out += p99 ? fmt::format("| {:.2f} ", *p99) : std::string("| n/a ");
      }
      out += s["met"].get<bool>() ? "| yes |\n" : "| no |\n";
    }
    const json best = first.value("best", json(nullptr));
    const json miss = first.value("lowest_miss", json(nullptr));
    out += "\n";
    if (!best.is_number()) {
      out += fmt::format("Answer: no probed {} meets the SLOs", what);
      if (miss.is_number())
        out += " (lowest probed: " + load_text(miss.get<double>(), concurrency) + ")";
      out += "\n";
    } else if (!miss.is_number()) {
      out +=
          fmt::format("Answer: every probed {} met the SLOs; the highest, {}, is a lower bound\n",
                      what, load_text(best.get<double>(), concurrency));
    } else {
      out += fmt::format("Answer: highest {} meeting the SLOs: {} ({} misses)\n", what,
                         load_text(best.get<double>(), concurrency),
                         load_text(miss.get<double>(), concurrency));
    }
  }
  return out;
}

}  // namespace servebench::report

// GuideLLM's stop rules (guidellm/scheduler/constraints.py) and warmup/cooldown
// (guidellm/benchmark/aggregator.py) for one point.
#include "run/load_rules.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "metrics/metrics.h"
#include "run/names.h"

namespace servebench::run {
namespace {

bool is_error(const record::RequestRecord& r) {
  if (r.success) return false;
  const std::string reason = metrics::classify_failure(r);
  return reason != "cancelled" && reason != "not_sent";
}

std::string window_text(const metrics::TransientWindow& w, bool warmup) {
  std::vector<std::string> parts;
  if (w.number > 0)
    parts.push_back(fmt::format("the {} {} to complete", warmup ? "first" : "last", w.number));
  if (w.seconds > 0)
    parts.push_back(warmup ? fmt::format("due in the first {} s", python_float(w.seconds))
                           : fmt::format("ending in the last {} s", python_float(w.seconds)));
  if (w.fraction > 0)
    parts.push_back(fmt::format("in the {} {}% of the run", warmup ? "first" : "last",
                                python_float(w.fraction * 100)));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " or ") + p;
  return out;
}

}  // namespace

void StopRules::observe(const record::RequestRecord& r) {
  if (r.warmup || r.sent_ns < 0) return;  // never started: not processed (GuideLLM)
  ++outcome_.processed;
  const bool error = is_error(r);
  if (error) ++outcome_.errors;
  // GuideLLM appends completed, errored and cancelled requests to the window.
  const size_t size = std::max<size_t>(1, limits_.error_rate_window);
  if (window_.size() < size) {
    window_.push_back(error);
  } else {
    if (window_[window_next_]) --window_errors_;
    window_[window_next_] = error;
    window_next_ = (window_next_ + 1) % size;
  }
  if (error) ++window_errors_;
  if (tripped()) return;
  if (limits_.max_errors > 0 && static_cast<int64_t>(outcome_.errors) >= limits_.max_errors) {
    outcome_.rule = "max_errors";
    outcome_.message =
        fmt::format("--max-errors {}: {} requests errored", limits_.max_errors, outcome_.errors);
  } else if (limits_.max_error_rate > 0 && outcome_.processed >= size &&
             static_cast<double>(window_errors_) / static_cast<double>(window_.size()) >=
                 limits_.max_error_rate) {
    outcome_.rule = "max_error_rate";
    outcome_.message =
        fmt::format("--max-error-rate {}: {} of the last {} requests errored",
                    python_float(limits_.max_error_rate), window_errors_, window_.size());
  }
  if (tripped() && stop_ != nullptr) stop_->store(true);
}

TrimmedRun trim_transients(const Spec& c, const std::vector<record::RequestRecord>& records) {
  TrimmedRun t;
  metrics::TransientSpec spec = c.limits.transients;
  if (!spec.any()) return t;
  spec.run_duration_s = c.limits.duration_s;
  t.split = metrics::split_transients(records, spec);
  if (t.split.warmup + t.split.cooldown == 0) return t;
  t.trimmed = true;
  int64_t first_sent = -1, last_done = -1;
  for (size_t i = 0; i < records.size(); ++i) {
    if (t.split.phase[i] != metrics::Phase::kMeasured) continue;
    const record::RequestRecord& r = records[i];
    t.measured.push_back(r);
    if (r.sent_ns >= 0 && (first_sent < 0 || r.sent_ns < first_sent)) first_sent = r.sent_ns;
    last_done = std::max(last_done, r.done_ns);
  }
  if (first_sent >= 0 && last_done > first_sent)
    t.duration_s = static_cast<double>(last_done - first_sent) / 1e9;
  return t;
}

void mark_excluded_records(const std::string& path,
                           const std::vector<record::RequestRecord>& records,
                           const metrics::TransientSplit& split) {
  if (path.empty() || split.warmup + split.cooldown == 0) return;
  std::map<uint64_t, const char*> excluded;
  for (size_t i = 0; i < records.size() && i < split.phase.size(); ++i) {
    if (split.phase[i] != metrics::Phase::kMeasured)
      excluded[records[i].index] = metrics::phase_name(split.phase[i]);
  }
  std::ifstream in(path);
  if (!in) throw core::Error(core::ErrorKind::kInput, "--records", "cannot read '" + path + "'");
  const std::string temp = path + ".tmp";
  std::ofstream out(temp, std::ios::trunc);
  if (!out) throw core::Error(core::ErrorKind::kInput, "--records", "cannot write '" + temp + "'");
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && !j.value("warmup", false) && j.contains("index")) {
      auto it = excluded.find(j["index"].get<uint64_t>());
      if (it != excluded.end()) {
        j["excluded"] = it->second;
        line = j.dump();
      }
    }
    out << line << '\n';
  }
  out.close();
  if (!out) throw core::Error(core::ErrorKind::kInput, "--records", "cannot write '" + temp + "'");
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec)
    throw core::Error(core::ErrorKind::kInput, "--records",
                      "cannot replace '" + path + "': " + ec.message());
}

std::string load_console_lines(const Spec& c, const TrimmedRun& trimmed, const StopOutcome& stop) {
  std::string out;
  const metrics::TransientSpec& t = c.limits.transients;
  if (t.any()) {
    out += fmt::format("Excluded from the metrics: {} warmup requests", trimmed.split.warmup);
    if (t.warmup.any()) out += " (" + window_text(t.warmup, true) + ")";
    out += fmt::format(", {} cooldown requests", trimmed.split.cooldown);
    if (t.cooldown.any()) out += " (" + window_text(t.cooldown, false) + ")";
    out += "\n";
  }
  if (!stop.rule.empty())
    out +=
        "Stopped by " + stop.message + "; sent no more requests and waited for those in flight\n";
  return out;
}

std::string load_header_lines(const Spec& c) {
  const RunLimits& L = c.limits;
  std::string out;
  if (!L.benchmark.empty())
    out +=
        fmt::format("Benchmark: {} (GuideLLM profile {})\n", L.benchmark, profile_name(L.profile));
  if (L.duration_s > 0)
    out += fmt::format("Duration: {} s (requests in flight at the end are cancelled)\n",
                       python_float(L.duration_s));
  return out;
}

bool ended_by_duration(const Spec& c, const std::vector<record::RequestRecord>& records,
                       size_t not_sent) {
  if (c.limits.duration_s <= 0) return false;
  if (not_sent > 0) return true;
  return std::any_of(records.begin(), records.end(), [](const record::RequestRecord& r) {
    return r.error.starts_with("cancelled: still running when the run's duration ended");
  });
}

}  // namespace servebench::run

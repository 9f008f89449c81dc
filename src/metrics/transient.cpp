#include "metrics/transient.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace servebench::metrics {
namespace {

void check_window(const TransientWindow& w, const char* flag) {
  if (!(w.fraction >= 0 && w.fraction < 1))
    throw core::Error(core::ErrorKind::kUsage, flag,
                      "a fraction must be in [0, 1), got " + std::to_string(w.fraction));
  if (!(w.seconds >= 0) || std::isinf(w.seconds))
    throw core::Error(core::ErrorKind::kUsage, flag,
                      "seconds must be a non-negative number, got " + std::to_string(w.seconds));
}

int64_t end_time(const record::RequestRecord& r) {
  return r.done_ns >= 0 ? r.done_ns : std::max(r.sent_ns, r.intended_ns);
}

}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kWarmup:
      return "warmup";
    case Phase::kCooldown:
      return "cooldown";
    case Phase::kMeasured:
      break;
  }
  return "";
}

TransientSplit split_transients(std::span<const record::RequestRecord> records,
                                const TransientSpec& spec) {
  check_window(spec.warmup, "--warmup");
  check_window(spec.cooldown, "--cooldown");
  TransientSplit split;
  split.phase.assign(records.size(), Phase::kMeasured);
  if (!spec.any()) return split;

  // The run's requests in completion order (GuideLLM counts requests as they are processed).
  std::vector<size_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!records[i].warmup) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return end_time(records[a]) < end_time(records[b]); });
  const size_t total = order.size();
  if (total == 0) return split;
  const bool timed = spec.run_duration_s > 0;
  int64_t end_ns = static_cast<int64_t>(std::llround(spec.run_duration_s * 1e9));
  if (!timed) end_ns = end_time(records[order.back()]);
  const double planned = static_cast<double>(spec.planned > 0 ? spec.planned : total);
  const auto ns = [](double s) { return static_cast<int64_t>(std::llround(s * 1e9)); };

  for (size_t rank = 0; rank < total; ++rank) {
    const record::RequestRecord& r = records[order[rank]];
    const int64_t done = end_time(r);
    // Progress when this request completed: elapsed share of the duration, else share of the
    // count processed before it (GuideLLM's 1 - remaining_fraction).
    const double progress = timed ? static_cast<double>(done) / static_cast<double>(end_ns)
                                  : static_cast<double>(rank) / planned;
    const double remaining = timed
                                 ? static_cast<double>(end_ns - done) / static_cast<double>(end_ns)
                                 : (planned - static_cast<double>(rank + 1)) / planned;
    const TransientWindow& w = spec.warmup;
    const bool in_warmup = (w.number > 0 && rank < w.number) ||
                           (w.seconds > 0 && r.intended_ns < ns(w.seconds)) ||
                           (w.fraction > 0 && progress < w.fraction);
    const TransientWindow& c = spec.cooldown;
    const bool in_cooldown = (c.number > 0 && rank + c.number >= total) ||
                             (c.seconds > 0 && done > end_ns - ns(c.seconds)) ||
                             (c.fraction > 0 && remaining < c.fraction);
    if (in_warmup) {
      split.phase[order[rank]] = Phase::kWarmup;
      ++split.warmup;
    } else if (in_cooldown) {
      split.phase[order[rank]] = Phase::kCooldown;
      ++split.cooldown;
    }
  }
  return split;
}

}  // namespace servebench::metrics

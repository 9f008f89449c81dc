// vLLM's speculative-decoding figures from two scrapes (server_metrics.h, spec_decode_stats).
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>

#include "server_metrics/server_metrics.h"

namespace servebench::server_metrics {
namespace {

// The counters vLLM reads, as it tells them apart: by the sample name's prefix, its "_total"
// suffix and a substring ("num_drafts" before "num_draft_tokens", the per-position counter
// before the plain accepted one).
struct SpecCounters {
  bool found = false;
  double drafts = 0, draft_tokens = 0, accepted = 0;
  std::map<int, double> accepted_per_position;
};

SpecCounters spec_counters(const Exposition& exposition) {
  SpecCounters c;
  for (const Sample& s : exposition.samples) {
    const std::string_view name = s.name;
    if (!name.starts_with("vllm:spec_decode") || !name.ends_with("_total")) continue;
    if (!std::isfinite(s.value)) continue;  // vLLM's int(float(...)) would refuse it too
    c.found = true;
    // vLLM truncates each sample to an integer before adding.
    const double value = std::trunc(s.value);
    if (name.find("num_drafts") != std::string_view::npos) {
      c.drafts += value;
    } else if (name.find("num_draft_tokens") != std::string_view::npos) {
      c.draft_tokens += value;
    } else if (name.find("num_accepted_tokens_per_pos") != std::string_view::npos) {
      for (const auto& [label, text] : split_labels(s.labels)) {
        if (label != "position") continue;
        int position = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), position);
        if (ec == std::errc() && end == text.data() + text.size() && !text.empty())
          c.accepted_per_position[position] += value;
      }
    } else if (name.find("num_accepted_tokens") != std::string_view::npos) {
      c.accepted += value;
    }
  }
  return c;
}

}  // namespace

std::optional<SpecDecodeStats> spec_decode_stats(const std::vector<EndpointSeries>& endpoints) {
  bool found = false;
  double drafts = 0, draft_tokens = 0, accepted = 0;
  std::map<int, double> per_position;
  for (const EndpointSeries& e : endpoints) {
    if (e.scrapes.size() < 2) continue;  // vLLM needs both the before and the after page
    const SpecCounters before = spec_counters(e.scrapes.front().exposition);
    const SpecCounters after = spec_counters(e.scrapes.back().exposition);
    if (!before.found || !after.found) continue;
    found = true;
    drafts += after.drafts - before.drafts;
    draft_tokens += after.draft_tokens - before.draft_tokens;
    accepted += after.accepted - before.accepted;
    std::map<int, double> positions = before.accepted_per_position;
    positions.insert(after.accepted_per_position.begin(), after.accepted_per_position.end());
    for (const auto& [position, unused] : positions) {
      const auto b = before.accepted_per_position.find(position);
      const auto a = after.accepted_per_position.find(position);
      const double before_value = b == before.accepted_per_position.end() ? 0 : b->second;
      // A position missing afterwards counts as unchanged, as in vLLM.
      const double after_value = a == after.accepted_per_position.end() ? before_value : a->second;
      per_position[position] += after_value - before_value;
    }
  }
  if (!found || draft_tokens <= 0) return std::nullopt;
  SpecDecodeStats stats;
  stats.num_drafts = static_cast<int64_t>(drafts);
  stats.draft_tokens = static_cast<int64_t>(draft_tokens);
  stats.accepted_tokens = static_cast<int64_t>(accepted);
  stats.acceptance_rate = accepted / draft_tokens * 100;
  stats.acceptance_length = drafts > 0 ? 1 + accepted / drafts : 0.0;
  if (drafts > 0) {
    for (const auto& [position, count] : per_position)
      stats.per_position_acceptance_rates.push_back(count / drafts);
  }
  return stats;
}

}  // namespace servebench::server_metrics

// The per-shard lines printed after the merged result's console blocks.
#include <fmt/format.h>

#include "merge/merge.h"

namespace servebench::merge {

std::string shard_table(const nlohmann::json& merge_block) {
  std::string out = fmt::format("{:=^50}\n", " Shards ");
  out += fmt::format("{:>5} {:<16} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10}\n", "shard", "host",
                     "sent", "failed", "duration", "late ms", "req/s", "TTFT ms");
  for (const nlohmann::json& s : merge_block.at("shards")) {
    std::string host = s.value("host", "");
    if (host.size() > 16) host = host.substr(0, 15) + "~";
    out += fmt::format("{:>5} {:<16} {:>8} {:>8} {:>9.2f}s {:>9.2f} {:>10.2f} {:>10.2f}\n",
                       s.value("index", 0), host, s.value("requests_sent", 0), s.value("failed", 0),
                       s.value("duration_s", 0.0), s.value("started_late_ms", 0.0),
                       s.value("request_throughput", 0.0), s["ttft_ms"].value("mean", 0.0));
  }
  const auto& missing = merge_block.at("missing");
  if (!missing.empty()) out += fmt::format("missing shards: {} (partial merge)\n", missing.dump());
  out += fmt::format("timeline: {}; union of the shards' intervals {:.3f} s, span {:.3f} s\n",
                     merge_block.value("timeline", ""), merge_block.value("union_s", 0.0),
                     merge_block.value("span_s", 0.0));
  out += std::string(50, '=') + "\n";
  return out;
}

}  // namespace servebench::merge

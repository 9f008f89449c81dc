// The live block's layout: ASCII only (one column per byte, so cutting to the width is exact).
#include "report/live_view.h"

#include <cmath>

#include <fmt/format.h>

namespace servebench::report {
namespace {

std::string clock_text(double seconds) {
  const auto t = static_cast<int64_t>(std::max(0.0, seconds));
  if (t >= 3600) return fmt::format("{}:{:02d}:{:02d}", t / 3600, t / 60 % 60, t % 60);
  return fmt::format("{:02d}:{:02d}", t / 60, t % 60);
}

// p50 and p99 of a distribution computed with percentiles {50, 99}; "-" without samples.
std::string p50_p99(const metrics::Distribution& d) {
  if (d.count == 0) return "p50      -     p99      -";
  double p50 = d.median, p99 = 0;
  for (const auto& [p, v] : d.percentiles) {
    if (p == 50) p50 = v;
    if (p == 99) p99 = v;
  }
  return fmt::format("p50 {:7.1f} ms  p99 {:7.1f} ms", p50, p99);
}

std::string gauge(const std::optional<double>& v, const char* unit) {
  return v ? fmt::format("{:.0f}{}", *v, unit) : std::string("-");
}

}  // namespace

std::vector<std::string> live_lines(const LiveFrame& f, int columns) {
  const std::string window = fmt::format("last {:.0f} s", f.window_s);
  std::vector<std::string> lines;
  lines.reserve(kLiveLines);
  lines.push_back(fmt::format(
      "servebench live  {} / {}  requests: {} planned, {} sent, {} done, {} failed{}",
      clock_text(f.elapsed_s), f.planned_s > 0 ? clock_text(f.planned_s) : std::string("--:--"),
      f.planned, f.sent, f.completed, f.failed, f.stopping ? "  [stopping: draining]" : ""));
  const size_t finished = f.completed + f.failed;
  lines.push_back(fmt::format("  rate      {:8.2f} req/s ({}), target {}   in flight {}",
                              f.send_rate, window, f.target_rate,
                              f.sent > finished ? f.sent - finished : 0));
  lines.push_back(fmt::format("  output    {:8.1f} tok/s ({}), {} requests finished in it",
                              f.window.vllm.output_throughput, window,
                              f.window.vllm.completed + f.window.vllm.failed));
  lines.push_back(fmt::format("  TTFT      {}", p50_p99(f.window.vllm.ttft_ms)));
  lines.push_back(fmt::format("  ITL       {}", p50_p99(f.window.vllm.itl_ms)));
  std::string errors;
  for (const auto& [reason, count] : f.errors)
    errors += fmt::format("{}{} {}", errors.empty() ? "" : ", ", reason, count);
  lines.push_back("  errors    " + (errors.empty() ? std::string("none") : errors));
  if (f.scraping) {
    lines.push_back(fmt::format(
        "  server    running {}  waiting {}  KV cache {}", gauge(f.server.running, ""),
        gauge(f.server.waiting, ""),
        f.server.kv_cache_pct ? fmt::format("{:.1f}%", *f.server.kv_cache_pct) : std::string("-")));
  } else {
    lines.push_back("  server    (no /metrics scrapes: --server-metrics off or not found)");
  }
  if (columns > 0) {
    for (std::string& line : lines) {
      if (line.size() > static_cast<size_t>(columns)) line.resize(static_cast<size_t>(columns));
    }
  }
  return lines;
}

std::string live_redraw(const std::vector<std::string>& lines, size_t previous) {
  std::string out;
  if (previous > 0) out += fmt::format("\x1b[{}A", previous);
  for (const std::string& line : lines) {
    out += "\r\x1b[2K";
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace servebench::report

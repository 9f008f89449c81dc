// File: report/live_view.h
// `--live`: the block a terminal shows while a run goes on, redrawn in place about once a
// second (run/live.h gathers the figures; this lays them out). Always the same number of
// lines, each cut to the terminal's width, so a redraw never scrolls.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace servebench::report {

// The server's own queue, from the last /metrics scrape (server_metrics' headline keys).
struct LiveServer {
  std::optional<double> running, waiting, kv_cache_pct;
};

// One redraw's figures. Totals cover the run so far; "window" figures the last window_s.
struct LiveFrame {
  double elapsed_s = 0;
  double planned_s = 0;  // when the last request is due (or --duration); 0 = not known
  size_t planned = 0, sent = 0, completed = 0, failed = 0;
  double window_s = 10;
  double send_rate = 0;     // requests sent per second over the window
  std::string target_rate;  // what the schedule asks, e.g. "10 req/s", "inf", "ramp 1-10 req/s"
  // metrics::compute over the records that finished in the window (its TTFT, ITL, output
  // throughput over window_s, failures).
  metrics::Summary window;
  std::map<std::string, size_t> errors;  // failures of the run so far by classify_failure
  bool scraping = false;                 // --server-metrics scrapes are on
  LiveServer server;
  bool stopping = false;  // Ctrl-C or a stop rule: sending has stopped, in-flight ones drain
};

// The block's lines (kLiveLines of them, no newlines), none wider than `columns` (0 = no cut).
inline constexpr size_t kLiveLines = 7;
std::vector<std::string> live_lines(const LiveFrame& frame, int columns);

// The bytes that replace the `previous` lines drawn last (0 = the first draw) with `lines`:
// cursor up, then each line erased and rewritten (ANSI/VT100: CSI n A, CSI 2K).
std::string live_redraw(const std::vector<std::string>& lines, size_t previous);

}  // namespace servebench::report

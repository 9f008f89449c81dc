// File: run/live.h
// `--live`: while a point's main run goes on, a block on stdout redrawn in place about once a
// second (report/live_view.h lays it out): elapsed and planned time, the send rate of the last
// window and the target, requests in flight, completed and failed, output tokens/s, TTFT and
// ITL p50/p99 of the last window, failures by reason, and the server's running and waiting
// requests and KV-cache usage from the last /metrics scrape.
// It takes what the progress bar takes: each record from the client's sink (a slim copy under
// a lock held for a push), plus the client's send counter (client::LiveCounters, atomics); the
// figures are computed (metrics::compute) and drawn by its own background thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/client.h"
#include "record/record.h"
#include "run/run.h"

namespace servebench::run {

class ServerMetricsRecorder;

// Whether `--live` can draw: stdout is a terminal. When it is not, says once on stderr that the
// progress bar is shown instead and returns false.
bool live_view_usable(const Spec& c);

class LiveView {
 public:
  // The main run of `c` sending `plan`; `server` (may be null) gives the last scrapes.
  LiveView(const Spec& c, const std::vector<client::PlannedRequest>& plan,
           const ServerMetricsRecorder* server);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  client::LiveCounters* counters() { return &counters_; }
  // From the client's sink: one finished (non-warmup, sent or not) record.
  void observe(const record::RequestRecord& r);
  // Draws the last frame and ends the thread (before the console block is printed).
  void stop();

 private:
  void loop();
  void draw();

  client::LiveCounters counters_;
  const ServerMetricsRecorder* server_;
  size_t planned_;
  double planned_s_, window_s_ = 10, redraw_s_ = 1;
  std::string target_rate_;
  std::mutex mutex_;  // guards pending_ and stopping_
  std::condition_variable wake_;
  std::vector<record::RequestRecord> pending_;
  bool stopping_ = false;
  // The view thread's own state.
  std::vector<record::RequestRecord> window_;       // finished within the last window_s_
  std::deque<std::pair<int64_t, uint64_t>> sends_;  // (mono ns, sent) at each redraw
  size_t completed_ = 0, failed_ = 0;
  std::map<std::string, size_t> errors_;
  size_t drawn_lines_ = 0;
  bool saw_stop_ = false;
  std::thread thread_;
};

}  // namespace servebench::run

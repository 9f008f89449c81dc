// The live view's gathering side: records in from the sink, figures out to report::live_lines,
// drawn on stdout from a background thread so the client's loops never wait for it.
#include "run/live.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/system.h"
#include "metrics/metrics.h"
#include "report/live_view.h"
#include "run/interrupt.h"
#include "run/names.h"
#include "run/server_metrics_recorder.h"

namespace servebench::run {
namespace {

int stdout_columns() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

// Everything metrics::compute reads, without the generated text (which can be long and is
// not needed for the window's figures).
record::RequestRecord slim_copy(const record::RequestRecord& r) {
  record::RequestRecord s;
  s.index = r.index;
  s.warmup = r.warmup;
  s.conversation = r.conversation;
  s.turn = r.turn;
  s.intended_ns = r.intended_ns;
  s.sent_ns = r.sent_ns;
  s.first_byte_ns = r.first_byte_ns;
  s.first_token_ns = r.first_token_ns;
  s.last_token_ns = r.last_token_ns;
  s.done_ns = r.done_ns;
  s.chunk_ns = r.chunk_ns;
  s.chunk_tokens = r.chunk_tokens;
  s.prompt_tokens = r.prompt_tokens;
  s.expected_output_tokens = r.expected_output_tokens;
  s.server_prompt_tokens = r.server_prompt_tokens;
  s.server_completion_tokens = r.server_completion_tokens;
  s.client_output_tokens = r.client_output_tokens;
  s.http_status = r.http_status;
  s.success = r.success;
  s.error = r.error;
  return s;
}

std::string target_rate_text(const Spec& c) {
  std::string rate;
  if (c.self_timed) {
    rate = "the trace's timestamps x" + python_float(c.trace_time_scale);
  } else if (c.ramp_up) {
    rate = fmt::format("ramp {}-{} req/s", c.ramp_up->start_rps, c.ramp_up->end_rps);
  } else if (std::isinf(c.request_rate)) {
    rate = "inf";
  } else {
    rate = python_float(c.request_rate) + " req/s";
  }
  if (c.max_concurrency > 0) rate += fmt::format(" (max concurrency {})", c.max_concurrency);
  return rate;
}

}  // namespace

bool live_view_usable(const Spec& c) {
  if (!c.live) return false;
  if (isatty(STDOUT_FILENO)) return true;
  static bool said = false;
  if (!said) {
    said = true;
    std::fprintf(stderr,
                 "servebench: --live: stdout is not a terminal; showing the progress bar "
                 "instead\n");
  }
  return false;
}

LiveView::LiveView(const Spec& c, const std::vector<client::PlannedRequest>& plan,
                   const ServerMetricsRecorder* server)
    : server_(server), planned_(plan.size()), target_rate_(target_rate_text(c)) {
  int64_t last_due = 0;
  for (const client::PlannedRequest& p : plan) {
    if (p.follows < 0) last_due = std::max(last_due, p.intended_ns);
  }
  planned_s_ = c.limits.duration_s > 0 ? c.limits.duration_s : last_due * 1e-9;
  std::fflush(stdout);
  draw();
  thread_ = std::thread([this] { loop(); });
}

LiveView::~LiveView() {
  stop();
}

void LiveView::observe(const record::RequestRecord& r) {
  record::RequestRecord slim = slim_copy(r);  // outside the lock
  std::lock_guard lock(mutex_);
  pending_.push_back(std::move(slim));
}

void LiveView::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  draw();  // the last frame: every record is in
}

void LiveView::loop() {
  core::make_this_thread_background();
  const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(redraw_s_ * 1e9));
  auto next = std::chrono::steady_clock::now() + interval;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    draw();
    lock.lock();
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;
  }
}

void LiveView::draw() {
  std::vector<record::RequestRecord> arrived;
  {
    std::lock_guard lock(mutex_);
    arrived.swap(pending_);
  }
  const int64_t now = core::mono_ns();
  const int64_t t0 = counters_.t0_mono_ns.load(std::memory_order_relaxed);
  const uint64_t sent = counters_.sent.load(std::memory_order_relaxed);
  const int64_t elapsed_ns = t0 > 0 ? now - t0 : 0;
  const auto window_ns = static_cast<int64_t>(window_s_ * 1e9);
  for (record::RequestRecord& r : arrived) {
    const std::string reason = metrics::classify_failure(r);
    if (reason.empty()) {
      ++completed_;
    } else {
      ++failed_;
      ++errors_[reason];
    }
    if (r.done_ns < 0) r.done_ns = elapsed_ns;  // never sent: it ends in the window it arrives
    window_.push_back(std::move(r));
  }
  std::erase_if(window_,
                [&](const record::RequestRecord& r) { return r.done_ns < elapsed_ns - window_ns; });
  sends_.emplace_back(now, sent);
  while (sends_.size() > 1 && sends_[1].first <= now - window_ns) sends_.pop_front();

  report::LiveFrame f;
  f.elapsed_s = elapsed_ns * 1e-9;
  f.planned_s = planned_s_;
  f.planned = planned_;
  f.sent = sent;
  f.completed = completed_;
  f.failed = failed_;
  f.window_s = window_s_;
  const double span_s = (now - sends_.front().first) * 1e-9;
  f.send_rate = span_s > 0 ? (sent - sends_.front().second) / span_s : 0;
  f.target_rate = target_rate_;
  metrics::Options mo;
  mo.percentiles = {50, 99};
  f.window = metrics::compute(window_, std::clamp(f.elapsed_s, 1e-9, window_s_), mo);
  f.errors = errors_;
  f.stopping = stopping();
  // A signal's handler has written its message below the block (core/interrupt.cpp): the block
  // starts again below it, so the message stays and nothing is drawn over half of it.
  const bool signalled = core::interrupted();
  if (signalled && !saw_stop_) drawn_lines_ = 0;
  saw_stop_ = signalled;
  if (server_ && server_->scraping()) {
    f.scraping = true;
    const nlohmann::json headline = server_->latest_headline();
    auto value = [&](const char* key) -> std::optional<double> {
      if (!headline.contains(key) || !headline[key].is_number()) return std::nullopt;
      return headline[key].get<double>();
    };
    f.server.running = value("running_requests_mean");
    f.server.waiting = value("waiting_requests_mean");
    f.server.kv_cache_pct = value("kv_cache_usage_pct_max");
  }
  // One column short of the width: a full-width line leaves some terminals at a pending wrap.
  const int columns = stdout_columns();
  const std::vector<std::string> lines = report::live_lines(f, columns > 1 ? columns - 1 : 0);
  const std::string out = report::live_redraw(lines, drawn_lines_);
  drawn_lines_ = lines.size();
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;  // Ctrl-C (the handler has no SA_RESTART)
    if (n <= 0) break;  // a closed terminal: the view is lost, the measurements are not
    done += static_cast<size_t>(n);
  }
}

}  // namespace servebench::run

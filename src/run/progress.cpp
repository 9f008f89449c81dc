// A progress bar laid out as tqdm lays it out (tqdm.std.tqdm.format_meter with default
// arguments): "{percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}]".
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/clock.h"
#include "run/progress.h"

namespace servebench::run {
namespace {

constexpr int64_t kMinIntervalNs = 100'000'000;  // tqdm's mininterval = 0.1 s

// tqdm's format_interval: [H:]MM:SS.
std::string interval(double seconds) {
  auto t = static_cast<int64_t>(seconds);
  int64_t minutes = t / 60, s = t % 60, h = minutes / 60, m = minutes % 60;
  if (h) return fmt::format("{:d}:{:02d}:{:02d}", h, m, s);
  return fmt::format("{:02d}:{:02d}", m, s);
}

// Width of stderr in columns: the terminal's, else $COLUMNS, else 0 (unknown).
int screen_columns() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS")) {
    int cols = std::atoi(env);
    if (cols > 0) return cols;
  }
  return 0;
}

// Display width of UTF-8 text (one column per code point; the bar uses block elements only).
size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string ProgressBar::format(size_t n, size_t total, double elapsed_s, int ncols) {
  const double frac = total ? std::min(1.0, static_cast<double>(n) / total) : 0.0;
  const double rate = elapsed_s > 0 ? n / elapsed_s : 0.0;
  std::string rate_text;
  if (rate <= 0) {
    rate_text = "?it/s";
  } else if (rate < 1) {
    rate_text = fmt::format("{:5.2f}s/it", 1 / rate);
  } else {
    rate_text = fmt::format("{:5.2f}it/s", rate);
  }
  const std::string remaining = rate > 0 ? interval((total - std::min(n, total)) / rate) : "?";
  const std::string left = fmt::format("{:3.0f}%|", frac * 100);
  const std::string right =
      fmt::format("| {}/{} [{}<{}, {}]", n, total, interval(elapsed_s), remaining, rate_text);
  const int cells =
      ncols > 0 ? std::max<int>(1, ncols - static_cast<int>(left.size() + right.size())) : 10;
  // Eighth-block resolution, as tqdm's unicode bar: full blocks, one partial block, spaces.
  static const char* kPartial[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const auto eighths = static_cast<int64_t>(frac * cells * 8);
  const int64_t full = eighths / 8;
  std::string bar;
  for (int64_t i = 0; i < full; ++i) bar += "█";
  if (full < cells) {
    bar += kPartial[eighths % 8];
    bar.append(static_cast<size_t>(cells - full - 1), ' ');
  }
  return left + bar + right;
}

ProgressBar::ProgressBar(size_t total, bool enabled)
    : total_(total), enabled_(enabled), start_ns_(core::mono_ns()) {
  if (enabled_) draw(false);
}

ProgressBar::~ProgressBar() {
  close();
}

void ProgressBar::update(size_t n) {
  n_ += n;
  if (!enabled_ || closed_) return;
  int64_t now = core::mono_ns();
  if (now - last_draw_ns_ >= kMinIntervalNs) draw(false);
}

void ProgressBar::close() {
  if (closed_) return;
  closed_ = true;
  if (enabled_) draw(true);
}

void ProgressBar::draw(bool final_draw) {
  last_draw_ns_ = core::mono_ns();
  std::string line = format(n_, total_, (last_draw_ns_ - start_ns_) * 1e-9, screen_columns());
  const size_t len = columns_of(line);
  std::string out = "\r" + line;
  if (last_len_ > len) out.append(last_len_ - len, ' ');  // erase a longer previous line
  last_len_ = len;
  if (final_draw) out += "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
  std::fflush(stderr);
}

}  // namespace servebench::run

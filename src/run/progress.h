// File: run/progress.h
// A tqdm-compatible progress bar on stderr, as vLLM's benchmark shows one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace servebench::run {

// "100%|█████| 200/200 [00:11<00:00, 17.08it/s]". Redraws with '\r' at most every 100 ms
// (tqdm's mininterval), fills the terminal width when stderr is a terminal (else $COLUMNS, else a
// 10-cell bar, as tqdm), and ends with a newline on close().
class ProgressBar {
 public:
  ProgressBar(size_t total, bool enabled);
  ~ProgressBar();
  void update(size_t n = 1);
  void close();
  // The line tqdm would print (no '\r'), for tests: n of total after elapsed_s, bar width cells.
  static std::string format(size_t n, size_t total, double elapsed_s, int ncols);

 private:
  void draw(bool final_draw);
  size_t total_, n_ = 0;
  bool enabled_, closed_ = false;
  int64_t start_ns_, last_draw_ns_ = 0;
  size_t last_len_ = 0;
};

}  // namespace servebench::run

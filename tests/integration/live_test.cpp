// `run --live`: in a terminal (a detached tmux session of fixed size, read with capture-pane)
// the block is redrawn in place; without one the plain progress bar is shown instead.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

// ~8 s at 12 req/s against the embedded simulator, fixed timing.
std::vector<std::string> live_run() {
  return {"run",
          "--live",
          "--num-prompts",
          "100",
          "--request-rate",
          "12",
          "--random-input-len",
          "32",
          "--random-output-len",
          "32",
          "--sim-ttft-ms",
          "20",
          "--sim-itl-ms",
          "5",
          "--seed",
          "7"};
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command, returns its stdout.
std::string capture(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// A tmux server of our own (its own socket), killed with everything in it when destroyed.
class Tmux {
 public:
  Tmux() : socket_("servebench-live-test-" + std::to_string(getpid())) {}
  ~Tmux() { std::system((tmux() + " kill-server >/dev/null 2>&1").c_str()); }
  std::string tmux() const { return "env -u TMUX tmux -L " + socket_ + " -f /dev/null"; }
  // A detached session `columns` x `rows` running `command` (a shell command line).
  bool start(const std::string& command, int columns, int rows) {
    return std::system((tmux() + " new-session -d -s live -x " + std::to_string(columns) + " -y " +
                        std::to_string(rows) + " " + shell_quote(command))
                           .c_str()) == 0;
  }
  void keys(const std::string& keys) const {
    std::system((tmux() + " send-keys -t live " + keys).c_str());
  }
  // The pane as shown (`history`: with everything scrolled off above).
  std::vector<std::string> pane(bool history = false) const {
    return lines_of(
        capture(tmux() + " capture-pane -p -t live" + (history ? " -S -" : "") + " 2>/dev/null"));
  }

 private:
  std::string socket_;
};

bool tmux_installed() {
  return std::system("command -v tmux >/dev/null 2>&1") == 0;
}

// Rows of the pane that begin the live block.
std::vector<size_t> block_rows(const std::vector<std::string>& pane) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < pane.size(); ++i) {
    if (pane[i].rfind("servebench live  ", 0) == 0) rows.push_back(i);
  }
  return rows;
}

// The block's 7 lines from `row`, each beginning as live_view.cpp writes it.
void expect_block_at(const std::vector<std::string>& pane, size_t row, const std::string& when) {
  const std::vector<std::string> starts = {
      "servebench live  ", "  rate ", "  output ", "  TTFT ", "  ITL ", "  errors ", "  server "};
  ASSERT_LE(row + starts.size(), pane.size()) << when;
  for (size_t i = 0; i < starts.size(); ++i)
    EXPECT_EQ(pane[row + i].rfind(starts[i], 0), 0u)
        << when << ": row " << row + i << " is '" << pane[row + i] << "'";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

TEST(LiveRun, RedrawnInPlaceInATerminalThenTheSummary) {
  if (!tmux_installed())
    GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh --tests installs it)";
  TempDir dir;
  const std::string exit_file = dir.path() + "/exit_code";
  std::string command = shell_quote(SERVEBENCH_BIN);
  for (const std::string& a : live_run()) command += " " + shell_quote(a);
  // The pane stays after the run so the last screen can be read.
  command = "cd " + shell_quote(dir.path()) + " && " + command + "; echo $? > " +
            shell_quote(exit_file) + "; sleep 600";
  Tmux tmux;
  ASSERT_TRUE(tmux.start(command, 120, 60));
  auto exited = [&] { return std::ifstream(exit_file).good(); };

  // Frames while the run goes on, about a second apart.
  std::vector<std::vector<std::string>> frames;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (frames.size() < 4 && !exited() && std::chrono::steady_clock::now() < deadline) {
    std::vector<std::string> pane = tmux.pane();
    if (!block_rows(pane).empty()) frames.push_back(std::move(pane));
    std::this_thread::sleep_for(std::chrono::milliseconds(frames.empty() ? 100 : 1100));
  }
  ASSERT_GE(frames.size(), 2u) << "the block was seen in fewer than two frames before the end:\n"
                               << joined(tmux.pane(true));
  const size_t row = block_rows(frames[0]).at(0);
  for (size_t f = 0; f < frames.size(); ++f) {
    const std::string when = "frame " + std::to_string(f) + ":\n" + joined(frames[f]);
    // One block, at the same row every time, and nothing below it: redrawn, never scrolled.
    ASSERT_EQ(block_rows(frames[f]), std::vector<size_t>{row}) << when;
    expect_block_at(frames[f], row, when);
    for (size_t i = row + 7; i < frames[f].size(); ++i) EXPECT_EQ(frames[f][i], "") << when;
  }
  EXPECT_NE(frames.front()[row], frames.back()[row]) << "the figures never changed";

  while (!exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(exited()) << joined(tmux.pane(true));
  std::ifstream in(exit_file);
  int code = -1;
  in >> code;
  const std::vector<std::string> all = tmux.pane(true);
  EXPECT_EQ(code, 0) << joined(all);
  // The whole history: the one block (its last frame: every request done), then the summary.
  const std::vector<size_t> rows = block_rows(all);
  ASSERT_EQ(rows.size(), 1u) << joined(all);
  expect_block_at(all, rows[0], "last frame:\n" + joined(all));
  EXPECT_NE(all[rows[0]].find("requests: 100 planned, 100 sent, 100 done, 0 failed"),
            std::string::npos)
      << all[rows[0]];
  size_t summary = all.size();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].find("Serving Benchmark Result") != std::string::npos) summary = i;
  }
  ASSERT_LT(summary, all.size()) << joined(all);
  EXPECT_GT(summary, rows[0] + 6) << joined(all);
}

TEST(LiveRun, WithoutATerminalThePlainProgressBar) {
  std::vector<std::string> args = live_run();
  const auto rate = std::find(args.begin(), args.end(), "--request-rate");
  ASSERT_NE(rate, args.end());
  *(rate + 1) = "inf";  // no need to wait here
  Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string notice =
      "servebench: --live: stdout is not a terminal; showing the progress "
      "bar instead";
  const size_t at = o.err.find(notice);
  EXPECT_NE(at, std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(notice, at + 1), std::string::npos) << "said more than once:\n" << o.err;
  EXPECT_NE(o.err.find("100%|"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("| 100/100 ["), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("servebench live"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\x1b["), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Serving Benchmark Result"), std::string::npos) << o.out;
}

// Ctrl-C: the handler's message stays on screen; the block starts again below it, says it is
// draining, and the summary of what was sent follows.
TEST(LiveRun, CtrlCLeavesTheMessageThenTheBlockDrainsThenTheSummary) {
  if (!tmux_installed())
    GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh --tests installs it)";
  TempDir dir;
  const std::string exit_file = dir.path() + "/exit_code";
  std::vector<std::string> args = live_run();
  const auto prompts = std::find(args.begin(), args.end(), "--num-prompts");
  ASSERT_NE(prompts, args.end());
  *(prompts + 1) = "600";  // ~50 s unless interrupted
  std::string command = shell_quote(SERVEBENCH_BIN);
  for (const std::string& a : args) command += " " + shell_quote(a);
  command = "cd " + shell_quote(dir.path()) + " && " + command + "; echo $? > " +
            shell_quote(exit_file) + "; sleep 600";
  Tmux tmux;
  ASSERT_TRUE(tmux.start(command, 120, 60));
  auto exited = [&] { return std::ifstream(exit_file).good(); };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (block_rows(tmux.pane()).empty() && !exited() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a redraw or two
  tmux.keys("C-c");
  while (!exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(exited()) << joined(tmux.pane(true));
  const std::vector<std::string> all = tmux.pane(true);
  const std::vector<size_t> rows = block_rows(all);
  ASSERT_EQ(rows.size(), 2u) << joined(all);
  expect_block_at(all, rows[0], "before Ctrl-C:\n" + joined(all));
  expect_block_at(all, rows[1], "after Ctrl-C:\n" + joined(all));
  size_t message = all.size();
  for (size_t i = rows[0] + 7; i < rows[1]; ++i) {
    if (all[i].find("servebench: interrupted (SIGINT); ") != std::string::npos) message = i;
  }
  EXPECT_LT(message, rows[1]) << "the handler's message is not between the blocks:\n"
                              << joined(all);
  EXPECT_EQ(all[rows[0]].find("[stopping"), std::string::npos) << all[rows[0]];
  EXPECT_NE(all[rows[1]].find("[stopping: draining]"), std::string::npos) << all[rows[1]];
  size_t summary = all.size();
  for (size_t i = rows[1]; i < all.size(); ++i) {
    if (all[i].find("Serving Benchmark Result") != std::string::npos) summary = i;
  }
  EXPECT_LT(summary, all.size()) << joined(all);
}

}  // namespace
}  // namespace servebench::itest

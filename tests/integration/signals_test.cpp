// SIGINT and SIGTERM in every phase (docs/reliability.md, "Signals"): one mechanism
// (core/interrupt.h) stops the main run with a summary and a partial result, and stops every
// phase before it (the dataset, the prompts, the ready check) without sending the main run,
// naming the phase; a second signal exits at once; `sim` stops on either. Bounds are generous
// (the machine is shared): "promptly" here is well under the minutes the phases would last.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

int code_of(int sig) {
  return 128 + sig;
}
const char* name_of(int sig) {
  return sig == SIGTERM ? "SIGTERM" : "SIGINT";
}

// A run long enough to be stopped in the middle: 400 requests at 40/s on the embedded simulator.
std::vector<std::string> mid_run_args(const TempDir& dir) {
  return {"run",
          "--num-prompts",
          "400",
          "--request-rate",
          "40",
          "--random-input-len",
          "8",
          "--random-output-len",
          "4",
          "--sim-ttft-ms",
          "10",
          "--sim-itl-ms",
          "2",
          "--disable-tqdm",
          "--records",
          dir.path() + "/r.jsonl",
          "--save-result",
          "--result-dir",
          dir.path(),
          "--result-filename",
          "res.json"};
}

// That run, sent `sig` 1.5 s into its main run.
RunSpec mid_run_spec(const TempDir& dir, int sig) {
  RunSpec spec;
  spec.args = mid_run_args(dir);
  spec.sigint_after = "Starting main benchmark run...";
  spec.sigint_delay_s = 1.5;
  spec.signal = sig;
  spec.timeout_s = 60;
  return spec;
}

// The records file's lines, each checked to be a whole JSON record (the file ends with a newline).
size_t whole_record_lines(const std::string& path) {
  const std::string records = read_file(path);
  EXPECT_FALSE(records.empty()) << path;
  if (records.empty()) return 0;
  EXPECT_EQ(records.back(), '\n');
  size_t lines = 0;
  for (const std::string& line : lines_of(records)) {
    if (line.empty()) continue;
    EXPECT_TRUE(json::accept(line)) << line;
    ++lines;
  }
  return lines;
}

// Either signal in the main run: sending stops, the summary of what was sent is printed and the
// partial result and the records are written; exit 130 or 143.
class MidRunSignal : public ::testing::TestWithParam<int> {};

TEST_P(MidRunSignal, StopsSendingPrintsTheSummaryAndSavesThePartialResult) {
  const int sig = GetParam();
  TempDir dir;
  const Outcome o = run(mid_run_spec(dir, sig));
  EXPECT_EQ(o.exit_code, code_of(sig)) << o.out << o.err;
  EXPECT_NE(o.err.find(std::string("stopped by ") + name_of(sig) + " in the main run"),
            std::string::npos)
      << o.err;
  ASSERT_NE(o.out.find("Serving Benchmark Result"), std::string::npos) << o.out;
  const auto ok = console_value(o.out, "Successful requests:");
  const auto failed = console_value(o.out, "Failed requests:");
  ASSERT_TRUE(ok && failed) << o.out;
  EXPECT_GT(*ok, 0);
  EXPECT_LT(*ok + *failed, 400);
  // The records file: whole lines, one per request in the summary.
  const size_t lines = whole_record_lines(dir.path() + "/r.jsonl");
  EXPECT_EQ(static_cast<double>(lines), *ok + *failed);
  const json r = json::parse(read_file(dir.path() + "/res.json"));
  EXPECT_EQ(r["completed"].get<double>(), *ok);
  EXPECT_GT(r["completed"].get<double>(), 0);
  EXPECT_TRUE(r["servebench"]["client"]["interrupted"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(, MidRunSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(name_of(info.param));
                         });

// SIGKILL cannot be caught: no summary and no result, but the records written so far stay, as
// whole lines (the client writes them in whole-line flushes every 50 ms).
TEST(Signals, KillNineLeavesTheRecordsWrittenSoFarAsWholeLines) {
  TempDir dir;
  const Outcome o = run(mid_run_spec(dir, SIGKILL));
  EXPECT_NE(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("Serving Benchmark Result"), std::string::npos) << o.out;
  const size_t lines = whole_record_lines(dir.path() + "/r.jsonl");
  EXPECT_GT(lines, 0u);
  EXPECT_LT(lines, 400u);
}

TEST(Signals, ASecondSignalExitsAtOnce) {
  TempDir dir;
  RunSpec spec;
  // Requests of 20 s each and a drain of 60 s: only the second signal can end this soon.
  spec.args = {"run",
               "--num-prompts",
               "20",
               "--request-rate",
               "inf",
               "--random-input-len",
               "8",
               "--random-output-len",
               "100",
               "--ignore-eos",
               "--sim-ttft-ms",
               "10",
               "--sim-itl-ms",
               "200",
               "--drain-timeout-sec",
               "60",
               "--disable-tqdm",
               "--records",
               dir.path() + "/r.jsonl"};
  spec.sigint_after = "Starting main benchmark run...";
  spec.sigint_delay_s = 1.0;
  spec.signal = SIGTERM;
  spec.signal_count = 2;
  spec.repeat_after_s = 0.5;
  spec.timeout_s = 60;
  const Outcome o = run(spec);
  EXPECT_EQ(o.exit_code, 143) << o.out << o.err;
  EXPECT_NE(o.err.find("interrupted again; exiting now"), std::string::npos) << o.err;
  ASSERT_GE(o.signal_sent_s, 0);
  EXPECT_LT(o.seconds - o.signal_sent_s, 10) << o.err;
}

// A command stopped before its main run: the signal's exit code, one line naming the phase, no
// main run, and well within the minutes the phase would have lasted.
void expect_stopped_before_main_run(const Outcome& o, int sig, const std::string& phase) {
  EXPECT_EQ(o.exit_code, code_of(sig)) << o.out << o.err;
  EXPECT_NE(o.err.find(phase + ": stopped by " + name_of(sig)), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("Starting main benchmark run"), std::string::npos) << o.out;
  ASSERT_GE(o.signal_sent_s, 0);
  EXPECT_LT(o.seconds - o.signal_sent_s, 10) << o.err;
}

// A loopback port that accepts connections (the kernel completes them) and never answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 64) == 0) {
      socklen_t len = sizeof a;
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
    }
  }
  ~SilentListener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = -1;
};

struct ReadyCase {
  int sig;
  bool silent;  // a port that never answers; else a simulator answering 503 to everything
};

class ReadyCheckSignal : public ::testing::TestWithParam<ReadyCase> {};

TEST_P(ReadyCheckSignal, StopsTheCommandWithoutSendingTheMainRun) {
  const ReadyCase c = GetParam();
  TempDir dir;
  SilentListener silent;
  std::optional<Background> sim;
  int port = silent.port();
  if (!c.silent) {
    port = free_port();
    sim.emplace(
        std::vector<std::string>{"sim", "--port", std::to_string(port), "--fault", "503:1"});
    ASSERT_TRUE(sim->wait_for_port(port, 20));
  }
  ASSERT_GT(port, 0);
  RunSpec spec;
  spec.args = {"run",
               "--base-url",
               "http://127.0.0.1:" + std::to_string(port),
               "--model",
               "servebench-sim",  // the simulator's name: its answer is the 503, not a 404
               "--tokenizer",
               "builtin",
               "--num-prompts",
               "5",
               "--ready-check-timeout-sec",
               "600",
               "--disable-tqdm",
               "--records",
               dir.path() + "/r.jsonl"};
  spec.sigint_after = "Starting initial single prompt test run...";
  spec.sigint_delay_s = 1.0;  // the check is under way (a few attempts against the 503s)
  spec.signal = c.sig;
  spec.timeout_s = 60;
  const Outcome o = run(spec);
  expect_stopped_before_main_run(o, c.sig, "ready check");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/r.jsonl"));  // no request of the main run
}

INSTANTIATE_TEST_SUITE_P(, ReadyCheckSignal,
                         ::testing::Values(ReadyCase{SIGINT, true}, ReadyCase{SIGTERM, true},
                                           ReadyCase{SIGINT, false}, ReadyCase{SIGTERM, false}),
                         [](const ::testing::TestParamInfo<ReadyCase>& info) {
                           return std::string(name_of(info.param.sig)) +
                                  (info.param.silent ? "_SilentServer" : "_Server503");
                         });

TEST(Signals, SigintWhileAFifoDatasetNeverEndsStopsInThatPhase) {
  TempDir dir;
  const std::string fifo = dir.path() + "/prompts.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Held open for writing by this process, with one line and no end: the reader waits for more.
  const int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  const std::string line = "{\"prompt\": \"hello there\"}\n";
  ASSERT_EQ(::write(writer, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  RunSpec spec;
  spec.args = {"run", "--dataset-name", "custom", "--dataset-path",
               fifo,  "--num-prompts",  "5",      "--disable-tqdm"};
  spec.sigint_after = "started the embedded simulator";
  spec.sigint_delay_s = 1.0;
  spec.timeout_s = 60;
  const Outcome o = run(spec);
  ::close(writer);
  expect_stopped_before_main_run(o, SIGINT, "reading the dataset");
}

TEST(Signals, SigintWhileBuildingManyPromptsWithARealTokenizerStopsThere) {
  const char* env = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  const std::string tokenizer =
      (env && *env ? std::string(env)
                   : std::string(SERVEBENCH_SOURCE_DIR) + "/build-deps/tokenizers") +
      "/llama3/tokenizer.json";
  if (!std::filesystem::exists(tokenizer)) GTEST_SKIP() << tokenizer << " is absent";
  RunSpec spec;
  // vLLM's decode/re-encode rule over 200000 prompts: minutes of work on this machine.
  spec.args = {"run",    "--tokenizer",         tokenizer, "--dataset-name",
               "random", "--random-token-rule", "vllm",    "--random-input-len",
               "512",    "--num-prompts",       "200000",  "--max-concurrency",
               "64",     "--disable-tqdm"};
  spec.sigint_after = "started the embedded simulator";
  spec.sigint_delay_s = 1.0;
  spec.timeout_s = 90;
  const Outcome o = run(spec);
  expect_stopped_before_main_run(o, SIGINT, "building the prompts");
}

TEST(Signals, SigtermWhileWaitingForStartAtStopsThere) {
  RunSpec spec;
  // A shard told to start a minute from now: it waits, and the signal ends the wait.
  const long start_at = static_cast<long>(std::time(nullptr)) + 60;
  spec.args = {"run",
               "--shard",
               "1/2",
               "--start-at",
               std::to_string(start_at),
               "--num-prompts",
               "10",
               "--request-rate",
               "10",
               "--random-input-len",
               "8",
               "--random-output-len",
               "4",
               "--disable-tqdm"};
  spec.sigint_after = "for --start-at";
  spec.sigint_delay_s = 0.5;
  spec.signal = SIGTERM;
  spec.timeout_s = 60;
  const Outcome o = run(spec);
  EXPECT_EQ(o.exit_code, 143) << o.out << o.err;
  EXPECT_NE(o.err.find("waiting for --start-at: stopped by SIGTERM"), std::string::npos) << o.err;
  ASSERT_GE(o.signal_sent_s, 0);
  EXPECT_LT(o.seconds - o.signal_sent_s, 10) << o.err;
}

// A signal in the second of three rates: the first point's result is whole, the second is saved
// as interrupted, the third never starts.
TEST(Signals, SigintInARateListKeepsThePointsDoneAndStartsNoMore) {
  TempDir dir;
  RunSpec spec;
  spec.args = {"run",
               "--request-rate",
               "40,50,60",
               "--num-prompts",
               "150",
               "--random-input-len",
               "8",
               "--random-output-len",
               "4",
               "--sim-ttft-ms",
               "5",
               "--sim-itl-ms",
               "1",
               "--disable-tqdm",
               "--save-result",
               "--result-dir",
               dir.path()};
  spec.sigint_after = "Traffic request rate: 50.0";
  spec.sigint_delay_s = 0.5;
  spec.timeout_s = 90;
  const Outcome o = run(spec);
  EXPECT_EQ(o.exit_code, 130) << o.out << o.err;
  EXPECT_EQ(o.out.find("Traffic request rate: 60.0"), std::string::npos) << o.out;
  std::vector<std::string> results;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".json")) results.push_back(entry.path().string());
  }
  std::sort(results.begin(), results.end());
  ASSERT_EQ(results.size(), 2u) << o.out << o.err;  // 40.0qps and 50.0qps
  const json first = json::parse(read_file(results[0]));
  const json second = json::parse(read_file(results[1]));
  EXPECT_EQ(first["request_rate"], 40.0);
  EXPECT_EQ(first["completed"], 150);
  EXPECT_FALSE(first["servebench"]["client"]["interrupted"].get<bool>());
  EXPECT_EQ(second["request_rate"], 50.0);
  EXPECT_TRUE(second["servebench"]["client"]["interrupted"].get<bool>());
  EXPECT_LT(second["completed"].get<int>(), 150);
}

TEST(Signals, SimStopsOnSigtermAsOnSigint) {
  RunSpec spec;
  spec.args = {"sim", "--port", std::to_string(free_port())};
  spec.sigint_after = "servebench sim: serving";
  spec.sigint_delay_s = 0.5;
  spec.signal = SIGTERM;
  spec.timeout_s = 30;
  const Outcome o = run(spec);
  EXPECT_EQ(o.exit_code, 143) << o.out << o.err;
  EXPECT_NE(o.err.find("terminated (SIGTERM); stopping the simulator"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace servebench::itest

// A run's output files (docs/reliability.md): the result whole, valid JSON whatever bytes its
// inputs held; the records whole lines even past a file size limit; an output another live run
// holds refused before any set-up; default names of runs started in the same second kept apart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

TEST(ResultFile, ALabelThatIsNotUtf8IsShownEscapedAndTheResultIsWritten) {
  TempDir dir;
  const std::string label = "lab\xe9";
  Outcome o = run({"run", "--num-prompts", "5", "--request-rate", "50", "--label", label,
                   "--metadata", "site=caf\xe9", "--save-result", "--result-dir", dir.path(),
                   "--result-filename", "r.json", "--disable-tqdm"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json result = json::parse(read_file(dir.path() + "/r.json"));
  EXPECT_EQ(result["label"], "lab\\xE9");
  EXPECT_EQ(result["site"], "caf\\xE9");
  EXPECT_EQ(result["completed"], 5);
  // Written through a temporary file and a rename: nothing else is left in the directory.
  for (const auto& name : dir.files())
    EXPECT_TRUE(name == "r.json" || name == "r.records.jsonl") << name;
}

// Past RLIMIT_FSIZE a write fails with EFBIG (SIGXFSZ is ignored by servebench, not by the
// test). One request at a time, so the records arrive in plan order: the file keeps records
// 0..N-1 as whole lines, the message names request N as the first missing one, and the result
// counts every request.
TEST(RecordsFile, FileSizeLimitLeavesWholeLinesAndNamesTheFirstMissingRecord) {
  TempDir dir;
  const std::string records = dir.path() + "/r.jsonl";
  RunSpec spec;
  spec.args = {"run",
               "--num-prompts",
               "120",
               "--max-concurrency",
               "1",
               "--random-input-len",
               "8",
               "--random-output-len",
               "3",
               "--sim-ttft-ms",
               "1",
               "--sim-itl-ms",
               "1",
               "--disable-tqdm",
               "--records",
               records,
               "--save-result",
               "--result-dir",
               dir.path(),
               "--result-filename",
               "r.json"};
  spec.file_size_limit = 24 * 1024;  // the result (~9 KB) fits; 120 records (~40 KB) do not
  Outcome o = run(spec);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string text = read_file(records);
  ASSERT_FALSE(text.empty());
  EXPECT_LT(text.size(), spec.file_size_limit);
  EXPECT_EQ(text.back(), '\n') << "a partial last line is left";
  uint64_t next = 0;
  for (const std::string& line : lines_of(text)) {
    const json r = json::parse(line, nullptr, false);
    ASSERT_TRUE(r.is_object()) << "not a whole record: " << line;
    EXPECT_EQ(r["index"].get<uint64_t>(), next) << line;
    ++next;
  }
  const std::string said = "servebench: --records '" + records + "': write failed (File too large)";
  ASSERT_NE(o.err.find(said), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(said, o.err.find(said) + 1), std::string::npos) << "said twice: " << o.err;
  EXPECT_NE(o.err.find("the record of request " + std::to_string(next) + " (request id "),
            std::string::npos)
      << "the first missing record is request " << next << ": " << o.err;
  EXPECT_EQ(json::parse(read_file(dir.path() + "/r.json"))["completed"], 120);
}

// A run that holds an output path for a while: its records file, at a low rate.
std::vector<std::string> holding_run(const std::string& records) {
  return {"run",
          "--num-prompts",
          "400",
          "--request-rate",
          "5",
          "--disable-tqdm",
          "--random-input-len",
          "4",
          "--random-output-len",
          "2",
          "--records",
          records};
}

bool wait_for_file(const std::string& path, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A second run naming the records path a live run writes is refused at once, before its
// tokenizer, simulator or any request, naming the path and the holder's pid; the holder's
// records are untouched.
TEST(OutputLock, APathAnotherLiveRunWritesIsRefusedUpFrontNamingItAndTheHolder) {
  TempDir dir;
  const std::string records = dir.path() + "/r.jsonl";
  Background holder(holding_run(records));
  ASSERT_TRUE(wait_for_file(records + ".lock", 30)) << holder.log();
  ASSERT_TRUE(wait_for_file(records, 30)) << holder.log();
  Outcome second = run({"run", "--num-prompts", "5", "--disable-tqdm", "--records", records});
  EXPECT_EQ(second.exit_code, 3) << second.out << second.err;
  EXPECT_NE(second.err.find("servebench: --records: '" + records +
                            "' is being written by another process (pid " +
                            std::to_string(holder.pid()) + ";"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(second.out.find("Starting initial single prompt test run"), std::string::npos)
      << second.out;
  EXPECT_EQ(second.err.find("started the embedded simulator"), std::string::npos) << second.err;
  for (const std::string& line : lines_of(read_file(records)))
    EXPECT_TRUE(json::parse(line, nullptr, false).is_object()) << line;
}

// Two runs started in the same second with default names (vLLM's
// {label}-{rate}qps-{model}-{date}.json): the second keeps vLLM's pattern with "-2" before
// ".json" and says so, instead of both writing one file. The "other run" here is this test
// holding the names of the coming seconds' lock files, as a run holds them.
TEST(OutputLock, DefaultNamesOfRunsStartedInTheSameSecondAreKeptApart) {
  TempDir first_dir, dir;
  const std::vector<std::string> args = {
      "run",           "--num-prompts", "3", "--request-rate", "50", "--disable-tqdm",
      "--save-result", "--result-dir"};
  std::vector<std::string> first_args = args;
  first_args.push_back(first_dir.path());
  Outcome first = run(first_args);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::string prefix;  // the name up to its date
  for (const std::string& name : first_dir.files())
    if (name.ends_with(".records.jsonl")) prefix = name.substr(0, name.size() - 29);
  ASSERT_FALSE(prefix.empty()) << "no default-named records file";

  // Holds, as a live run would, the default names of the coming minute's seconds in `in`.
  std::vector<int> held;
  const auto hold_default_names = [&](const std::string& in) {
    const std::time_t now = std::time(nullptr);
    for (std::time_t t = now - 2; t < now + 60; ++t) {
      std::tm local{};
      localtime_r(&t, &local);
      char date[32];
      std::strftime(date, sizeof date, "%Y%m%d-%H%M%S", &local);
      const std::string lock = in + "/" + prefix + date + ".json.lock";
      const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
      held.push_back(fd);
    }
  };
  hold_default_names(dir.path());
  std::vector<std::string> second_args = args;
  second_args.push_back(dir.path());
  Outcome second = run(second_args);
  // --result-dir alone: the default name names only the records file, which steps aside too.
  TempDir records_dir;
  hold_default_names(records_dir.path());
  Outcome records_only = run({"run", "--num-prompts", "3", "--request-rate", "50", "--disable-tqdm",
                              "--result-dir", records_dir.path()});
  for (int fd : held) ::close(fd);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  std::vector<std::string> results;
  for (const std::string& name : dir.files())
    if (name.ends_with(".json")) results.push_back(name);
  ASSERT_EQ(results.size(), 1u) << second.err;
  EXPECT_TRUE(results[0].starts_with(prefix) && results[0].ends_with("-2.json")) << results[0];
  EXPECT_EQ(json::parse(read_file(dir.path() + "/" + results[0]))["completed"], 3);
  EXPECT_TRUE(std::filesystem::exists(
      dir.path() + "/" + results[0].substr(0, results[0].size() - 5) + ".records.jsonl"));
  EXPECT_NE(second.err.find("is being written by another run started in the same second; this "
                            "run's result is '" +
                            dir.path() + "/" + results[0] + "'"),
            std::string::npos)
      << second.err;

  ASSERT_EQ(records_only.exit_code, 0) << records_only.out << records_only.err;
  std::vector<std::string> records;
  for (const std::string& name : records_dir.files())
    if (name.ends_with(".records.jsonl")) records.push_back(name);
  ASSERT_EQ(records.size(), 1u) << records_only.err;
  EXPECT_TRUE(records[0].starts_with(prefix) && records[0].ends_with("-2.records.jsonl"))
      << records[0];
  EXPECT_EQ(lines_of(read_file(records_dir.path() + "/" + records[0])).size(), 3u);
  EXPECT_NE(records_only.err.find("this run's records are '" + records_dir.path() + "/" +
                                  records[0] + "'"),
            std::string::npos)
      << records_only.err;
}

// The open-files refusal comes first thing: before the tokenizer, the simulator and the ready
// check, and before any output file is made.
TEST(RunLimits, OpenFilesRefusalComesBeforeSetUpAndLeavesNoRecordsFile) {
  TempDir dir;
  RunSpec spec;
  spec.args = {"run",       "--num-prompts",        "300", "--disable-tqdm",
               "--records", dir.path() + "/r.jsonl"};
  spec.open_files_limit = 80;
  Outcome refused = run(spec);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("servebench: --max-concurrency: up to 300 requests may be in flight"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out.find("Starting initial single prompt test run"), std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.err.find("started the embedded simulator"), std::string::npos) << refused.err;
  EXPECT_TRUE(dir.files().empty()) << dir.files().front();
}

}  // namespace
}  // namespace servebench::itest

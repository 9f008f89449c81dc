// `servebench suite` carried out (kinds.h): each test's spec run in order, in this process, then
// the suite's summary. vLLM's run-performance-benchmarks.sh runs its serving, latency and
// throughput tests one after another and summarizes them; so does this, resumable.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/interrupt.h"
#include "report/tables.h"
#include "run/kinds.h"
#include "run/names.h"
#include "run/output_files.h"
#include "run/sweep.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

// Runs one test in this process; its exit code as its command would give it.
int run_test(const SuiteTest& t) {
  try {
    return std::visit(
        [](const auto& spec) -> int {
          using Kind = std::decay_t<decltype(spec)>;
          if constexpr (std::is_same_v<Kind, LatencySpec>) {
            return execute_latency(spec);
          } else if constexpr (std::is_same_v<Kind, ThroughputSpec>) {
            return execute_throughput(spec);
          } else {
            Spec quiet = spec;  // the suite said the "no --temperature" warning once
            quiet.warn_no_temperature = false;
            return execute(quiet);
          }
        },
        t.spec);
  } catch (const core::Interrupted& e) {  // 130 or 143: the suite stops there
    std::fprintf(stderr, "servebench: %s: %s\n", t.name.c_str(),
                 core::redact_secrets(e.what()).c_str());
    return e.exit_code();
  } catch (const core::Error& e) {
    std::fprintf(stderr, "servebench: %s: %s\n", t.name.c_str(),
                 core::redact_secrets(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servebench: %s: internal error: %s\n", t.name.c_str(),
                 core::redact_secrets(e.what()).c_str());
    return 70;
  }
}

// A test that saves several results (a GuideLLM profile, inference-perf's stages) saves them in
// a directory of its own; this file in it says the test ran to its end.
constexpr const char* kDoneMarker = ".suite-test-complete";

bool complete_result(const std::string& path);

bool complete_directory(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / kDoneMarker, ec)) return false;
  bool any = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    if (!complete_result(entry.path().string())) return false;
    any = true;
  }
  return any && !ec;
}

// A result file a finished, uninterrupted run wrote (a killed run leaves none or a torn one).
bool complete_result(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return complete_directory(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) return false;
  // `servebench latency` and `throughput` write their JSON only when they finished.
  if (j.contains("avg_latency") || j.contains("elapsed_time")) return true;
  if (!j.contains("completed") || !j.contains("duration")) return false;
  const nlohmann::json* client = nullptr;
  if (j.contains("servebench") && j["servebench"].is_object() &&
      j["servebench"].contains("client")) {
    client = &j["servebench"]["client"];
  }
  return !(client && client->is_object() && client->value("interrupted", false));
}

// The result files a test wrote: `<name>.json` (a directory of them for a test that saves
// several, see kDoneMarker), or, when it benchmarked several targets at once
// (a deployment with several frontends, `--base-url A,B`), one per target: `<name>-target1.json`,
// `<name>-target2.json`, … (targets.cpp names them so).
std::vector<std::string> result_files(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) return {path};
  std::vector<std::string> files;
  const fs::path p(path);
  for (int i = 1;; ++i) {
    const fs::path target =
        p.parent_path() / (p.stem().string() + "-target" + std::to_string(i) + ".json");
    if (!fs::exists(target, ec)) break;
    files.push_back(target.string());
  }
  return files;
}

// Every result file of the test is complete (and there is at least one).
bool complete_results(const std::string& path) {
  const std::vector<std::string> files = result_files(path);
  return !files.empty() && std::all_of(files.begin(), files.end(), complete_result);
}

// The "no --temperature" warning once for the suite, naming how many serving tests give none,
// instead of once per test.
void warn_no_temperature_once(const std::vector<SuiteTest>& tests) {
  size_t without = 0;
  std::string first;
  for (const SuiteTest& t : tests) {
    const Spec* spec = std::get_if<Spec>(&t.spec);
    if (spec == nullptr || spec->temperature_given) continue;
    if (without++ == 0) first = t.name;
  }
  if (without == 0) return;
  const std::string what = "no temperature given in " + std::to_string(without) + " of " +
                           std::to_string(tests.size()) + " tests (the first: " + first + ")";
  std::printf("%s\n", no_temperature_warning(what).c_str());
}

struct Status {
  std::string name, state;  // ok, skipped (already done), failed, interrupted, not run
  int exit_code = 0;
};

void write_summary(const SuiteSpec& suite, const std::vector<Status>& statuses) {
  const std::vector<SuiteTest>& tests = suite.tests;
  const std::string& dir = suite.dir;
  std::vector<report::RunResult> runs;
  std::string failures;
  nlohmann::json status_lines = nlohmann::json::array();
  for (size_t i = 0; i < tests.size(); ++i) {
    const Status& s = statuses[i];
    const std::string& path = tests[i].result_path;
    if (s.state == "ok" || s.state == "skipped") {
      for (const std::string& file : result_files(path)) {
        std::error_code ec;
        if (fs::is_directory(file, ec)) {
          for (report::RunResult& r : report::load_runs(file)) runs.push_back(std::move(r));
        } else {
          runs.push_back(report::load_run(file));
        }
      }
    }
    if (s.state == "failed") {
      failures += "- " + s.name + ": exit code " + std::to_string(s.exit_code) + "\n";
    }
    status_lines.push_back(
        {{"test_name", s.name}, {"status", s.state}, {"exit_code", s.exit_code}, {"result", path}});
  }
  std::string md = report::vllm_suite_markdown(runs, report::MarkdownStyle::kAligned);
  if (!failures.empty()) md += "\nFailed tests:\n\n" + failures;
  write_text((fs::path(dir) / "summary.md").string(), md);
  write_text((fs::path(dir) / "summary.json").string(), report::vllm_pandas_json(runs));
  std::string jsonl;
  for (const auto& line : status_lines) jsonl += line.dump() + "\n";
  write_text((fs::path(dir) / "suite_status.jsonl").string(), jsonl);
  std::printf("\nSuite %s: %zu tests\n\n", suite.file.c_str(), tests.size());
  write_text("", md);
}

}  // namespace

int execute_suite(const SuiteSpec& suite) {
  const std::vector<SuiteTest>& tests = suite.tests;
  const std::string& dir = suite.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw core::Error(core::ErrorKind::kInput, "--output-dir",
                      "cannot create '" + dir + "': " + ec.message());
  }
  // The suite's directory is its own: another live suite writing there is refused now.
  hold_output((fs::path(dir) / "summary.json").string(), "--output-dir");
  std::vector<Status> statuses;
  for (const auto& t : tests) statuses.push_back({t.name, "not run", 0});
  warn_no_temperature_once(tests);
  int result = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const SuiteTest& t = tests[i];
    Status& s = statuses[i];
    if (core::interrupted()) {  // SIGINT/SIGTERM after the test before ended: stop here
      result = core::interrupt_exit_code();
      std::fprintf(stderr,
                   "servebench: suite: interrupted before %s (%s); --resume continues there\n",
                   t.name.c_str(), core::interrupt_name());
      break;
    }
    if (suite.resume && complete_results(t.result_path)) {
      std::fprintf(stderr, "servebench: suite: [%zu/%zu] %s: result exists, skipped (--resume)\n",
                   i + 1, tests.size(), t.name.c_str());
      s.state = "skipped";
      continue;
    }
    // A directory of results is the test's own: what an earlier, unfinished run left goes.
    const bool many = t.result_is_directory;
    if (many) {
      std::error_code rm;
      fs::remove_all(t.result_path, rm);
    }
    std::printf("Running test case %s [%zu/%zu]\nClient command: %s\n", t.name.c_str(), i + 1,
                tests.size(), t.command_line.c_str());
    std::fflush(stdout);
    s.exit_code = run_test(t);
    std::fflush(stdout);
    if (many && s.exit_code == 0) write_text((fs::path(t.result_path) / kDoneMarker).string(), "");
    if (s.exit_code != 0 && s.exit_code == core::interrupt_exit_code()) {
      // SIGINT (130) or SIGTERM (143): the interrupted test is not part of the suite; --resume
      // starts again there.
      std::error_code rm;
      for (const std::string& file : result_files(t.result_path)) fs::remove_all(file, rm);
      s.state = "interrupted";
      result = s.exit_code;
      std::fprintf(stderr, "servebench: suite: interrupted at %s (%s); --resume continues there\n",
                   t.name.c_str(), core::interrupt_name());
      break;
    }
    if (s.exit_code == 0 && complete_results(t.result_path)) {
      s.state = "ok";
    } else {
      s.state = "failed";
      if (s.exit_code == 0) s.exit_code = 1;  // finished without a usable result
      result = 1;
      std::fprintf(stderr, "servebench: suite: %s failed (exit code %d); going on\n",
                   t.name.c_str(), s.exit_code);
    }
  }
  write_summary(suite, statuses);
  return result;
}

}  // namespace servebench::run

// `servebench suite FILE`: runs the expanded tests of a suite file (suite.h) in order, each
// through the same flag parser and execute path as `servebench run` (a fresh CLI11 app per test,
// in this process), then writes the suite's summary. Every test's flags are checked before the
// first one runs, so a mistake in the file costs nothing. A test that fails is recorded and the
// suite goes on; Ctrl-C ends the suite after the test it interrupts; --resume skips tests whose
// result file is complete.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/report_io.h"
#include "cli/suite.h"
#include "core/error.h"
#include "report/tables.h"

namespace servebench::cli {
namespace {

namespace fs = std::filesystem;

struct SuiteOptions {
  std::vector<std::string> files;  // vLLM keeps latency, throughput and serving tests apart
  std::string file;                // the first, which names the default output directory
  std::string output_dir;
  bool resume = false, dry_run = false;
};

// A fresh parser of the test's command (`servebench run`, `latency` or `throughput`) given its
// arguments; returns its action.
Action parse_run(const std::vector<std::string>& args, bool check_only, CLI::App& app) {
  app.require_subcommand(1);
  Action action = args.front() == "latency"      ? add_latency_command(app, check_only)
                  : args.front() == "throughput" ? add_throughput_command(app, check_only)
                                                 : add_run_command(app, check_only);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  app.parse(reversed);
  return action;
}

// Validates a test's flags without running it; a bad value is reported at its key in the file.
void check(const std::string& file, const suite::Test& t, const std::string& dir) {
  std::string where = t.where + " (" + t.name + ")";
  try {
    CLI::App app;
    Action action = parse_run(suite::full_run_args(t, dir), true, app);
    action();
  } catch (const CLI::ParseError& e) {
    throw core::Error(core::ErrorKind::kInput, file, where + ": " + e.what());
  } catch (const core::Error& e) {
    std::string message = e.what();
    auto origin = t.flag_origin.find(e.where());
    if (origin == t.flag_origin.end()) {
      throw core::Error(core::ErrorKind::kInput, file, where + ": " + message);
    }
    if (message.rfind(e.where() + ": ", 0) == 0) message.erase(0, e.where().size() + 2);
    throw core::Error(core::ErrorKind::kInput, file, origin->second + ": " + message);
  }
}

// Runs one test in this process; its exit code as `servebench run` would give it.
int run_test(const suite::Test& t, const std::string& dir) {
  try {
    CLI::App app;
    Action action = parse_run(suite::full_run_args(t, dir), false, app);
    return action();
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "servebench: %s: %s\n", t.name.c_str(), e.what());
    return 2;
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

// A result file a finished, uninterrupted run wrote (a killed run leaves none or a torn one).
bool complete_result(const std::string& path) {
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

struct Status {
  std::string name, state;  // ok, skipped (already done), failed, interrupted, not run
  int exit_code = 0;
};

void write_summary(const std::vector<suite::Test>& tests, const std::vector<Status>& statuses,
                   const std::string& dir, const std::string& file) {
  std::vector<report::RunResult> runs;
  std::string failures;
  nlohmann::json status_lines = nlohmann::json::array();
  for (size_t i = 0; i < tests.size(); ++i) {
    const Status& s = statuses[i];
    std::string path = suite::result_path(tests[i], dir);
    if (s.state == "ok" || s.state == "skipped") runs.push_back(report::load_run(path));
    if (s.state == "failed") {
      failures += "- " + s.name + ": exit code " + std::to_string(s.exit_code) + "\n";
    }
    status_lines.push_back(
        {{"test_name", s.name}, {"status", s.state}, {"exit_code", s.exit_code}, {"result", path}});
  }
  std::string md = report::vllm_suite_markdown(runs, report::MarkdownStyle::kAligned);
  if (!failures.empty()) md += "\nFailed tests:\n\n" + failures;
  write_report((fs::path(dir) / "summary.md").string(), md);
  write_report((fs::path(dir) / "summary.json").string(), report::vllm_pandas_json(runs));
  std::string jsonl;
  for (const auto& line : status_lines) jsonl += line.dump() + "\n";
  write_report((fs::path(dir) / "suite_status.jsonl").string(), jsonl);
  std::printf("\nSuite %s: %zu tests\n\n", file.c_str(), tests.size());
  write_report("", md);
}

int run_suite(SuiteOptions o) {
  o.file = o.files.front();
  std::vector<suite::Test> tests;
  std::vector<std::string> test_files;  // the file each test came from, for messages
  for (const std::string& file : o.files) {
    for (suite::Test& t : suite::load(file)) {
      for (size_t i = 0; i < tests.size(); ++i) {
        if (tests[i].name == t.name) {
          throw core::Error(core::ErrorKind::kInput, file,
                            t.where + ": test name '" + t.name + "' is also made by " +
                                test_files[i] + " " + tests[i].where);
        }
      }
      tests.push_back(std::move(t));
      test_files.push_back(file);
    }
  }
  std::string dir =
      o.output_dir.empty() ? fs::path(o.file).stem().string() + "-results" : o.output_dir;
  for (size_t i = 0; i < tests.size(); ++i) check(test_files[i], tests[i], dir);
  if (o.dry_run) {
    for (const auto& t : tests) {
      std::printf("%s: %s\n", t.name.c_str(),
                  suite::command_line(suite::full_run_args(t, dir)).c_str());
    }
    return 0;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw core::Error(core::ErrorKind::kInput, "--output-dir",
                      "cannot create '" + dir + "': " + ec.message());
  }
  std::vector<Status> statuses;
  for (const auto& t : tests) statuses.push_back({t.name, "not run", 0});
  int result = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const suite::Test& t = tests[i];
    Status& s = statuses[i];
    if (o.resume && complete_result(suite::result_path(t, dir))) {
      std::fprintf(stderr, "servebench: suite: [%zu/%zu] %s: result exists, skipped (--resume)\n",
                   i + 1, tests.size(), t.name.c_str());
      s.state = "skipped";
      continue;
    }
    std::printf("Running test case %s [%zu/%zu]\nClient command: %s\n", t.name.c_str(), i + 1,
                tests.size(), suite::command_line(suite::full_run_args(t, dir)).c_str());
    std::fflush(stdout);
    s.exit_code = run_test(t, dir);
    std::fflush(stdout);
    if (s.exit_code == 130) {
      // Ctrl-C: the interrupted test is not part of the suite; --resume starts again there.
      std::error_code rm;
      fs::remove(suite::result_path(t, dir), rm);
      s.state = "interrupted";
      result = 130;
      std::fprintf(stderr, "servebench: suite: interrupted at %s; --resume continues there\n",
                   t.name.c_str());
      break;
    }
    if (s.exit_code == 0 && complete_result(suite::result_path(t, dir))) {
      s.state = "ok";
    } else {
      s.state = "failed";
      if (s.exit_code == 0) s.exit_code = 1;  // finished without a usable result
      result = 1;
      std::fprintf(stderr, "servebench: suite: %s failed (exit code %d); going on\n",
                   t.name.c_str(), s.exit_code);
    }
  }
  write_summary(tests, statuses, dir, o.file);
  return result;
}

}  // namespace

Action add_suite_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "suite",
      "Run suite files (YAML or JSON) of named serving, latency and throughput tests in order, "
      "expanding qps_list and max_concurrency_list as vLLM's performance suite does; one "
      "result per test and a summary (docs/run.md, Suites).");
  auto o = std::make_shared<SuiteOptions>();
  sub->add_option("files", o->files,
                  "the suite files, run in order (e.g. vLLM's latency-tests.json "
                  "throughput-tests.json serving-tests.json)")
      ->required();
  sub->add_option("--output-dir", o->output_dir,
                  "where results and the summary go [default: <file stem>-results]");
  sub->add_flag("--resume", o->resume, "skip tests whose result file is already complete");
  sub->add_flag("--dry-run", o->dry_run,
                "check every test and print its `servebench run` command; run nothing");
  return [o]() -> int { return run_suite(*o); };
}

}  // namespace servebench::cli

// `servebench suite FILE`: the expanded tests of suite files (suite.h), each test's flags turned
// into its kind's spec by the same flag parsers as `servebench run`, `latency` and `throughput`,
// all before the first runs (a mistake in the file costs nothing); the run part then runs them
// in order and writes the summary (run/kinds.h: execute_suite).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/run_flags.h"
#include "cli/suite.h"
#include "core/error.h"
#include "run/kinds.h"

namespace servebench::cli {
namespace {

namespace fs = std::filesystem;

struct SuiteOptions {
  std::vector<std::string> files;  // vLLM keeps latency, throughput and serving tests apart
  std::string file;                // the first, which names the default output directory
  std::string output_dir;
  bool resume = false, dry_run = false;
};

// The test's spec: its command's flags (`servebench run`, `latency` or `throughput`) parsed and
// checked, creating nothing; a bad value is reported at its key in the file.
run::SuiteTest suite_test(const std::string& file, const suite::Test& t, const std::string& dir) {
  std::string where = t.where + " (" + t.name + ")";
  const std::vector<std::string> args = suite::full_run_args(t, dir);
  try {
    CLI::App app;
    app.require_subcommand(1);
    std::function<run::SuiteTest()> make_test;
    auto as_test = [&](auto make_spec) {
      make_test = [&t, &args, &dir, make_spec] {
        return run::SuiteTest{t.name, suite::command_line(args), suite::result_path(t, dir),
                              suite::saves_many(t), make_spec()};
      };
    };
    if (args.front() == "latency") {
      as_test(add_latency_flags(app, true));
    } else if (args.front() == "throughput") {
      as_test(add_throughput_flags(app, true));
    } else {
      as_test(add_run_flags(app));
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
    return make_test();
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
  run::SuiteSpec suite;
  suite.file = o.file;
  suite.dir = o.output_dir.empty() ? fs::path(o.file).stem().string() + "-results" : o.output_dir;
  suite.resume = o.resume;
  for (size_t i = 0; i < tests.size(); ++i)
    suite.tests.push_back(suite_test(test_files[i], tests[i], suite.dir));
  if (o.dry_run) {
    for (const run::SuiteTest& t : suite.tests)
      std::printf("%s: %s\n", t.name.c_str(), t.command_line.c_str());
    return 0;
  }
  return run::execute_suite(suite);
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

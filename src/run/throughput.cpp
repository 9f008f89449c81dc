// vLLM's `bench throughput` (vllm/benchmarks/throughput.py) against a server (kinds.h). vLLM
// hands all --num-prompts prompts to its offline engine at once and reports elapsed_time,
// num_requests, total_num_tokens (prompt + output), requests_per_second and tokens_per_second.
// Here the prompts are sent at once (request rate inf) by one run; elapsed_time is the run's
// duration.
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "run/kind_runs.h"
#include "run/kinds.h"

namespace servebench::run {

namespace fs = std::filesystem;

int execute_throughput(const ThroughputSpec& spec) {
  const std::string& dir = spec.run.result_dir;
  const std::string& file = spec.run.result_filename;
  const bool keep = !spec.output_json.empty();
  if (!spec.output_json.empty()) check_output_json(spec.output_json, dir, false);
  const RunsDirCleanup cleanup(dir, keep);
  const int code = execute_muted(spec.run);
  if (code != 0) return code;
  const std::string path = (fs::path(dir) / file).string();
  const nlohmann::json r = read_result(path);
  const double elapsed = r["duration"].get<double>();
  const int64_t completed = r.value("completed", int64_t{0});
  const int64_t failed = r.value("failed", int64_t{0});
  const int64_t input_tokens = r.value("total_input_tokens", int64_t{0});
  const int64_t output_tokens = r.value("total_output_tokens", int64_t{0});
  const int64_t total_tokens = input_tokens + output_tokens;
  auto per_s = [&](double x) { return elapsed > 0 ? x / elapsed : 0.0; };
  if (failed > 0) {
    const std::string more = show_failures(records_path(dir, file), "Failed requests", keep);
    std::fprintf(stderr,
                 "servebench: warning: %lld of %lld requests failed; the figures count the %lld "
                 "that completed%s\n",
                 static_cast<long long>(failed), static_cast<long long>(completed + failed),
                 static_cast<long long>(completed), more.c_str());
  }
  // throughput.py's lines.
  std::printf("Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s\n",
              per_s(static_cast<double>(completed)), per_s(static_cast<double>(total_tokens)),
              per_s(static_cast<double>(output_tokens)));
  std::printf("Total num prompt tokens:  %lld\n", static_cast<long long>(input_tokens));
  std::printf("Total num output tokens:  %lld\n", static_cast<long long>(output_tokens));
  std::fflush(stdout);
  if (!keep) return 0;
  nlohmann::json result = {{"elapsed_time", elapsed},
                           {"num_requests", completed},
                           {"total_num_tokens", total_tokens},
                           {"requests_per_second", per_s(static_cast<double>(completed))},
                           {"tokens_per_second", per_s(static_cast<double>(total_tokens))}};
  add_metadata(result, spec.metadata);
  result["servebench"] = {
      {"kind", "throughput"},
      {"failed", failed},
      {"total_input_tokens", input_tokens},
      {"total_output_tokens", output_tokens},
      {"output_tokens_per_second", per_s(static_cast<double>(output_tokens))},
      {"definition",
       "every prompt sent at once to the server; elapsed_time = first send to last response; "
       "num_requests counts completed requests"},
      {"result", path}};
  write_json(spec.output_json, result, "--output-json");
  return 0;
}

}  // namespace servebench::run

// `servebench run --server-metrics`: the simulator's /metrics scraped around the main run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

std::vector<std::string> base_run(const std::string& dir) {
  return {"run",
          "--num-prompts",
          "40",
          "--random-input-len",
          "32",
          "--random-output-len",
          "16",
          "--request-rate",
          "200",
          "--sim-ttft-ms",
          "5",
          "--sim-itl-ms",
          "1",
          "--save-result",
          "--result-dir",
          dir,
          "--disable-tqdm"};
}

json only_result(const TempDir& dir) {
  for (const std::string& name : dir.files()) {
    if (name.size() > 5 && name.ends_with(".json"))
      return json::parse(read_file(dir.path() + "/" + name));
  }
  return nullptr;
}

const json& family(const json& result, const std::string& name) {
  return result["servebench"]["server_metrics"]["endpoints"][0]["metrics"][name];
}

TEST(RunServerMetrics, CountersOverTheRunMatchTheClientsTotals) {
  TempDir dir;
  std::vector<std::string> args = base_run(dir.path());
  args.insert(args.end(), {"--server-metrics-interval", "0.05"});
  Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("============ Server metrics (scraped) ============"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("Generation tokens, increase:             640 ("), std::string::npos)
      << o.out;
  const json r = only_result(dir);
  ASSERT_TRUE(r.is_object());
  const json& endpoint = r["servebench"]["server_metrics"]["endpoints"][0];
  EXPECT_EQ(endpoint["failures"], 0) << endpoint["first_error"];
  EXPECT_GE(endpoint["scrapes"].get<int>(), 2);  // the baseline and the end, at least
  EXPECT_EQ(r["servebench"]["server_metrics"]["interval_s"], 0.05);
  // The baseline is taken after the ready check and before the first request, the last scrape
  // after the last one ended: the server's counters rose by exactly what the client measured.
  EXPECT_EQ(family(r, "vllm:generation_tokens")["type"], "counter");
  EXPECT_EQ(family(r, "vllm:generation_tokens")["series"][0]["increase"],
            r["total_output_tokens"].get<double>());
  EXPECT_EQ(family(r, "vllm:prompt_tokens")["series"][0]["increase"],
            r["total_input_tokens"].get<double>());
  const json& ttft = family(r, "vllm:time_to_first_token_seconds");
  EXPECT_EQ(ttft["type"], "histogram");
  EXPECT_EQ(ttft["series"][0]["count"], 40);
  // TTFT 5 ms in the simulator: the estimate lies in vLLM's bucket (0.005, 0.01].
  EXPECT_GT(ttft["series"][0]["p50"].get<double>(), 0.001);
  EXPECT_LE(ttft["series"][0]["p50"].get<double>(), 0.01);
  EXPECT_EQ(family(r, "vllm:num_requests_running")["type"], "gauge");
  // The flat headline says the same, and `compare` reads it by its dotted key.
  const json& headline = r["servebench"]["server_metrics"]["headline"];
  EXPECT_EQ(headline["generation_tokens"], r["total_output_tokens"].get<double>());
  EXPECT_GE(headline["running_requests_max"].get<double>(), 0.0);
  Outcome compared = run({"compare", dir.path(), dir.path(), "--format", "csv", "--metrics",
                          "servebench.server_metrics.headline.generation_tokens"});
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("640"), std::string::npos) << compared.out;
  EXPECT_FALSE(family(r, "vllm:num_requests_running")["series"][0].contains("timeseries"));
}

TEST(RunServerMetrics, DetailedResultsCarryTimeSeriesFromT0) {
  TempDir dir;
  std::vector<std::string> args = base_run(dir.path());
  args.push_back("--save-detailed");
  Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json r = only_result(dir);
  const json& series = family(r, "vllm:generation_tokens")["series"][0]["timeseries"];
  ASSERT_GE(series.size(), 2u);
  EXPECT_LE(series[0][0].get<double>(), 0.0);  // the baseline, just before t0
  EXPECT_GT(series.back()[0].get<double>(), 0.0);
  EXPECT_EQ(series.back()[1].get<double>() - series[0][1].get<double>(),
            r["total_output_tokens"].get<double>());
}

TEST(RunServerMetrics, OffLeavesThemOut) {
  TempDir dir;
  std::vector<std::string> args = base_run(dir.path());
  args.insert(args.end(), {"--server-metrics", "off"});
  Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("Server metrics"), std::string::npos);
  EXPECT_FALSE(only_result(dir)["servebench"].contains("server_metrics"));
}

TEST(RunServerMetrics, BadValuesAndUnreachableUrlsAreOneLineErrors) {
  TempDir dir;
  std::vector<std::string> args = base_run(dir.path());
  args.insert(args.end(), {"--server-metrics", "localhost:9/metrics"});
  Outcome bad = run(args);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--server-metrics: expected auto, off or http(s):// URLs, got "
                         "'localhost:9/metrics'"),
            std::string::npos)
      << bad.err;

  const std::string url = "http://127.0.0.1:" + std::to_string(free_port()) + "/metrics";
  args = base_run(dir.path());
  args.insert(args.end(), {"--server-metrics", "http://user:hunter2@" + url.substr(7)});
  Outcome down = run(args);
  EXPECT_EQ(down.exit_code, 4) << down.out << down.err;
  EXPECT_NE(down.err.find("--server-metrics: GET " + url + ": could not scrape"), std::string::npos)
      << down.err;
  EXPECT_EQ(down.err.find("hunter2"), std::string::npos);
  EXPECT_EQ(down.out.find("Serving Benchmark Result"), std::string::npos);

  args = base_run(dir.path());
  args.insert(args.end(), {"--server-metrics-interval", "0"});
  Outcome interval = run(args);
  EXPECT_EQ(interval.exit_code, 2);
  EXPECT_NE(interval.err.find("--server-metrics-interval"), std::string::npos) << interval.err;
}

}  // namespace
}  // namespace servebench::itest

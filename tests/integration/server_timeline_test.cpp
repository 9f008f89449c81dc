// Every result keeps the server's series over time compactly (no --save-detailed needed), and
// `servebench report --chart timeline` draws its server panels from them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

TEST(ServerTimeline, KeptWithoutSaveDetailedAndDrawnByReport) {
  TempDir dir;
  Outcome o = run({"run", "--num-prompts", "60", "--random-input-len", "32", "--random-output-len",
                   "16", "--request-rate", "40", "--sim-ttft-ms", "5", "--sim-itl-ms", "2",
                   "--server-metrics-interval", "0.05", "--save-result", "--result-dir", dir.path(),
                   "--disable-tqdm"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  std::string result_name;
  for (const std::string& name : dir.files())
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") result_name = name;
  ASSERT_FALSE(result_name.empty());
  const json r = json::parse(read_file(dir.path() + "/" + result_name));
  const json& ours = r["servebench"];
  // The records beside the result are named by their bare name.
  EXPECT_EQ(ours["records_file"].get<std::string>().find('/'), std::string::npos)
      << ours["records_file"];
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(ours["client"]["t0_unix_s"].get<double>(), now_s, 120);

  const json& endpoint = ours["server_metrics"]["endpoints"].at(0);
  EXPECT_FALSE(endpoint.dump().find("\"timeseries\"") != std::string::npos);  // not detailed
  const json& timeline = endpoint["timeline"];
  const size_t scrapes = timeline["t_s"].size();
  EXPECT_GE(scrapes, 3u);
  EXPECT_EQ(scrapes, endpoint["scrapes"].get<size_t>());
  for (const char* family : {"vllm:num_requests_running", "vllm:num_requests_waiting"}) {
    ASSERT_TRUE(timeline.contains(family)) << timeline.dump();
    for (const auto& [labels, values] : timeline[family].items())
      EXPECT_EQ(values.size(), scrapes) << family << " " << labels;
  }
  double most_running = 0;
  for (const auto& [labels, values] : timeline["vllm:num_requests_running"].items())
    for (const json& v : values)
      most_running = std::max(most_running, v.is_number() ? v.get<double>() : 0);
  EXPECT_GT(most_running, 0);  // requests were seen running at some scrape

  const std::string png = dir.path() + "/timeline.png";
  Outcome chart = run({"report", dir.path(), "--chart", "timeline", "--output", png});
  ASSERT_EQ(chart.exit_code, 0) << chart.out << chart.err;
  EXPECT_EQ(read_file(png).substr(1, 3), "PNG");
  if (const char* keep = std::getenv("SERVEBENCH_KEEP_TIMELINE_PNG"))  // to look at it
    std::filesystem::copy_file(png, keep, std::filesystem::copy_options::overwrite_existing);
  Outcome html = run({"report", dir.path(), "--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("id=\"timeline-server-running\""), std::string::npos);
  EXPECT_NE(html.out.find("id=\"timeline-server-generation-tokens\""), std::string::npos);
}

}  // namespace
}  // namespace servebench::itest

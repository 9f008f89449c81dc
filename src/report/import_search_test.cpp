// Issue 19, defect 8: `report` and `compare` refused servebench's own `run --search-slo` output
// ("search.json: not a result"). testdata/search/ is a real search's output (the simulator in
// engine mode, llama-3.1-70b-h100-tp8, 60 prompts of 4096 tokens, --search-slo ttft:300,tpot:60
// from rate 8, five probes), its records files left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "report/tables.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

namespace fs = std::filesystem;
using namespace test_support;

TEST(SearchSummary, ReadAsItsProbesEachWithItsProbe) {
  const std::vector<RunResult> runs = load_runs(testdata_path("search/search.json"));
  ASSERT_EQ(runs.size(), 5u);
  const double loads[] = {8, 4, 2, 1, 1.5};  // in the order probed
  const bool met[] = {false, false, false, true, false};
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& s = runs[i].result["servebench"]["search"];
    EXPECT_EQ(s["probe"], i + 1);
    EXPECT_DOUBLE_EQ(s["load"].get<double>(), loads[i]);
    EXPECT_EQ(s["met"], met[i]) << i;
    EXPECT_EQ(s["sent"], 60);
    EXPECT_DOUBLE_EQ(*figure(runs[i], "request_rate"), loads[i]);
    EXPECT_EQ(runs[i].kind, "serving");
  }
}

TEST(SearchSummary, DirectoryGivesEachProbeOnce) {
  EXPECT_EQ(load_runs(testdata_path("search")).size(), 5u);
}

TEST(SearchSummary, SuiteMarkdownEndsWithTheProbeTableAndTheAnswer) {
  const std::vector<RunResult> runs = load_runs(testdata_path("search/search.json"));
  const std::string md = vllm_suite_markdown(runs, MarkdownStyle::kTabulate);
  const size_t table = md.find("## SLO search (");
  ASSERT_NE(table, std::string::npos) << md;
  EXPECT_NE(md.find("SLOs: TPOT <= 60 ms, TTFT <= 300 ms for at least 90% of requests"), table)
      << md;
  EXPECT_NE(md.find("| Request rate (req/s) | Sent | Within SLOs | Attainment (%) | P99 TPOT (ms), "
                    "SLO 60 | P99 TTFT (ms), SLO 300 | Meets |"),
            std::string::npos)
      << md;
  // By load: 1.0 meets, 1.5 misses.
  const size_t one = md.find("\n| 1.0 | 60 | 55 | 91.7 |");
  const size_t one_half = md.find("\n| 1.5 | 60 |");
  ASSERT_NE(one, std::string::npos) << md;
  ASSERT_NE(one_half, std::string::npos) << md;
  EXPECT_LT(one, one_half);
  EXPECT_NE(md.find("| yes |", one), std::string::npos);
  EXPECT_LT(md.find("| yes |", one), one_half);
  EXPECT_NE(md.find("Answer: highest request rate meeting the SLOs: 1.0 (1.5 misses)"),
            std::string::npos)
      << md;
}

TEST(SearchSummary, ComparedWithAnotherSearch) {
  std::vector<CompareInput> inputs = {{"a", load_runs(testdata_path("search/search.json"))},
                                      {"b", load_runs(testdata_path("search"))}};
  const std::string md =
      compare_runs(inputs, {"request_goodput"}, CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_NE(md.find("search-rate-1.0"), std::string::npos) << md;
}

TEST(SearchSummary, MissingProbeFileNamesIt) {
  const fs::path dir = fs::temp_directory_path() / "servebench_search_missing_probe";
  fs::create_directories(dir);
  std::ofstream(dir / "search.json")
      << R"({"searched":"request_rate","slo_ms":{"ttft":1},"attainment_required":0.9,)"
         R"("probes":[{"load":1.0,"good":1,"sent":1,"attainment":1.0,"met":true,)"
         R"("result":"./gone.json"}],"best":1.0,"lowest_miss":null})";
  try {
    load_runs((dir / "search.json").string());
    ADD_FAILURE() << "a probe file that is gone was read";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gone.json"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servebench::report

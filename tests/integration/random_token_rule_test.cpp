// `servebench run --dataset-name random --random-token-rule round-trip` with a real tokenizer
// against the embedded simulator: the simulator counts each prompt it receives with the full
// encoder, so its usage checks the rule's exact counts independently. Skipped when Llama 3's
// tokenizer.json (scripts/fetch-tokenizers.sh; $SERVEBENCH_TOKENIZER_DIR) is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

std::string llama3_file() {
  const char* env = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  const std::string dir = env && *env
                              ? std::string(env)
                              : std::string(SERVEBENCH_SOURCE_DIR) + "/build-deps/tokenizers";
  return dir + "/llama3/tokenizer.json";
}

TEST(RandomTokenRule, RoundTripWithARealTokenizerIsExactOnTheServerSide) {
  const std::string tokenizer = llama3_file();
  if (!std::filesystem::exists(tokenizer)) GTEST_SKIP() << tokenizer << " is absent";
  TempDir dir;
  const Outcome o = run({"run",
                         "--sim-ttft-ms",
                         "2",
                         "--sim-itl-ms",
                         "0.5",
                         "--disable-tqdm",
                         "--tokenizer",
                         tokenizer,
                         "--dataset-name",
                         "random",
                         "--random-token-rule",
                         "round-trip",
                         "--num-prompts",
                         "30",
                         "--random-input-len",
                         "200",
                         "--random-range-ratio",
                         "0.5",
                         "--random-prefix-len",
                         "16",
                         "--random-output-len",
                         "4",
                         "--seed",
                         "7",
                         "--save-result",
                         "--result-filename",
                         "r.json",
                         "--result-dir",
                         dir.path()},
                        90);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json result = json::parse(read_file(dir.path() + "/r.json"));
  EXPECT_EQ(result["completed"], 30);
  EXPECT_EQ(result["tokenizer_id"], tokenizer);
  EXPECT_EQ(result["servebench"]["dataset"]["token_rule"], "round-trip");
  int records = 0;
  for (const std::string& line : lines_of(read_file(dir.path() + "/r.records.jsonl"))) {
    if (line.empty()) continue;
    const json rec = json::parse(line);
    ++records;
    EXPECT_TRUE(rec["success"].get<bool>()) << rec.dump();
    const int prompt_tokens = rec["prompt_tokens"].get<int>();
    EXPECT_GE(prompt_tokens, 16 + 100);
    EXPECT_LE(prompt_tokens, 16 + 300);
    // The simulator re-encoded the text it received with Llama 3's full encoder.
    EXPECT_EQ(rec["server_prompt_tokens"], prompt_tokens) << rec.dump();
  }
  EXPECT_EQ(records, 30);
}

TEST(RandomTokenRule, DefaultIsVllmAndAnUnknownRuleIsAUsageError) {
  TempDir dir;
  const Outcome ok = run({"run", "--sim-ttft-ms", "1", "--sim-itl-ms", "0.2", "--disable-tqdm",
                          "--num-prompts", "3", "--random-input-len", "20", "--save-result",
                          "--result-filename", "r.json", "--result-dir", dir.path()},
                         60);
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const json result = json::parse(read_file(dir.path() + "/r.json"));
  EXPECT_EQ(result["servebench"]["dataset"]["token_rule"], "vllm");

  const Outcome bad = run({"run", "--num-prompts", "3", "--random-token-rule", "roundtrip"}, 60);
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--random-token-rule"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("round-trip"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace servebench::itest

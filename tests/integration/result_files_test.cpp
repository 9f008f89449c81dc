// A run's result file: whole, valid JSON whatever bytes its inputs held (docs/reliability.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace
}  // namespace servebench::itest

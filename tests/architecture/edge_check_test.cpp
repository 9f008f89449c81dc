// File: tests/architecture/edge_check_test.cpp
// The checker on small trees made here: a clean one passes, and each planted fault is found
// and named (a wrong include, an internal header, a DEPS the table does not allow, cycles).
#include "edge_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace fs = std::filesystem;
using servebench::edges::check_tree;
using servebench::edges::read_part_table;

namespace {

const char* kTable = R"(# Architecture

## Parts
| part | header | what it does | may use |
|---|---|---|---|
| `core` | `core/error.h` | errors | — |
| `record` | `record/record.h` | records | `core` |
| `sim/model` | `sim/model/timing.h` | timing | `core` |
| `sim` | `sim/sim.h` | server | `core`, `sim/model` |

## Next
text
)";

class PlantedTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("edge_check_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    write("docs/architecture.md", kTable);
    write("src/core/CMakeLists.txt", "servebench_add_part(core\n  SOURCES error.cpp)\n");
    write("src/core/error.h", "#pragma once\n");
    write("src/core/error.cpp", "#include \"core/error.h\"\n");
    write("src/record/CMakeLists.txt",
          "servebench_add_part(record\n  SOURCES record.cpp\n  DEPS core  # errors\n"
          "  TESTS record_test.cpp)\n");
    write("src/record/record.h", "#pragma once\n#include \"core/error.h\"\n");
    write("src/record/record.cpp", "#include \"record/record.h\"\n#include <vector>\n");
    write("src/record/record_test.cpp", "#include \"record/record.h\"\n");
    write("src/sim/model/CMakeLists.txt",
          "servebench_add_part(sim_model\n  SOURCES timing.cpp\n  DEPS core)\n");
    write("src/sim/model/timing.h", "#pragma once\n");
    write("src/sim/model/steps.h", "#pragma once\n#include \"timing.h\"\n");
    write("src/sim/model/timing.cpp", "#include \"sim/model/steps.h\"\n");
    write("src/sim/CMakeLists.txt",
          "servebench_add_part(sim\n  SOURCES server.cpp\n  DEPS core sim_model\n"
          "  TESTS server_test.cpp\n  TEST_LIBS servebench_record nlohmann_json::nlohmann_json)\n");
    write("src/sim/sim.h", "#pragma once\n#include \"sim/model/timing.h\"\n");
    write("src/sim/front.h", "#pragma once\n#include \"sim/sim.h\"\n");
    write("src/sim/server.cpp", "#include \"front.h\"\n#include \"core/error.h\"\n");
    write("src/sim/server_test.cpp", "#include \"record/record.h\"\n#include \"sim/sim.h\"\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string violations() {
    std::string text;
    for (const auto& v : check_tree(root_)) text += v + "\n";
    return text;
  }

  fs::path root_;
};

TEST_F(PlantedTree, CleanTreePasses) {
  EXPECT_EQ(violations(), "");
}

TEST_F(PlantedTree, ReadsTheTable) {
  const auto parts = read_part_table(root_ / "docs/architecture.md");
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_TRUE(parts.at("core").may_use.empty());
  EXPECT_EQ(parts.at("sim").may_use, (std::set<std::string>{"core", "sim/model"}));
  EXPECT_EQ(parts.at("sim/model").public_headers, (std::set<std::string>{"sim/model/timing.h"}));
}

TEST_F(PlantedTree, IncludeOfAPartNotInDeps) {
  write("src/record/record.cpp", "#include \"record/record.h\"\n#include \"sim/sim.h\"\n");
  EXPECT_EQ(violations(),
            "src/record/record.cpp:2: includes \"sim/sim.h\" but part record does not name sim "
            "in DEPS (src/record/CMakeLists.txt)\n");
}

TEST_F(PlantedTree, TestOnlyPartIsNotForTheLibrary) {
  write("src/sim/server.cpp", "#include \"record/record.h\"\n");
  EXPECT_EQ(violations(),
            "src/sim/server.cpp:1: includes \"record/record.h\" but part sim does not name "
            "record in DEPS (src/sim/CMakeLists.txt)\n");
}

TEST_F(PlantedTree, InternalHeaderOfAnotherPart) {
  write("src/sim/server.cpp", "#include \"sim/model/steps.h\"\n");
  EXPECT_EQ(violations(),
            "src/sim/server.cpp:1: includes \"sim/model/steps.h\", an internal header of "
            "sim/model (its public headers: sim/model/timing.h)\n");
}

TEST_F(PlantedTree, DepsTheTableDoesNotAllow) {
  write("src/record/CMakeLists.txt",
        "servebench_add_part(record\n  SOURCES record.cpp\n  DEPS core sim_model)\n");
  EXPECT_EQ(violations(),
            "src/record/CMakeLists.txt: DEPS names sim/model, which the table in "
            "docs/architecture.md does not allow record (may use: core)\n");
}

TEST_F(PlantedTree, TableEdgeMissingFromDeps) {
  write("src/sim/CMakeLists.txt", "servebench_add_part(sim\n  SOURCES server.cpp\n  DEPS core)\n");
  const auto text = violations();
  EXPECT_NE(text.find("docs/architecture.md: the table lets sim use sim/model, which "
                      "src/sim/CMakeLists.txt does not name in DEPS"),
            std::string::npos)
      << text;
}

TEST_F(PlantedTree, PartGraphCycle) {
  write("docs/architecture.md",
        std::string(kTable).replace(
            std::string(kTable).find("| `core` | `core/error.h` | errors | — |"),
            std::string("| `core` | `core/error.h` | errors | — |").size(),
            "| `core` | `core/error.h` | errors | `record` |"));
  write("src/core/CMakeLists.txt",
        "servebench_add_part(core\n  SOURCES error.cpp\n  DEPS record)\n");
  EXPECT_EQ(violations(), "the part graph has a cycle: core → record → core\n");
}

TEST_F(PlantedTree, IncludeCycleBetweenFiles) {
  write("src/sim/sim.h", "#pragma once\n#include \"sim/model/timing.h\"\n#include \"front.h\"\n");
  EXPECT_EQ(violations(),
            "an include cycle between files: sim/front.h → sim/sim.h → sim/front.h\n");
}

TEST_F(PlantedTree, FolderMissingFromTable) {
  write("src/extra/CMakeLists.txt", "servebench_add_part(extra\n  SOURCES x.cpp)\n");
  const auto text = violations();
  EXPECT_NE(text.find("part extra is not in the table of"), std::string::npos) << text;
}

TEST_F(PlantedTree, MissingTableIsAnError) {
  write("docs/architecture.md", "# Architecture\n\nno table\n");
  EXPECT_THROW(check_tree(root_), std::runtime_error);
}

}  // namespace

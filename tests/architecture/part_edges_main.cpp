// File: tests/architecture/part_edges_main.cpp
// The `part_edges` CTest: checks the source tree it is given (the repository by default)
// against docs/architecture.md's part table and prints every violation, one a line.
#include <cstdio>
#include <exception>

#include "edge_check.h"

int main(int argc, char** argv) {
  const char* root = argc > 1 ? argv[1] : SERVEBENCH_SOURCE_DIR;
  try {
    const auto violations = servebench::edges::check_tree(root);
    for (const auto& violation : violations) std::printf("%s\n", violation.c_str());
    if (!violations.empty()) {
      std::printf("part_edges: %zu violation(s)\n", violations.size());
      return 1;
    }
    std::printf("part_edges: every part follows docs/architecture.md\n");
    return 0;
  } catch (const std::exception& e) {
    std::printf("part_edges: %s\n", e.what());
    return 2;
  }
}

// File: tests/architecture/edge_check.h
// Checks a source tree against the part table of docs/architecture.md, the one place the
// allowed edges between parts are written: every src/<part>/CMakeLists.txt names exactly the
// parts its row allows in DEPS, every quoted include of another part's header names a part in
// DEPS (test files may also use the parts in TEST_LIBS) and one of that part's public headers,
// the part graph has no cycle, and no header includes itself through others.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace servebench::edges {

struct PartRow {
  std::set<std::string> public_headers;  // "client/client.h"
  std::set<std::string> may_use;         // part names as in the table ("sim/model")
};

// The table under the heading "## Parts" of `architecture_md`: rows "| `part` | `a.h`, `b.h` |
// what | `x`, `y` |" ("—" = no part). Throws std::runtime_error naming the file and line when
// the table is missing or a row is malformed.
std::map<std::string, PartRow> read_part_table(const std::filesystem::path& architecture_md);

// Every violation found in the tree rooted at `root` (src/, docs/architecture.md), one line
// each, naming the file (and line) and the rule broken. Empty = the tree follows the table.
std::vector<std::string> check_tree(const std::filesystem::path& root);

}  // namespace servebench::edges

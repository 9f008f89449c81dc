// File: tests/architecture/edge_check.cpp
#include "edge_check.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace servebench::edges {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

std::vector<std::string> backticked(const std::string& cell) {
  static const std::regex code("`([^`]+)`");
  std::vector<std::string> items;
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), code); it != std::sregex_iterator();
       ++it)
    items.push_back((*it)[1].str());
  return items;
}

std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, '|')) cells.push_back(trimmed(cell));
  if (!cells.empty() && cells.front().empty()) cells.erase(cells.begin());
  return cells;
}

// What a part's CMakeLists.txt says in its servebench_add_part(...) call.
struct PartBuild {
  std::string name;                    // library name: "sim_model" for sim/model
  std::vector<std::string> deps;       // DEPS, as library names
  std::vector<std::string> test_deps;  // TEST_LIBS servebench_<name>, as library names
  std::set<std::string> test_sources;  // TESTS, relative to the part's folder
};

PartBuild read_part_build(const fs::path& cmake_lists) {
  std::string text;
  {
    std::istringstream lines(read_text(cmake_lists));
    for (std::string line; std::getline(lines, line);)
      text += line.substr(0, line.find('#')) + "\n";
  }
  const auto call = text.find("servebench_add_part(");
  if (call == std::string::npos)
    throw std::runtime_error(cmake_lists.string() + ": no servebench_add_part(...) call");
  const auto open = call + std::string("servebench_add_part(").size();
  const auto close = text.find(')', open);
  std::istringstream words(text.substr(open, close - open));
  PartBuild build;
  std::string word, section;
  words >> build.name;
  static const std::set<std::string> kSections = {"SOURCES", "DEPS", "LIBS", "TESTS", "TEST_LIBS"};
  while (words >> word) {
    if (kSections.count(word)) {
      section = word;
    } else if (section == "DEPS") {
      build.deps.push_back(word);
    } else if (section == "TEST_LIBS" && word.rfind("servebench_", 0) == 0) {
      build.test_deps.push_back(word.substr(std::string("servebench_").size()));
    } else if (section == "TESTS") {
      build.test_sources.insert(word);
    }
  }
  return build;
}

std::string joined(const std::set<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "none" : text;
}

// The part owning an include path: the longest part name that is a folder prefix of it.
std::string owner_of(const std::string& include, const std::map<std::string, PartRow>& parts) {
  std::string owner;
  for (const auto& [part, row] : parts)
    if (include.rfind(part + "/", 0) == 0 && part.size() > owner.size()) owner = part;
  return owner;
}

// Depth-first search for a cycle; returns it as "a → b → a", or "" when there is none.
std::string find_cycle(const std::map<std::string, std::set<std::string>>& graph) {
  std::map<std::string, int> state;  // 0 new, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& node) {
    state[node] = 1;
    path.push_back(node);
    if (auto edges = graph.find(node); edges != graph.end()) {
      for (const auto& next : edges->second) {
        if (state[next] == 1) {
          auto from = std::find(path.begin(), path.end(), next);
          for (auto it = from; it != path.end(); ++it) cycle += *it + " → ";
          cycle += next;
          return true;
        }
        if (state[next] == 0 && visit(next)) return true;
      }
    }
    path.pop_back();
    state[node] = 2;
    return false;
  };
  for (const auto& [node, edges] : graph)
    if (state[node] == 0 && visit(node)) return cycle;
  return "";
}

bool is_source(const fs::path& path) {
  const auto ext = path.extension();
  return ext == ".h" || ext == ".cpp" || ext == ".cc" || ext == ".hpp";
}

}  // namespace

std::map<std::string, PartRow> read_part_table(const fs::path& architecture_md) {
  std::istringstream lines(read_text(architecture_md));
  std::map<std::string, PartRow> parts;
  std::string line;
  int number = 0;
  bool in_section = false, in_table = false;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = architecture_md.string() + ":" + std::to_string(number);
    if (line.rfind("## ", 0) == 0) {
      if (in_table) break;
      in_section = trimmed(line) == "## Parts";
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    const auto cells = table_cells(line);
    if (!in_table) {
      if (cells.empty() || cells.back() != "may use")
        throw std::runtime_error(where + ": the parts table's last column must be \"may use\"");
      in_table = true;
      continue;
    }
    if (line.find("---") != std::string::npos && backticked(line).empty()) continue;
    if (cells.size() < 3) throw std::runtime_error(where + ": a part row needs at least 3 cells");
    const auto name = backticked(cells[0]);
    if (name.size() != 1) throw std::runtime_error(where + ": the first cell names one `part`");
    PartRow row;
    for (const auto& header : backticked(cells[1])) row.public_headers.insert(header);
    if (cells.back() != "—" && cells.back() != "-") {
      std::istringstream items(cells.back());
      for (std::string item; std::getline(items, item, ',');) {
        const auto code = backticked(item);
        row.may_use.insert(code.empty() ? trimmed(item) : code.front());
      }
    }
    if (!parts.emplace(name.front(), row).second)
      throw std::runtime_error(where + ": part " + name.front() + " is listed twice");
  }
  if (parts.empty())
    throw std::runtime_error(architecture_md.string() +
                             ": no parts table under \"## Parts\" (| part | … | may use |)");
  return parts;
}

std::vector<std::string> check_tree(const fs::path& root) {
  std::vector<std::string> violations;
  const fs::path table_path = root / "docs" / "architecture.md";
  const auto parts = read_part_table(table_path);
  const fs::path src = root / "src";

  // Every folder with a CMakeLists.txt is a part, and every part of the table is a folder.
  std::map<std::string, PartBuild> builds;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (entry.path().filename() != "CMakeLists.txt") continue;
    const auto part = entry.path().parent_path().lexically_relative(src).generic_string();
    if (!parts.count(part)) {
      violations.push_back(entry.path().string() + ": part " + part + " is not in the table of " +
                           table_path.string());
      continue;
    }
    builds[part] = read_part_build(entry.path());
  }
  for (const auto& [part, row] : parts)
    if (!builds.count(part))
      violations.push_back(table_path.string() + ": part " + part + " has no src/" + part +
                           "/CMakeLists.txt");

  std::map<std::string, std::string> part_of_library;  // "sim_model" → "sim/model"
  for (const auto& [part, build] : builds) part_of_library[build.name] = part;
  auto parts_named = [&](const std::vector<std::string>& libraries, const std::string& part,
                         const char* section) {
    std::set<std::string> named;
    for (const auto& library : libraries) {
      if (auto it = part_of_library.find(library); it != part_of_library.end())
        named.insert(it->second);
      else
        violations.push_back("src/" + part + "/CMakeLists.txt: " + section + " names " + library +
                             ", which is no part");
    }
    return named;
  };

  std::map<std::string, std::set<std::string>> part_graph, include_graph;
  for (const auto& [part, build] : builds) {
    const auto deps = parts_named(build.deps, part, "DEPS");
    const auto test_deps = parts_named(build.test_deps, part, "TEST_LIBS");
    const auto& allowed = parts.at(part).may_use;
    for (const auto& dep : deps)
      if (!allowed.count(dep))
        violations.push_back("src/" + part + "/CMakeLists.txt: DEPS names " + dep +
                             ", which the table in docs/architecture.md does not allow " + part +
                             " (may use: " + joined(allowed) + ")");
    for (const auto& dep : allowed)
      if (!deps.count(dep))
        violations.push_back("docs/architecture.md: the table lets " + part + " use " + dep +
                             ", which src/" + part + "/CMakeLists.txt does not name in DEPS");
    part_graph[part].insert(deps.begin(), deps.end());
    part_graph[part].insert(test_deps.begin(), test_deps.end());

    const fs::path folder = src / part;
    for (auto it = fs::recursive_directory_iterator(folder);
         it != fs::recursive_directory_iterator(); ++it) {
      const auto relative = it->path().lexically_relative(src).generic_string();
      if (it->is_directory() && parts.count(relative)) {
        it.disable_recursion_pending();  // a sub-part (sim/model in sim) is checked as itself
        continue;
      }
      if (!it->is_regular_file() || !is_source(it->path())) continue;
      const auto in_part = it->path().lexically_relative(folder).generic_string();
      const bool is_test = build.test_sources.count(in_part) ||
                           in_part.find("testing/") != std::string::npos ||
                           in_part.ends_with("_test.cpp");
      std::set<std::string> usable = deps;
      if (is_test) usable.insert(test_deps.begin(), test_deps.end());

      static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
      std::istringstream lines(read_text(it->path()));
      std::string line;
      for (int number = 1; std::getline(lines, line); ++number) {
        std::smatch match;
        if (!std::regex_search(line, match, include_line)) continue;
        const std::string include = match[1].str();
        const std::string where = "src/" + relative + ":" + std::to_string(number);
        if (fs::exists(src / include))
          include_graph[relative].insert(include);
        else if (fs::exists(it->path().parent_path() / include))
          include_graph[relative].insert((it->path().parent_path() / include)
                                             .lexically_normal()
                                             .lexically_relative(src)
                                             .generic_string());
        const auto owner = owner_of(include, parts);
        if (owner.empty() || owner == part) continue;
        if (!usable.count(owner)) {
          violations.push_back(where + ": includes \"" + include + "\" but part " + part +
                               " does not name " + owner + " in " +
                               (is_test ? "DEPS or TEST_LIBS" : "DEPS") + " (src/" + part +
                               "/CMakeLists.txt)");
        } else if (!parts.at(owner).public_headers.count(include)) {
          violations.push_back(
              where + ": includes \"" + include + "\", an internal header of " + owner +
              " (its public headers: " + joined(parts.at(owner).public_headers) + ")");
        }
      }
    }
  }
  if (const auto cycle = find_cycle(part_graph); !cycle.empty())
    violations.push_back("the part graph has a cycle: " + cycle);
  if (const auto cycle = find_cycle(include_graph); !cycle.empty())
    violations.push_back("an include cycle between files: " + cycle);
  return violations;
}

}  // namespace servebench::edges

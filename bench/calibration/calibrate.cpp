// File: bench/calibration/calibrate.cpp
// Recomputes every seed table of docs/calibration.md: reads bench/calibration/seed_tables.txt
// (the seeds' cells and the load each row ran), replays each row's load through its deployment
// file (replay.h), and prints each table with the seed's cells beside the simulated ones and
// the error of each. With --write FILE, the tables replace what lies between the markers
// "<!-- tables begin -->" and "<!-- tables end -->" of FILE.
//
//   calibrate [--tables FILE] [--root DIR] [--only ID] [--write FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "replay.h"
#include "schedule/schedule.h"
#include "sim/deploy/deploy.h"

namespace servebench::calibration {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(trim(part));
  return parts;
}

// key=value words (a bare word is key=""), in order.
std::vector<std::pair<std::string, std::string>> words(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) {
    const auto eq = w.find('=');
    if (eq == std::string::npos) {
      out.emplace_back(w, "");
    } else {
      out.emplace_back(w.substr(0, eq), w.substr(eq + 1));
    }
  }
  return out;
}

struct Row {
  std::map<std::string, std::string> load;
  std::vector<std::pair<std::string, double>> seed;  // the seed's cells, in the seed's order
  std::string note;                                  // "excluded: …" rows are not counted
  int line = 0;
};

struct Table {
  std::string id, deployment, title;
  std::vector<Row> rows;
};

std::vector<Table> read_tables(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<Table> tables;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    auto fields = split(line, '|');
    const auto head = words(fields[0]);
    if (head.empty()) continue;
    if (head[0].first == "table") {
      if (head.size() < 3 || fields.size() < 2) {
        throw std::runtime_error(path + ":" + std::to_string(n) + ": table ID FILE | TITLE");
      }
      tables.push_back({head[1].first, head[2].first, fields[1], {}});
    } else if (head[0].first == "row") {
      if (tables.empty() || fields.size() < 2) {
        throw std::runtime_error(path + ":" + std::to_string(n) + ": row LOAD | CELLS [| NOTE]");
      }
      Row row;
      row.line = n;
      for (size_t i = 1; i < head.size(); ++i) row.load[head[i].first] = head[i].second;
      for (const auto& [k, v] : words(fields[1])) row.seed.emplace_back(k, std::stod(v));
      if (fields.size() > 2) row.note = fields[2];
      tables.back().rows.push_back(std::move(row));
    }
  }
  return tables;
}

double number(const std::map<std::string, std::string>& m, const std::string& key, double def) {
  auto it = m.find(key);
  if (it == m.end() || it->second.empty()) return def;
  if (it->second == "inf") return INFINITY;
  return std::stod(it->second);
}

// The load a row names: c=N prompts=N (vLLM, closed loop), qps=R prompts=N (vLLM's gamma
// arrivals, seed 0), sync / throughput=C / constant=R with window=S (GuideLLM),
// stage=R window=S (inference-perf, the stage's requests all waited for).
Load load_of(const Row& row) {
  Load load;
  load.input_tokens = static_cast<int32_t>(number(row.load, "isl", 0));
  load.output_tokens = static_cast<int32_t>(number(row.load, "osl", 0));
  load.output_min = static_cast<int32_t>(number(row.load, "osl_min", 0));
  load.output_max = static_cast<int32_t>(number(row.load, "osl_max", 0));
  const double window_s = number(row.load, "window", 0);
  const auto prompts = static_cast<int64_t>(number(row.load, "prompts", 0));
  if (row.load.count("c")) {
    load.concurrency = static_cast<int32_t>(number(row.load, "c", 1));
    load.prompts = prompts;
  } else if (row.load.count("qps")) {
    schedule::ArrivalOptions options;
    options.request_rate = number(row.load, "qps", INFINITY);
    options.burstiness = number(row.load, "burstiness", 1);
    options.seed = static_cast<uint64_t>(number(row.load, "seed", 0));
    load.arrivals_ns = schedule::arrival_times_ns(static_cast<size_t>(prompts), options);
  } else if (row.load.count("sync")) {
    load.concurrency = 1;
    load.prompts = 1'000'000;
    load.window_ns = static_cast<int64_t>(window_s * 1e9);
  } else if (row.load.count("throughput")) {
    load.concurrency = static_cast<int32_t>(number(row.load, "throughput", 512));
    load.prompts = 1'000'000;
    load.window_ns = static_cast<int64_t>(window_s * 1e9);
  } else if (row.load.count("constant")) {
    load.arrivals_ns =
        schedule::constant_times_ns(number(row.load, "constant", 1), window_s, 1'000'000);
    load.window_ns = static_cast<int64_t>(window_s * 1e9);
  } else if (row.load.count("stage")) {
    schedule::LoadStage stage{number(row.load, "stage", 1), window_s};
    load.arrivals_ns = schedule::stage_times_ns(stage, schedule::StageArrival::kConstant, 0);
  } else {
    throw std::runtime_error("line " + std::to_string(row.line) + ": no load (c, qps, …)");
  }
  return load;
}

double metric(const Metrics& m, const std::string& key) {
  const metrics::VllmMetrics& v = m.vllm;
  const std::map<std::string, double> scalars = {{"req_s", v.request_throughput},
                                                 {"out_tok_s", v.output_throughput},
                                                 {"total_tok_s", v.total_token_throughput},
                                                 {"concurrency", m.mean_concurrency},
                                                 {"duration_s", v.duration_s},
                                                 {"completed", static_cast<double>(v.completed)},
                                                 {"incomplete", static_cast<double>(m.incomplete)},
                                                 {"mean_e2e_s", v.e2el_ms.mean / 1e3}};
  if (auto it = scalars.find(key); it != scalars.end()) return it->second;
  const std::map<std::string, const metrics::Distribution*> stats = {
      {"ttft", &v.ttft_ms}, {"tpot", &v.tpot_ms},          {"itl", &v.itl_ms},
      {"e2e", &v.e2el_ms},  {"g_itl", &m.guidellm_itl_ms}, {"g_tpot", &m.guidellm_tpot_ms}};
  const auto us = key.find('_');
  if (us != std::string::npos) {
    const std::string which = key.substr(0, us);
    if (auto it = stats.find(key.substr(us + 1)); it != stats.end()) {
      const metrics::Distribution& d = *it->second;
      if (which == "mean") return d.mean;
      if (which == "median") return d.median;
      if (which == "p99") return d.percentiles.empty() ? 0 : d.percentiles.front().second;
    }
  }
  throw std::runtime_error("unknown metric " + key);
}

const std::map<std::string, std::string>& headers() {
  static const std::map<std::string, std::string> h = {{"req_s", "req/s"},
                                                       {"out_tok_s", "out tok/s"},
                                                       {"total_tok_s", "total tok/s"},
                                                       {"concurrency", "concurrency"},
                                                       {"completed", "completed"},
                                                       {"incomplete", "incomplete"},
                                                       {"mean_ttft", "mean TTFT ms"},
                                                       {"median_ttft", "median TTFT ms"},
                                                       {"p99_ttft", "P99 TTFT ms"},
                                                       {"mean_tpot", "mean TPOT ms"},
                                                       {"median_tpot", "median TPOT ms"},
                                                       {"p99_tpot", "P99 TPOT ms"},
                                                       {"mean_itl", "mean ITL ms"},
                                                       {"median_itl", "median ITL ms"},
                                                       {"p99_itl", "P99 ITL ms"},
                                                       {"mean_e2e", "mean E2E ms"},
                                                       {"median_e2e", "median E2E ms"},
                                                       {"p99_e2e", "P99 E2E ms"},
                                                       {"mean_e2e_s", "mean latency s"},
                                                       {"mean_g_itl", "mean ITL ms (GuideLLM)"},
                                                       {"mean_g_tpot", "mean TPOT ms (GuideLLM)"},
                                                       {"mean_g_tpot_s", "s"}};
  return h;
}

// The cells the goal is about: mean TTFT, mean TPOT (GuideLLM's where the seed is GuideLLM's),
// request throughput; inference-perf's mean latency.
// Where the seed gives output tok/s, request throughput is checked through it (the same
// quantity times the output length, with more digits than the seeds' rounded req/s).
bool target(const std::string& key, const Row& row) {
  static const std::set<std::string> t = {"mean_ttft", "mean_tpot", "mean_g_tpot", "mean_e2e_s"};
  const bool has_tokens = std::any_of(row.seed.begin(), row.seed.end(),
                                      [](const auto& p) { return p.first == "out_tok_s"; });
  if (key == "req_s") return !has_tokens;
  if (key == "out_tok_s") return has_tokens;
  return t.count(key) > 0;
}

double seed_cell(const Row& row, const std::string& key) {
  for (const auto& [k, v] : row.seed) {
    if (k == key) return v;
  }
  return NAN;
}

// Past saturation: marked `sat`; a closed-loop row whose seed throughput grew by less than
// half when the concurrency doubled; an open-loop row (vLLM's QPS, GuideLLM's constant rate)
// served at under 75 % of its rate (QPS inf always). GuideLLM's throughput row too.
bool saturated(const Table& table, size_t i) {
  const Row& row = table.rows[i];
  if (row.load.count("sat") || row.load.count("throughput")) return true;
  const double rate = seed_cell(row, "req_s");
  if (auto it = row.load.find("qps"); it != row.load.end()) {
    return it->second == "inf" || rate < 0.75 * std::stod(it->second);
  }
  if (auto it = row.load.find("constant"); it != row.load.end()) {
    return rate < 0.75 * std::stod(it->second);
  }
  if (row.load.count("c") && i > 0 && table.rows[i - 1].load.count("c")) {
    const char* key = std::isnan(seed_cell(row, "out_tok_s")) ? "req_s" : "out_tok_s";
    return seed_cell(row, key) < 1.5 * seed_cell(table.rows[i - 1], key);
  }
  return false;
}

std::string fmt(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

std::string row_label(const Row& row) {
  if (auto it = row.load.find("label"); it != row.load.end()) return it->second;
  for (const char* k : {"c", "qps", "constant", "stage", "throughput", "sync"}) {
    if (auto it = row.load.find(k); it != row.load.end()) {
      return it->second.empty() ? std::string(k) : std::string(k) + "=" + it->second;
    }
  }
  return "?";
}

struct TableFit {
  int rows = 0, within = 0;
};

std::string run_table(const Table& table, const std::string& root, TableFit& fit) {
  const auto deployment = sim::deploy::load_deployment(root + "/" + table.deployment);
  std::vector<std::string> columns;
  for (const Row& row : table.rows) {
    for (const auto& [k, v] : row.seed) {
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
    }
  }
  std::ostringstream md;
  md << "#### " << table.title << "\n\n`" << table.deployment << "`; each cell: seed → simulated "
     << "(error). Goal cells (mean TTFT, mean TPOT, request throughput) out of their band "
     << "(±20 %, ±35 % past saturation: rows marked sat.) are in bold.\n\n| row |";
  for (const auto& c : columns) md << ' ' << headers().at(c) << " |";
  md << " fit |\n|---|";
  for (size_t i = 0; i < columns.size(); ++i) md << "---:|";
  md << "---|\n";
  for (size_t index = 0; index < table.rows.size(); ++index) {
    const Row& row = table.rows[index];
    auto model = sim::deploy::make_deployment_model(deployment);
    const Load load = load_of(row);
    const auto frontends = static_cast<size_t>(number(row.load, "frontends", 1));
    const auto shown = static_cast<size_t>(number(row.load, "show", 0));
    std::vector<Load> loads(frontends, load);
    const auto runs = replay(*model, loads);
    const Metrics m = compute_metrics(runs.at(shown), load.input_tokens);
    const bool past = saturated(table, index);
    const bool excluded = row.note.rfind("excluded", 0) == 0;
    const double band = past ? 0.35 : 0.20;
    bool ok = true;
    md << "| " << row_label(row) << (past ? " (sat.)" : "") << " |";
    for (const auto& c : columns) {
      auto it = std::find_if(row.seed.begin(), row.seed.end(),
                             [&](const auto& p) { return p.first == c; });
      if (it == row.seed.end()) {
        md << " |";
        continue;
      }
      const double sim = metric(m, c);
      const double err = it->second != 0 ? (sim - it->second) / it->second : 0;
      const bool out = target(c, row) && (std::fabs(err) > band || (it->second == 0 && sim != 0));
      if (out) ok = false;
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.0f%%", err * 100);
      md << ' ' << (out ? "**" : "") << fmt(it->second) << " → " << fmt(sim) << " ("
         << (it->second == 0 ? std::string("–") : std::string(pct)) << ')' << (out ? "**" : "")
         << " |";
    }
    if (excluded) {
      md << " excluded";
    } else {
      ++fit.rows;
      fit.within += ok ? 1 : 0;
      md << (ok ? " ✓" : " ✗");
    }
    if (!row.note.empty()) md << " (" << (excluded ? row.note.substr(9) : row.note) << ")";
    md << " |\n";
  }
  md << "\nWithin the goal: " << fit.within << " of " << fit.rows << " rows.\n\n";
  return md.str();
}

int main_impl(int argc, char** argv) {
  std::string root = SERVEBENCH_SOURCE_DIR;
  std::string tables_path, only, write;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tables")
      tables_path = argv[i + 1];
    else if (flag == "--root")
      root = argv[i + 1];
    else if (flag == "--only")
      only = argv[i + 1];
    else if (flag == "--write")
      write = argv[i + 1];
    else
      throw std::runtime_error("unknown flag " + flag);
  }
  if (tables_path.empty()) tables_path = root + "/bench/calibration/seed_tables.txt";
  std::ostringstream all;
  int rows = 0, within = 0;
  for (const Table& table : read_tables(tables_path)) {
    if (!only.empty() && table.id != only) continue;
    TableFit fit;
    const std::string md = run_table(table, root, fit);
    if (write.empty()) {
      std::cout << md << std::flush;
    } else {
      std::cout << table.title << ": " << fit.within << " of " << fit.rows << " rows\n";
    }
    all << md;
    rows += fit.rows;
    within += fit.within;
  }
  all << "All tables: " << within << " of " << rows << " rows within the goal.\n";
  std::cout << "All tables: " << within << " of " << rows << " rows within the goal.\n";
  if (!write.empty()) {
    std::ifstream in(write);
    std::stringstream doc;
    doc << in.rdbuf();
    std::string text = doc.str();
    const std::string begin = "<!-- tables begin -->", end = "<!-- tables end -->";
    const auto b = text.find(begin), e = text.find(end);
    if (b == std::string::npos || e == std::string::npos || e < b) {
      throw std::runtime_error(write + ": no " + begin + " … " + end + " markers");
    }
    text = text.substr(0, b + begin.size()) + "\n\n" + all.str() + "\n" + text.substr(e);
    std::ofstream(write) << text;
  }
  return 0;
}

}  // namespace
}  // namespace servebench::calibration

int main(int argc, char** argv) {
  try {
    return servebench::calibration::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "calibrate: " << e.what() << "\n";
    return 1;
  }
}

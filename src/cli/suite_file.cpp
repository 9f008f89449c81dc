// Reading a suite file and expanding it into named `servebench run` tests (suite.h). The file is
// YAML (JSON is YAML too): either vLLM's serving-tests.json, a list of tests, or a map with
// `defaults` (merged into every test) and `tests`. Every problem is one core::Error (kInput)
// naming the file and the key.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "cli/suite.h"
#include "core/error.h"

namespace servebench::cli::suite {
namespace {

// Flags the suite sets itself, refused in client_parameters.
const std::set<std::string> kReserved = {"--save-result",     "--append-result", "--result-dir",
                                         "--result-filename", "--metadata",      "--output-json"};
// Flags that take several values, the only ones a client_parameters list is allowed for.
const std::set<std::string> kMultiValue = {"--header", "--goodput", "--sim-fault"};
// Keys of vLLM's serving tests that start its server; servebench does not start servers.
const std::set<std::string> kIgnored = {"server_parameters", "server_environment_variables"};
// vLLM's latency and throughput tests configure its offline engine in "parameters" beside the
// benchmark's flags (latency-tests.json: tensor_parallel_size, load_format); servebench
// benchmarks a server that is already running, so these are left out.
const std::set<std::string> kEngineFlags = {"--tensor-parallel-size",
                                            "--pipeline-parallel-size",
                                            "--data-parallel-size",
                                            "--load-format",
                                            "--dtype",
                                            "--max-model-len",
                                            "--gpu-memory-utilization",
                                            "--enforce-eager",
                                            "--max-num-seqs",
                                            "--max-num-batched-tokens",
                                            "--enable-prefix-caching",
                                            "--no-enable-prefix-caching",
                                            "--enable-chunked-prefill",
                                            "--num-scheduler-steps",
                                            "--quantization",
                                            "--kv-cache-dtype",
                                            "--swap-space",
                                            "--block-size",
                                            "--distributed-executor-backend",
                                            "--speculative-config",
                                            "--trust-remote-code",
                                            "--disable-log-stats"};

struct Reader {
  std::string path;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw core::Error(core::ErrorKind::kInput, path, key + ": " + message);
  }
  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(key, "expected a single value");
    return node.Scalar();
  }
};

struct Param {
  std::string flag;  // "--num-prompts"
  std::vector<std::string> values;
  bool omit = false;  // `false`: the switch is not given
  std::string origin;
};

struct Spec {
  std::string kind;              // "" (serving, or from the name), or as given by `kind`
  bool vllm_parameters = false;  // the test has vLLM's "parameters" (latency/throughput files)
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> labels;  // key→(v,o)
  std::vector<Param> params;
  std::optional<std::vector<std::pair<std::string, std::string>>> qps, concurrency;  // (v, o)
};

bool plain(const YAML::Node& node) {
  return node.Tag() == "?";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

template <class T>
void put(std::vector<T>& items, T item, auto same) {
  auto it = std::find_if(items.begin(), items.end(), same);
  if (it == items.end()) {
    items.push_back(std::move(item));
  } else {
    *it = std::move(item);
  }
}

void read_labels(const Reader& r, const YAML::Node& node, const std::string& where, Spec& spec) {
  if (!node.IsMap()) r.fail(where, "expected a map of names to values");
  for (const auto& kv : node) {
    std::string key = r.scalar(kv.first, where);
    std::string origin = where + "." + key;
    if (key.empty() || key.find('=') != std::string::npos) r.fail(origin, "not a valid label name");
    if (key == "test_name") r.fail(origin, "set by the suite from the test's name");
    if (kv.second.IsNull()) r.fail(origin, "needs a value");
    std::string value = r.scalar(kv.second, origin);
    put(spec.labels, {key, {value, origin}}, [&](const auto& l) { return l.first == key; });
  }
}

void read_params(const Reader& r, const YAML::Node& node, const std::string& where, Spec& spec) {
  if (!node.IsMap()) r.fail(where, "expected a map of `servebench run` flags to values");
  std::set<std::string> seen;
  for (const auto& kv : node) {
    std::string key = r.scalar(kv.first, where);
    std::string origin = where + "." + key;
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '_' || c == '-';
        })) {
      r.fail(origin, "not a flag name (write num_prompts for --num-prompts)");
    }
    Param p;
    p.flag = "--" + key;
    std::replace(p.flag.begin(), p.flag.end(), '_', '-');
    p.origin = origin;
    if (!seen.insert(p.flag).second) r.fail(origin, "given twice");
    if (kReserved.count(p.flag)) {
      r.fail(origin, p.flag == "--metadata" ? "use the test's labels for metadata"
                                            : "set by the suite (see --output-dir)");
    }
    const YAML::Node& v = kv.second;
    if (v.IsSequence()) {
      if (!kMultiValue.count(p.flag)) {
        r.fail(origin, "lists are not allowed here; use qps_list or max_concurrency_list");
      }
      for (size_t i = 0; i < v.size(); ++i) {
        p.values.push_back(r.scalar(v[i], origin + "[" + std::to_string(i) + "]"));
      }
      if (p.values.empty()) r.fail(origin, "empty list");
    } else if (v.IsMap()) {
      r.fail(origin, "expected a single value, not a map");
    } else if (v.IsNull()) {
      // `ignore_eos:` — a switch, as vLLM's `"ignore_eos": ""`.
    } else {
      std::string text = v.Scalar();
      if (plain(v) && lower(text) == "true") {
      } else if (plain(v) && lower(text) == "false") {
        p.omit = true;
      } else if (!text.empty()) {
        p.values.push_back(text);
      }
    }
    spec.params.push_back(std::move(p));
  }
}

// Merges `from` (a test) over `into` (the defaults): maps by key, lists replaced.
void merge(Spec& into, const Spec& from) {
  for (const auto& l : from.labels) {
    put(into.labels, l, [&](const auto& m) { return m.first == l.first; });
  }
  for (const auto& p : from.params) {
    put(into.params, p, [&](const Param& q) { return q.flag == p.flag; });
  }
  if (!from.kind.empty()) into.kind = from.kind;
  if (from.vllm_parameters) into.vllm_parameters = true;
  if (from.qps) into.qps = from.qps;
  if (from.concurrency) into.concurrency = from.concurrency;
}

std::vector<std::pair<std::string, std::string>> read_list(const Reader& r, const YAML::Node& node,
                                                           const std::string& where, bool rates) {
  if (!node.IsSequence()) r.fail(where, "expected a list");
  if (node.size() == 0) r.fail(where, "empty list");
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < node.size(); ++i) {
    std::string origin = where + "[" + std::to_string(i) + "]";
    std::string text = r.scalar(node[i], origin);
    const char* s = text.c_str();
    char* end = nullptr;
    if (rates) {
      std::string l = lower(text);
      if (l != "inf" && l != "infinity") {
        double v = std::strtod(s, &end);
        if (text.empty() || *end != '\0' || !(v > 0) || std::isinf(v)) {
          r.fail(origin, "not a positive number or inf: '" + text + "'");
        }
      }
    } else {
      long long v = std::strtoll(s, &end, 10);
      if (text.empty() || *end != '\0' || v < 1) {
        r.fail(origin, "not a positive whole number: '" + text + "'");
      }
    }
    out.emplace_back(text, origin);
  }
  return out;
}

Spec read_spec(const Reader& r, const YAML::Node& node, const std::string& where, bool is_test,
               std::string* test_name) {
  if (!node.IsMap()) r.fail(where, "expected a map");
  Spec spec;
  for (const auto& kv : node) {
    std::string key = r.scalar(kv.first, where);
    std::string origin = where + "." + key;
    if (key == "test_name" && is_test) {
      *test_name = r.scalar(kv.second, origin);
      if (!valid_name(*test_name)) {
        r.fail(origin, "use letters, digits, '_', '-' and '.' (it names the result file)");
      }
    } else if (key == "labels") {
      read_labels(r, kv.second, origin, spec);
    } else if (key == "client_parameters") {
      read_params(r, kv.second, origin, spec);
    } else if (key == "parameters") {
      // vLLM's latency-tests.json / throughput-tests.json name the flags so.
      read_params(r, kv.second, origin, spec);
      spec.vllm_parameters = true;
    } else if (key == "kind") {
      spec.kind = r.scalar(kv.second, origin);
      if (spec.kind != "serving" && spec.kind != "latency" && spec.kind != "throughput") {
        r.fail(origin, "'" + spec.kind + "' is not a test kind (serving, latency, throughput)");
      }
    } else if (key == "qps_list") {
      spec.qps = read_list(r, kv.second, origin, true);
    } else if (key == "max_concurrency_list") {
      spec.concurrency = read_list(r, kv.second, origin, false);
    } else if (kIgnored.count(key)) {
      // vLLM starts its server from these; the suite benchmarks a server already running.
    } else {
      r.fail(origin, std::string("unknown key (expected ") + (is_test ? "test_name, " : "") +
                         "kind, labels, client_parameters or parameters, qps_list, "
                         "max_concurrency_list)");
    }
  }
  if (is_test && test_name->empty()) r.fail(where, "needs a test_name");
  return spec;
}

// A test's kind: `kind` when given; else, for vLLM's "parameters", from the name as vLLM's
// run-performance-benchmarks.sh requires (latency_…, throughput_…); else serving.
std::string kind_of(const Reader& r, const Spec& spec, const std::string& test_name,
                    const std::string& where) {
  if (!spec.kind.empty()) return spec.kind;
  if (!spec.vllm_parameters) return "serving";
  if (test_name.starts_with("latency_")) return "latency";
  if (test_name.starts_with("throughput_")) return "throughput";
  if (test_name.starts_with("serving_")) return "serving";
  r.fail(where + ".test_name",
         "'" + test_name +
             "': with \"parameters\", name it latency_… or throughput_… (as vLLM's suite "
             "does), or give kind");
}

std::string beside_suite(const std::string& suite, const std::string& file) {
  const std::filesystem::path f(file), folder = std::filesystem::path(suite).parent_path();
  if (f.is_absolute() || folder.empty()) return file;
  return (folder / f).lexically_normal().string();
}

void expand(const Reader& r, const Spec& spec, const std::string& test_name,
            const std::string& where, std::vector<Test>& out) {
  const std::string kind = kind_of(r, spec, test_name, where);
  if (kind != "serving") {
    if (spec.qps) r.fail(where + ".qps_list", "only for serving tests");
    if (spec.concurrency) r.fail(where + ".max_concurrency_list", "only for serving tests");
  }
  for (const Param& p : spec.params) {
    if (p.flag == "--request-rate" && spec.qps && !p.omit) {
      r.fail(p.origin, "given with qps_list; use one of them");
    }
    if (p.flag == "--max-concurrency" && spec.concurrency && !p.omit) {
      r.fail(p.origin, "given with max_concurrency_list; use one of them");
    }
  }
  Test base;
  base.where = where;
  for (const auto& [key, vo] : spec.labels) base.labels.emplace_back(key, vo.first);
  base.kind = kind;
  for (const Param& p : spec.params) {
    if (p.omit) continue;
    if (kind != "serving" && kEngineFlags.count(p.flag)) continue;  // vLLM's engine's
    base.run_args.push_back(p.flag);
    if (p.flag == "--sim-deployment" && p.values.size() == 1) {
      // A deployment file is servebench's own and ships beside its suite (examples/seeds/):
      // a relative path is the suite file's folder's, wherever the suite is run from.
      base.run_args.push_back(beside_suite(r.path, p.values.front()));
    } else {
      base.run_args.insert(base.run_args.end(), p.values.begin(), p.values.end());
    }
    base.flag_origin[p.flag] = p.origin;
  }
  using Item = std::optional<std::pair<std::string, std::string>>;
  std::vector<Item> rates = {std::nullopt}, limits = {std::nullopt};
  if (spec.qps) rates.assign(spec.qps->begin(), spec.qps->end());
  if (spec.concurrency) limits.assign(spec.concurrency->begin(), spec.concurrency->end());
  for (const Item& rate : rates) {
    for (const Item& limit : limits) {
      Test t = base;
      t.name = test_name;
      if (rate) {
        // vLLM: new_test_name=$test_name"_qps_"$qps, the value as written in the file.
        t.name += "_qps_" + lower(rate->first);
        t.run_args.insert(t.run_args.end(), {"--request-rate", rate->first});
        t.flag_origin["--request-rate"] = rate->second;
      }
      if (limit) {
        t.name += "_concurrency_" + limit->first;
        t.run_args.insert(t.run_args.end(), {"--max-concurrency", limit->first});
        t.flag_origin["--max-concurrency"] = limit->second;
      }
      for (const Test& other : out) {
        if (other.name == t.name) {
          r.fail(where, "test name '" + t.name + "' is also made by " + other.where);
        }
      }
      out.push_back(std::move(t));
    }
  }
}

// Where a YAML stream's second document starts, if it has one. Not YAML::LoadAll: yaml-cpp 0.7's
// never ends on some bad text (a lone "," is an empty document again and again, each one kept
// until memory runs out; found by bench/fuzz/suite_file_fuzz), so this counts documents' starts
// and stops at the second.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

std::optional<YAML::Mark> second_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) {
  }
  if (starts.marks.size() < 2) return std::nullopt;
  return starts.marks[1];
}

}  // namespace

std::vector<Test> parse(const std::string& text, const std::string& path) {
  Reader r{path};
  YAML::Node root;
  try {
    // Text after the top-level value reads as a second document to yaml-cpp, which Load() would
    // drop silently; vLLM's json.load refuses it ("Extra data"), and so does servebench.
    if (std::optional<YAML::Mark> mark = second_document(text)) {
      throw core::Error(core::ErrorKind::kInput, path,
                        "line " + std::to_string(mark->line + 1) + ", column " +
                            std::to_string(mark->column + 1) + " (byte " +
                            std::to_string(mark->pos) +
                            "): text after the suite's top-level value; a suite file holds one");
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw core::Error(core::ErrorKind::kInput, path,
                      "line " + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  YAML::Node tests;
  Spec defaults;
  if (root.IsSequence()) {
    tests = root;  // vLLM's serving-tests.json
  } else if (root.IsMap()) {
    for (const auto& kv : root) {
      std::string key = r.scalar(kv.first, "suite");
      if (key == "tests") {
        tests = kv.second;
      } else if (key == "defaults") {
        defaults = read_spec(r, kv.second, "defaults", false, nullptr);
      } else if (key != "description") {
        r.fail(key, "unknown key (expected defaults, tests, description)");
      }
    }
    if (!tests) r.fail("tests", "missing");
  } else {
    r.fail("suite", "expected a list of tests, or a map with defaults and tests");
  }
  if (!tests.IsSequence()) r.fail("tests", "expected a list of tests");
  if (tests.size() == 0) r.fail("tests", "no tests");
  std::vector<Test> out;
  try {
    for (size_t i = 0; i < tests.size(); ++i) {
      std::string where = "tests[" + std::to_string(i) + "]";
      std::string name;
      Spec spec = defaults;
      merge(spec, read_spec(r, tests[i], where, true, &name));
      expand(r, spec, name, where, out);
    }
  } catch (const YAML::Exception& e) {
    throw core::Error(core::ErrorKind::kInput, path, std::string("not a valid suite: ") + e.msg);
  }
  return out;
}

std::vector<Test> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, path, "cannot read the suite file");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

bool saves_many(const Test& test) {
  for (const std::string& a : test.run_args) {
    if (a == "--profile" || a == "--stages" || a.starts_with("--profile=") ||
        a.starts_with("--stages="))
      return test.kind == "serving";
  }
  return false;
}

std::string result_path(const Test& test, const std::string& dir) {
  const std::string file = saves_many(test) ? test.name : test.name + ".json";
  return (std::filesystem::path(dir) / file).string();
}

std::vector<std::string> full_run_args(const Test& test, const std::string& dir) {
  std::vector<std::string> args = {test.kind == "serving" ? std::string("run") : test.kind};
  args.insert(args.end(), test.run_args.begin(), test.run_args.end());
  if (saves_many(test)) {
    // A GuideLLM profile or inference-perf's stages make a result per benchmark: they go to a
    // directory of the test's name, each file named as `servebench run` names it.
    args.insert(args.end(), {"--save-result", "--result-dir", result_path(test, dir)});
  } else if (test.kind == "serving") {
    args.insert(args.end(),
                {"--save-result", "--result-dir", dir, "--result-filename", test.name + ".json"});
  } else {
    args.insert(args.end(), {"--output-json", result_path(test, dir)});
  }
  args.insert(args.end(), {"--metadata", "test_name=" + test.name});
  for (const auto& [key, value] : test.labels) args.push_back(key + "=" + value);
  return args;
}

namespace {

std::string shell_quote(const std::string& s) {
  bool safe = !s.empty() && s.find_first_not_of(
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789_-./=:,@+%") == std::string::npos;
  if (safe) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string command_line(const std::vector<std::string>& args) {
  std::string line = "servebench";
  bool header_values = false;  // after --header, up to the next flag
  for (const std::string& a : args) {
    std::string shown = a;
    if (a.rfind("--", 0) == 0) {
      header_values = a == "--header";
      if (a.rfind("--header=", 0) == 0) shown = "--header=" + core::redact_header(a.substr(9));
    } else if (header_values) {
      shown = core::redact_header(a);
    }
    line += " " + shell_quote(core::redact_secrets(shown));
  }
  return line;
}

}  // namespace servebench::cli::suite

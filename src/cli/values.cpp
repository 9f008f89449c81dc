// Value parsing for the command line's flags, matching vLLM's argparse behaviour
// (vllm/benchmarks/serve.py: parse_goodput, --header/--metadata).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

#include <fmt/format.h>

#include "cli/values.h"
#include "core/error.h"

namespace servebench::cli {

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

namespace {

std::string strip(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

}  // namespace

int64_t parse_int(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::string s = strip(text);
  int64_t value = 0;
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [ptr, ec] = std::from_chars(b, s.data() + s.size(), value);
  if (s.empty() || ec == std::errc::invalid_argument || ptr != s.data() + s.size()) {
    usage(flag, "expected an integer, got '" + text + "'");
  }
  if (ec == std::errc::result_out_of_range) usage(flag, "out of range: " + s);
  if (value < min) usage(flag, fmt::format("must be >= {}, got {}", min, value));
  if (value > max) usage(flag, fmt::format("must be <= {}, got {}", max, value));
  return value;
}

double parse_double(const std::string& flag, const std::string& text) {
  std::string s = strip(text);
  char* end = nullptr;
  errno = 0;
  double value = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) {
    usage(flag, "expected a number, got '" + text + "'");
  }
  if (std::isnan(value)) usage(flag, "expected a number, got '" + text + "'");
  return value;
}

std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> items = split(text, ',');
  for (const std::string& item : items) {
    if (item.empty()) usage(flag, "empty value in the list '" + text + "'");
  }
  return items;
}

std::vector<std::pair<std::string, std::string>> parse_pairs(const std::string& flag,
                                                             const std::vector<std::string>& items,
                                                             char sep) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    size_t at = item.find(sep);
    // Values are not echoed: a --header value may be a credential.
    if (at == std::string::npos) {
      usage(flag, fmt::format("item {} is not KEY{}VALUE (got no '{}')", i + 1, sep, sep));
    }
    std::string key = strip(std::string_view(item).substr(0, at));
    std::string value = strip(std::string_view(item).substr(at + 1));
    if (key.empty()) usage(flag, fmt::format("item {} has an empty KEY", i + 1));
    if (key.find_first_of("\r\n") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      usage(flag, fmt::format("item {} contains a line break", i + 1));
    }
    bool replaced = false;
    for (auto& p : pairs) {
      if (p.first == key) p.second = value, replaced = true;
    }
    if (!replaced) pairs.emplace_back(std::move(key), std::move(value));
  }
  return pairs;
}

bool is_header_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
  });
}

std::vector<std::string> parse_percentile_metrics(const std::string& text) {
  static const std::set<std::string> kKnown = {
      "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"};
  std::vector<std::string> out;
  for (const auto& part : split(text, ',')) {
    std::string name = strip(part);
    if (!kKnown.count(name)) {
      usage("--percentile-metrics",
            "unknown metric '" + name +
                "'; use a comma-separated list of ttft, tpot, itl, e2el, client_queue_time, "
                "e2el_including_client_queue");
    }
    out.push_back(name);
  }
  return out;
}

std::string default_request_id_prefix() {
  std::random_device rd;
  return fmt::format("bench-{:08x}-", rd());
}

}  // namespace servebench::cli

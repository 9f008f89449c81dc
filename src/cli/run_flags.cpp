// Value parsing and naming for `servebench run`, matching vLLM's argparse behaviour
// (vllm/benchmarks/serve.py: parse_goodput, compute_result_filename, --header/--metadata).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include <fmt/format.h>

#include "cli/run_support.h"
#include "core/error.h"

namespace servebench::cli::run {

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

std::string python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's repr layout: fixed notation for exponents in
  // [-4, 16), else d.ddde±XX.
  char buf[64];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  std::string sci(buf, end);  // e.g. "1.25e+01"
  size_t epos = sci.find('e');
  std::string digits = sci.substr(0, epos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(sci.substr(epos + 1));
  std::string out = value < 0 ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  } else if (exponent >= 0) {
    const size_t int_len = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= int_len) {
      out += digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  } else {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  }
  return out;
}

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

namespace {

std::string base_model_of(const std::string& model_id) {
  return model_id.substr(model_id.rfind('/') + 1);
}

std::string concurrency_part(int max_concurrency) {
  return max_concurrency > 0 ? fmt::format("-concurrency{}", max_concurrency) : std::string();
}

}  // namespace

std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model_id, const std::string& date) {
  return fmt::format("{}-{}qps{}-{}-{}.json", label, python_float(request_rate),
                     concurrency_part(max_concurrency), base_model_of(model_id), date);
}

std::string ramp_up_result_file_name(const std::string& label, const schedule::RampUp& ramp_up,
                                     int max_concurrency, const std::string& model_id,
                                     const std::string& date) {
  return fmt::format("{}-ramp-up-{}-{}qps-{}qps{}-{}-{}.json", label,
                     schedule::ramp_up_strategy_name(ramp_up.strategy), ramp_up.start_rps,
                     ramp_up.end_rps, concurrency_part(max_concurrency), base_model_of(model_id),
                     date);
}

std::string url_for_messages(const std::string& url) {
  size_t scheme = url.find("://");
  size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t path_start = url.find('/', host_start);
  size_t at = url.rfind('@', path_start == std::string::npos ? std::string::npos : path_start);
  if (at == std::string::npos || at < host_start) return url;
  return url.substr(0, host_start) + url.substr(at + 1);
}

void check_writable(const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw core::Error(core::ErrorKind::kInput, flag,
                      "'" + path + "' is a directory; give the file to write");
  }
  // Opening is the only true test (root passes access(2) where the kernel still refuses).
  const bool exists = std::filesystem::exists(path, ec);
  const int fd =
      ::open(path.c_str(),
             O_WRONLY | O_NONBLOCK | O_CLOEXEC | (exists ? O_APPEND : O_CREAT | O_EXCL), 0666);
  if (fd < 0) {
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot write '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
  if (!exists) ::unlink(path.c_str());
}

std::string first_errors_text(std::vector<std::pair<uint64_t, std::string>> failed) {
  std::stable_sort(failed.begin(), failed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (size_t i = 0; i < failed.size() && i < 10; ++i) {
    const std::string& error = failed[i].second;
    text += fmt::format("Error {}: ", i);
    for (char ch : core::redact_secrets(error.empty() ? "(no message)" : error)) {
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
        text += fmt::format("\\x{:02x}", static_cast<unsigned char>(ch));
      } else {
        text += ch;
      }
    }
    text += "\n";
  }
  return text;
}

std::string default_request_id_prefix() {
  std::random_device rd;
  return fmt::format("bench-{:08x}-", rd());
}

}  // namespace servebench::cli::run

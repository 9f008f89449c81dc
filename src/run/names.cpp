// Names and texts as vLLM writes them (vllm/benchmarks/serve.py: compute_result_filename, the
// "Error <i>" lines), shared by the command line and the run (names.h).
#include "run/names.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"

namespace servebench::run {

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

void write_text(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  core::write_file_atomic(path, text);
}

const char* profile_name(LoadProfile p) {
  switch (p) {
    case LoadProfile::kSynchronous:
      return "synchronous";
    case LoadProfile::kThroughput:
      return "throughput";
    case LoadProfile::kConcurrent:
      return "concurrent";
    case LoadProfile::kConstant:
      return "constant";
    case LoadProfile::kPoisson:
      return "poisson";
    case LoadProfile::kSweep:
      return "sweep";
    case LoadProfile::kNone:
      break;
  }
  return "";
}

}  // namespace servebench::run

// Text forms of fault rules and output-length distributions (flags and the fault header).
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/sim.h"

namespace servebench::sim {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

[[noreturn]] void fail(const std::string& where, std::string_view spec, const std::string& why) {
  throw core::Error(core::ErrorKind::kUsage, where, "'" + std::string(spec) + "': " + why);
}

double to_double(std::string_view s, const std::string& where, std::string_view spec,
                 const char* what) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) {
    fail(where, spec, std::string(what) + " '" + std::string(s) + "' is not a number");
  }
  return v;
}

int32_t to_int(std::string_view s, const std::string& where, std::string_view spec,
               const char* what) {
  int32_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    fail(where, spec, std::string(what) + " '" + std::string(s) + "' is not an integer");
  }
  return v;
}

FaultRule::Kind kind_from(std::string_view word, const std::string& where, std::string_view spec) {
  using K = FaultRule::Kind;
  if (word == "429") return K::kHttp429;
  if (word == "500") return K::kHttp500;
  if (word == "503") return K::kHttp503;
  if (word == "reset") return K::kResetMidStream;
  if (word == "stall") return K::kStall;
  if (word == "malformed") return K::kMalformedEvent;
  if (word == "truncate") return K::kTruncatedBody;
  if (word == "error-event") return K::kErrorEventAfter200;
  fail(where, spec,
       "unknown fault kind '" + std::string(word) +
           "' (expected 429, 500, 503, reset, stall, malformed, truncate or error-event)");
}

void check_rule(const FaultRule& r, const std::string& where, std::string_view spec) {
  if (r.probability < 0 || r.probability > 1) fail(where, spec, "probability must be in [0, 1]");
  if (r.after_tokens < 0) fail(where, spec, "AFTER_TOKENS must be >= 0");
  if (r.stall_s < 0 || r.stall_s > 3600) fail(where, spec, "STALL_S must be in [0, 3600]");
}

}  // namespace

const char* fault_kind_name(FaultRule::Kind kind) {
  using K = FaultRule::Kind;
  switch (kind) {
    case K::kHttp429:
      return "429";
    case K::kHttp500:
      return "500";
    case K::kHttp503:
      return "503";
    case K::kResetMidStream:
      return "reset";
    case K::kStall:
      return "stall";
    case K::kMalformedEvent:
      return "malformed";
    case K::kTruncatedBody:
      return "truncate";
    case K::kErrorEventAfter200:
      return "error-event";
  }
  return "unknown";
}

FaultRule parse_fault_rule(std::string_view spec, const std::string& where) {
  auto parts = split(spec, ':');
  if (parts.size() > 4) fail(where, spec, "expected KIND[:PROB[:AFTER_TOKENS[:STALL_S]]]");
  FaultRule r{kind_from(parts[0], where, spec)};
  if (parts.size() > 1) r.probability = to_double(parts[1], where, spec, "PROB");
  if (parts.size() > 2) r.after_tokens = to_int(parts[2], where, spec, "AFTER_TOKENS");
  if (parts.size() > 3) r.stall_s = to_double(parts[3], where, spec, "STALL_S");
  if (r.kind == FaultRule::Kind::kStall && parts.size() <= 3) r.stall_s = 1.0;
  check_rule(r, where, spec);
  return r;
}

FaultRule parse_fault_header(std::string_view spec) {
  const std::string where = "x-servebench-fault header";
  auto parts = split(spec, ':');
  if (parts.size() > 3) fail(where, spec, "expected KIND[:AFTER_TOKENS[:STALL_S]]");
  FaultRule r{kind_from(parts[0], where, spec)};
  if (parts.size() > 1) r.after_tokens = to_int(parts[1], where, spec, "AFTER_TOKENS");
  if (parts.size() > 2) r.stall_s = to_double(parts[2], where, spec, "STALL_S");
  if (r.kind == FaultRule::Kind::kStall && parts.size() <= 2) r.stall_s = 1.0;
  check_rule(r, where, spec);
  return r;
}

OutputLengthDistribution parse_output_length(std::string_view spec, const std::string& where) {
  using K = OutputLengthDistribution::Kind;
  auto parts = split(spec, ':');
  OutputLengthDistribution d;
  std::string_view kind = parts[0];
  if (kind == "max" && parts.size() == 1) {
    d.kind = K::kMaxTokens;
  } else if (kind == "uniform" && parts.size() == 3) {
    d.kind = K::kUniform;
    d.min = to_int(parts[1], where, spec, "MIN");
    d.max = to_int(parts[2], where, spec, "MAX");
    if (d.min < 1 || d.max < d.min) fail(where, spec, "need 1 <= MIN <= MAX");
  } else if (kind == "normal" && parts.size() == 3) {
    d.kind = K::kNormal;
    d.mean = to_double(parts[1], where, spec, "MEAN");
    d.stddev = to_double(parts[2], where, spec, "STDDEV");
    if (d.mean < 1 || d.stddev < 0) fail(where, spec, "need MEAN >= 1 and STDDEV >= 0");
  } else if (kind == "exponential" && parts.size() == 2) {
    d.kind = K::kExponential;
    d.mean = to_double(parts[1], where, spec, "MEAN");
    if (d.mean < 1) fail(where, spec, "need MEAN >= 1");
  } else {
    fail(where, spec, "expected max, uniform:MIN:MAX, normal:MEAN:STDDEV or exponential:MEAN");
  }
  return d;
}

}  // namespace servebench::sim

// File: cli/values.h
// Flag values read as vLLM's argparse reads them; every bad value is one line naming the flag
// (core::Error kUsage, exit code 2). Internal to the cli part.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace servebench::cli {

// Whether a flag was given on the command line (defaults do not count).
using Given = std::function<bool(const char*)>;

// Refuses a flag's value: throws core::Error kUsage naming `flag`, with `message`.
[[noreturn]] void usage(const std::string& flag, const std::string& message);
int64_t parse_int(const std::string& flag, const std::string& text, int64_t min, int64_t max);
// A float as Python's float() reads it ("inf", "1e3", " 2.5 "); NaN is refused.
double parse_double(const std::string& flag, const std::string& text);
// An HTTP field name: an RFC 9110 token.
bool is_header_name(std::string_view name);
// KEY<sep>VALUE items (vLLM's --header / --metadata use '=', split at the first one, both sides
// stripped); order kept, a repeated key keeps its last value.
std::vector<std::pair<std::string, std::string>> parse_pairs(const std::string& flag,
                                                             const std::vector<std::string>& items,
                                                             char sep);
// "1,4,16,inf" → its items; an empty item is an error naming `flag`.
std::vector<std::string> split_list(const std::string& flag, const std::string& text);
// --percentile-metrics "ttft,tpot,itl,e2el" → names, each one vLLM allows.
// (--goodput and --metric-percentiles are parsed by metrics::parse_goodput/parse_percentiles.)
std::vector<std::string> parse_percentile_metrics(const std::string& text);
// "bench-" + 8 random hex digits + "-" (vLLM's --request-id-prefix default).
std::string default_request_id_prefix();

}  // namespace servebench::cli

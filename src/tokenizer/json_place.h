// File: tokenizer/json_place.h (internal to the tokenizer part)
// Reading tokenizer.json with simdjson while knowing where we are, so that every error names
// the file and the JSON path ("tokenizer.json: pre_tokenizer.pretokenizers[1].type: …").
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace servebench::tokenizer::detail {

struct JsonPlace {
  const std::string* file;  // the tokenizer.json being read
  std::string path;         // JSON path inside it; "" = the top level

  JsonPlace at(std::string_view key) const;
  JsonPlace at(size_t index) const;
  // Throws core::Error(kInput, "<file>: <path>", message).
  [[noreturn]] void fail(const std::string& message) const;
};

simdjson::dom::object as_object(simdjson::dom::element e, const JsonPlace& place);
simdjson::dom::array as_array(simdjson::dom::element e, const JsonPlace& place);
std::string_view as_string(simdjson::dom::element e, const JsonPlace& place);
// The member `key`, or nullopt when it is missing or null.
std::optional<simdjson::dom::element> member(simdjson::dom::object o, std::string_view key);
// A required string member.
std::string_view string_member(simdjson::dom::object o, std::string_view key,
                               const JsonPlace& place);
// An optional string member; null and missing give nullopt.
std::optional<std::string_view> optional_string(simdjson::dom::object o, std::string_view key,
                                                const JsonPlace& place);
bool bool_member(simdjson::dom::object o, std::string_view key, bool fallback,
                 const JsonPlace& place);
int64_t int_member(simdjson::dom::object o, std::string_view key, const JsonPlace& place);
int64_t as_int(simdjson::dom::element e, const JsonPlace& place);

}  // namespace servebench::tokenizer::detail

#include "tokenizer/json_place.h"

#include "core/error.h"

namespace servebench::tokenizer::detail {

JsonPlace JsonPlace::at(std::string_view key) const {
  return {file, path.empty() ? std::string(key) : path + "." + std::string(key)};
}

JsonPlace JsonPlace::at(size_t index) const {
  return {file, path + "[" + std::to_string(index) + "]"};
}

void JsonPlace::fail(const std::string& message) const {
  throw core::Error(core::ErrorKind::kInput, path.empty() ? *file : *file + ": " + path, message);
}

simdjson::dom::object as_object(simdjson::dom::element e, const JsonPlace& place) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) place.fail("expected an object");
  return o;
}

simdjson::dom::array as_array(simdjson::dom::element e, const JsonPlace& place) {
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) place.fail("expected an array");
  return a;
}

std::string_view as_string(simdjson::dom::element e, const JsonPlace& place) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) place.fail("expected a string");
  return s;
}

std::optional<simdjson::dom::element> member(simdjson::dom::object o, std::string_view key) {
  simdjson::dom::element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

std::string_view string_member(simdjson::dom::object o, std::string_view key,
                               const JsonPlace& place) {
  auto e = member(o, key);
  if (!e) place.at(key).fail("is required");
  return as_string(*e, place.at(key));
}

std::optional<std::string_view> optional_string(simdjson::dom::object o, std::string_view key,
                                                const JsonPlace& place) {
  auto e = member(o, key);
  if (!e) return std::nullopt;
  return as_string(*e, place.at(key));
}

bool bool_member(simdjson::dom::object o, std::string_view key, bool fallback,
                 const JsonPlace& place) {
  auto e = member(o, key);
  if (!e) return fallback;
  bool b = false;
  if (e->get_bool().get(b) != simdjson::SUCCESS) place.at(key).fail("expected true or false");
  return b;
}

int64_t as_int(simdjson::dom::element e, const JsonPlace& place) {
  int64_t v = 0;
  if (e.get_int64().get(v) != simdjson::SUCCESS) place.fail("expected an integer");
  return v;
}

int64_t int_member(simdjson::dom::object o, std::string_view key, const JsonPlace& place) {
  auto e = member(o, key);
  if (!e) place.at(key).fail("is required");
  return as_int(*e, place.at(key));
}

}  // namespace servebench::tokenizer::detail

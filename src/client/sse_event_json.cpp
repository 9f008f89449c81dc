// The exact read of one SSE event's JSON: simdjson On-Demand, only the fields the benchmark
// needs (sse_stream.h lists them). Every event the template fast path (sse_template.cpp) cannot
// take comes here.
#include <utility>

#include "client/sse_event.h"

namespace servebench::client::detail {

namespace {

namespace od = simdjson::ondemand;

// Appends a string value to `out`; null is accepted (vLLM treats it as ""), anything else is
// malformed.
bool append_string(od::value& value, std::string& out) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  if (type != od::json_type::string) return false;
  std::string_view text;
  if (value.get_string().get(text)) return false;
  out.append(text);
  return true;
}

bool read_delta(od::value& value, std::string& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::object delta;
  if (value.get_object().get(delta)) return false;
  for (auto field_result : delta) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    // Reasoning models stream their thinking first; it is generated output like the rest.
    if (key == "content" || key == "reasoning_content" || key == "reasoning") {
      if (!append_string(field.value(), text)) return false;
    }
  }
  return true;
}

bool read_choices(od::value& value, EventFields& fields, std::string& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::array choices;
  if (value.get_array().get(choices)) return false;
  for (auto element_result : choices) {
    od::value element;
    if (std::move(element_result).get(element)) return false;
    if (fields.has_choices) continue;  // only choices[0] matters (n = 1)
    fields.has_choices = true;
    od::object choice;
    if (element.get_object().get(choice)) return false;
    for (auto field_result : choice) {
      od::field field;
      if (std::move(field_result).get(field)) return false;
      od::raw_json_string key = field.key();
      if (key == "text") {
        if (!append_string(field.value(), text)) return false;
      } else if (key == "delta") {
        if (!read_delta(field.value(), text)) return false;
      } else if (key == "finish_reason") {
        bool is_null = false;
        if (field.value().is_null().get(is_null)) return false;
        fields.finish_reason = !is_null;
      }
    }
  }
  return true;
}

bool read_usage(od::value& value, EventFields& fields) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::object usage;
  if (value.get_object().get(usage)) return false;
  for (auto field_result : usage) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    int64_t* target = key == "prompt_tokens"       ? &fields.prompt_tokens
                      : key == "completion_tokens" ? &fields.completion_tokens
                                                   : nullptr;
    if (target == nullptr) continue;
    bool is_null = false;
    if (field.value().is_null().get(is_null)) return false;
    if (is_null) continue;
    if (field.value().get_int64().get(*target)) return false;
  }
  return true;
}

// The server's message from "error": a string, or an object's "message".
bool read_error(od::value& value, EventFields& fields, std::string& message) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  fields.has_error = true;
  if (type == od::json_type::string) return append_string(value, message);
  if (type != od::json_type::object) return true;
  od::object error;
  if (value.get_object().get(error)) return false;
  for (auto field_result : error) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    if (key == "message") {
      od::json_type message_type;
      if (field.value().type().get(message_type)) return false;
      if (message_type == od::json_type::string && !append_string(field.value(), message))
        return false;
    }
  }
  return true;
}

}  // namespace

bool parse_event(od::parser& parser, const std::string& padded, size_t length, EventFields& fields,
                 std::string& text, std::string& error_message) {
  od::document document;
  if (parser.iterate(padded.data(), length, padded.size()).get(document)) return false;
  od::object object;
  if (document.get_object().get(object)) return false;
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    if (key == "choices") {
      if (!read_choices(field.value(), fields, text)) return false;
    } else if (key == "usage") {
      if (!read_usage(field.value(), fields)) return false;
    } else if (key == "error") {
      if (!read_error(field.value(), fields, error_message)) return false;
    }
  }
  // Nothing may follow the object (simdjson 3.0 has no document::at_end()).
  return document.current_location().error() == simdjson::OUT_OF_BOUNDS;
}

}  // namespace servebench::client::detail

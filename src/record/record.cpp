#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "simdjson.h"

#include "core/error.h"
#include "core/json_text.h"
#include "record/record.h"

namespace servebench::record {

int64_t RequestRecord::output_tokens() const {
  if (server_completion_tokens >= 0) return server_completion_tokens;
  if (client_output_tokens >= 0) return client_output_tokens;
  return 1;
}

int64_t RequestRecord::input_tokens() const {
  return server_prompt_tokens >= 0 ? server_prompt_tokens : prompt_tokens;
}

namespace {

// The line as nlohmann::json writes it (keys in std::map order, no spaces), built by hand:
// records are written as requests finish, up to 50k a second beside the event loop, and the
// json object's map and allocations cost ~10x the text itself.
void append_int(std::string& out, int64_t value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

// Written in place into room for the longest numbers, then cut to size: an append per number
// was most of the cost of a long stream's record.
template <typename Int>
void append_array(std::string& out, const std::vector<Int>& values) {
  constexpr size_t kMaxNumberBytes = 21;  // "-9223372036854775808,"
  const size_t at = out.size();
  out.resize(at + 2 + values.size() * kMaxNumberBytes);
  char* cursor = out.data() + at;
  char* const end = out.data() + out.size();
  *cursor++ = '[';
  const char* previous = cursor;  // the last number's digits, copied when it repeats (the
  size_t previous_size = 0;       // events of one read share its arrival time)
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) *cursor++ = ',';
    if (i > 0 && values[i] == values[i - 1]) {
      std::memcpy(cursor, previous, previous_size);
      previous = cursor;
      cursor += previous_size;
      continue;
    }
    previous = cursor;
    cursor = std::to_chars(cursor, end, values[i]).ptr;
    previous_size = static_cast<size_t>(cursor - previous);
  }
  *cursor++ = ']';
  out.resize(static_cast<size_t>(cursor - out.data()));
}

// A JSON string of valid UTF-8, as nlohmann's dump writes it.
void append_string(std::string& out, std::string_view text) {
  out.push_back('"');
  core::append_json_escaped(out, text);
  out.push_back('"');
}

// The same line through nlohmann::json, which replaces invalid UTF-8 (a server may cut a
// multi-byte character) instead of throwing.
std::string to_json_line_replacing_invalid_utf8(const RequestRecord& r) {
  nlohmann::json j = {
      {"index", r.index},
      {"request_id", r.request_id},
      {"warmup", r.warmup},
      {"conversation", r.conversation},
      {"turn", r.turn},
      {"intended_ns", r.intended_ns},
      {"sent_ns", r.sent_ns},
      {"first_byte_ns", r.first_byte_ns},
      {"first_token_ns", r.first_token_ns},
      {"last_token_ns", r.last_token_ns},
      {"done_ns", r.done_ns},
      {"chunk_ns", r.chunk_ns},
      {"chunk_tokens", r.chunk_tokens},
      {"prompt_tokens", r.prompt_tokens},
      {"expected_output_tokens", r.expected_output_tokens},
      {"server_prompt_tokens", r.server_prompt_tokens},
      {"server_completion_tokens", r.server_completion_tokens},
      {"client_output_tokens", r.client_output_tokens},
      {"http_status", r.http_status},
      {"success", r.success},
      {"error", r.error},
      {"generated_text", r.generated_text},
  };
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool valid_utf8(const std::string& text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace

std::string to_json_line(const RequestRecord& r) {
  if (!valid_utf8(r.generated_text) || !valid_utf8(r.error) || !valid_utf8(r.request_id))
    return to_json_line_replacing_invalid_utf8(r);
  std::string out;
  // Room for every number at its longest (append_array writes in place), so one allocation.
  out.reserve(400 + r.generated_text.size() + r.error.size() +
              21 * (r.chunk_ns.size() + r.chunk_tokens.size()));
  auto key = [&out](std::string_view name) {
    out += out.empty() ? "{\"" : ",\"";
    out += name;
    out += "\":";
  };
  auto boolean = [&out](bool value) { out += value ? "true" : "false"; };
  key("chunk_ns");
  append_array(out, r.chunk_ns);
  key("chunk_tokens");
  append_array(out, r.chunk_tokens);
  key("client_output_tokens");
  append_int(out, r.client_output_tokens);
  key("conversation");
  append_int(out, r.conversation);
  key("done_ns");
  append_int(out, r.done_ns);
  key("error");
  append_string(out, r.error);
  key("expected_output_tokens");
  append_int(out, r.expected_output_tokens);
  key("first_byte_ns");
  append_int(out, r.first_byte_ns);
  key("first_token_ns");
  append_int(out, r.first_token_ns);
  key("generated_text");
  append_string(out, r.generated_text);
  key("http_status");
  append_int(out, r.http_status);
  key("index");
  out.append(std::to_string(r.index));
  key("intended_ns");
  append_int(out, r.intended_ns);
  key("last_token_ns");
  append_int(out, r.last_token_ns);
  key("prompt_tokens");
  append_int(out, r.prompt_tokens);
  key("request_id");
  append_string(out, r.request_id);
  key("sent_ns");
  append_int(out, r.sent_ns);
  key("server_completion_tokens");
  append_int(out, r.server_completion_tokens);
  key("server_prompt_tokens");
  append_int(out, r.server_prompt_tokens);
  key("success");
  boolean(r.success);
  key("turn");
  append_int(out, r.turn);
  key("warmup");
  boolean(r.warmup);
  out.push_back('}');
  return out;
}

RequestRecord from_json_line(std::string_view line, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw core::Error(core::ErrorKind::kInput, where + ": byte " + std::to_string(e.byte),
                      "malformed JSON record");
  }
  try {
    RequestRecord r;
    r.index = j.at("index").get<uint64_t>();
    r.request_id = j.at("request_id").get<std::string>();
    r.warmup = j.at("warmup").get<bool>();
    // Absent from records written before multi-turn existed.
    r.conversation = j.value("conversation", int64_t{-1});
    r.turn = j.value("turn", int32_t{0});
    r.intended_ns = j.at("intended_ns").get<int64_t>();
    r.sent_ns = j.at("sent_ns").get<int64_t>();
    r.first_byte_ns = j.at("first_byte_ns").get<int64_t>();
    r.first_token_ns = j.at("first_token_ns").get<int64_t>();
    r.last_token_ns = j.at("last_token_ns").get<int64_t>();
    r.done_ns = j.at("done_ns").get<int64_t>();
    r.chunk_ns = j.at("chunk_ns").get<std::vector<int64_t>>();
    r.chunk_tokens = j.at("chunk_tokens").get<std::vector<int32_t>>();
    r.prompt_tokens = j.at("prompt_tokens").get<int32_t>();
    r.expected_output_tokens = j.at("expected_output_tokens").get<int32_t>();
    r.server_prompt_tokens = j.at("server_prompt_tokens").get<int64_t>();
    r.server_completion_tokens = j.at("server_completion_tokens").get<int64_t>();
    r.client_output_tokens = j.at("client_output_tokens").get<int32_t>();
    r.http_status = j.at("http_status").get<int>();
    r.success = j.at("success").get<bool>();
    r.error = j.at("error").get<std::string>();
    r.generated_text = j.at("generated_text").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(core::ErrorKind::kInput, where, std::string("bad record: ") + e.what());
  }
}

}  // namespace servebench::record

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "record/record.h"

namespace servebench::record {

int32_t RequestRecord::output_tokens() const {
  if (server_completion_tokens >= 0) return server_completion_tokens;
  if (client_output_tokens >= 0) return client_output_tokens;
  return 1;
}

int32_t RequestRecord::input_tokens() const {
  return server_prompt_tokens >= 0 ? server_prompt_tokens : prompt_tokens;
}

std::string to_json_line(const RequestRecord& r) {
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
  // Replace invalid UTF-8 (a server may cut a multi-byte character) instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
    r.server_prompt_tokens = j.at("server_prompt_tokens").get<int32_t>();
    r.server_completion_tokens = j.at("server_completion_tokens").get<int32_t>();
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

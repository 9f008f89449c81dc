// File: sim/protocol.h (private to the sim part)
// The OpenAI/vLLM wire shapes the simulator speaks: request bodies in (simdjson), error JSON,
// whole responses and the per-token SSE chunk pieces out. No sockets, no clocks: the front
// (connection.cpp, sse_writer.cpp) decides when; this file decides what the bytes are. Shapes
// follow vLLM's protocol.py / serving_completion.py / serving_chat.py (see docs/simulator.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace simdjson::dom {
class parser;
}

namespace servebench::sim::detail {

enum class Endpoint { kCompletions, kChat };

// JSON pieces: a decimal integer; a quoted, escaped string.
void append_int(std::string& out, int64_t v);
void append_quoted(std::string& out, std::string_view s);

// An error as vLLM answers it: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string type = "BadRequestError";
  std::string message;
  std::string param;  // "" = null
};
std::string error_json(const ApiError& e);
ApiError bad_request(std::string message, std::string param = {});

// A generation request after parsing and validation against the server's limits.
struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage (vLLM default true)
  bool continuous_usage = false;  // stream_options.continuous_usage_stats
  bool ignore_eos = false;
  int32_t min_tokens = 0;
  int32_t max_tokens = 0;  // effective: given, or the endpoint's default
  int32_t prompt_tokens = 0;
  // What a prefix-aware router can match: a hash naming the first `prefix_tokens` tokens. Chat:
  // every message before the last (system prompt, earlier turns); completions: the whole
  // prompt (a repeated prompt). 0 = nothing.
  uint64_t prefix_key = 0;
  int32_t prefix_tokens = 0;
};

struct ParseLimits {
  std::string_view served_model_name;
  int32_t max_model_len;
};

// Parses a /v1/completions or /v1/chat/completions body. On failure returns false and fills
// `error` (status 400, or 404 for an unknown model).
bool parse_generation_request(Endpoint endpoint, std::string_view body,
                              const tokenizer::Tokenizer& tok, const ParseLimits& limits,
                              simdjson::dom::parser& json, GenerationRequest& out, ApiError& error);

// Prompt-token rule for chat messages: the sum of each message's content tokens (text parts of
// a content list are concatenated first); no template overhead.
// /tokenize: fills `ids` for a {"prompt"} or {"messages"} body.
bool parse_tokenize_request(std::string_view body, const tokenizer::Tokenizer& tok,
                            std::string_view served_model_name, simdjson::dom::parser& json,
                            std::vector<tokenizer::TokenId>& ids, bool& return_token_strs,
                            ApiError& error);
bool parse_detokenize_request(std::string_view body, std::string_view served_model_name,
                              simdjson::dom::parser& json, std::vector<tokenizer::TokenId>& ids,
                              ApiError& error);

// The deterministic output: token k of a request with `token_seed`.
tokenizer::TokenId output_token_id(uint64_t token_seed, int32_t k, int32_t vocab_size);

// Constant pieces of one request's SSE chunks, built once per request so that each token is
// a few memcpys into a reused buffer.
struct ChunkShape {
  std::string head;  // `data: {"id":…,"choices":[{"index":0,"text":"`  (or "delta":{"content":")
  std::string usage_head;  // `data: {"id":…,"choices":[],"usage":`
  std::string role_event;  // chat only: the role-only first delta, complete `data: …\n\n`
                           // (with usage, completion_tokens 0, under continuous usage)
  Endpoint endpoint = Endpoint::kCompletions;
  bool continuous_usage = false;
  int32_t prompt_tokens = 0;
};
ChunkShape make_chunk_shape(Endpoint endpoint, std::string_view id, int64_t created,
                            std::string_view model, int32_t prompt_tokens, bool continuous_usage);
// Appends one complete SSE event (`data: {…}\n\n`) for a token with escaped text `text_json`.
// finish_reason empty = not the last token. completion_tokens counts this token.
void append_token_event(std::string& out, const ChunkShape& shape, std::string_view text_json,
                        std::string_view finish_reason, int32_t completion_tokens);
// The final usage event (`include_usage`).
void append_usage_event(std::string& out, const ChunkShape& shape, int32_t completion_tokens);

// Whole non-streaming bodies.
std::string completion_body(Endpoint endpoint, std::string_view id, int64_t created,
                            std::string_view model, std::string_view text_json,
                            std::string_view finish_reason, int32_t prompt_tokens,
                            int32_t completion_tokens);
std::string models_body(std::string_view model, int32_t max_model_len, int64_t created);

// A fresh response id body: 32 lowercase hex digits from two 64-bit values.
std::string hex_id(uint64_t a, uint64_t b);

}  // namespace servebench::sim::detail

// Wire shapes of the simulator; see protocol.h. Field order and null fields follow what vLLM's
// pydantic models serialize (completions chunks: exclude_unset=False; chat chunks:
// exclude_unset=True; final usage chunks: exclude_none=True).
#include "sim/protocol.h"

#include <simdjson.h>
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/json_text.h"

namespace servebench::sim::detail {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string json_quoted(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

// The JSON type name of an element, for error messages.
const char* type_name(const element& e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "array";
    case element_type::OBJECT:
      return "object";
    case element_type::INT64:
    case element_type::UINT64:
      return "integer";
    case element_type::DOUBLE:
      return "number";
    case element_type::STRING:
      return "string";
    case element_type::BOOL:
      return "boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "value";
}

bool parse_object(std::string_view body, simdjson::dom::parser& json, element& root,
                  ApiError& error) {
  if (json.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) {
    error = bad_request("Request body is not valid JSON.");
    return false;
  }
  if (root.type() != element_type::OBJECT) {
    error = bad_request(std::string("Request body must be a JSON object, got ") + type_name(root) +
                        ".");
    return false;
  }
  return true;
}

// field absent or null → nullopt-like false return with no error.
bool get_field(const element& root, const char* key, element& out) {
  if (root[key].get(out) != simdjson::SUCCESS) return false;
  return !out.is_null();
}

bool get_bool(const element& root, const char* key, bool& out, ApiError& error) {
  element e;
  if (!get_field(root, key, e)) return true;
  if (e.get_bool().get(out) != simdjson::SUCCESS) {
    error =
        bad_request(std::string("'") + key + "' must be a boolean, got " + type_name(e) + ".", key);
    return false;
  }
  return true;
}

bool get_int(const element& root, const char* key, std::optional<int64_t>& out, ApiError& error) {
  element e;
  if (!get_field(root, key, e)) return true;
  int64_t v;
  if (e.get_int64().get(v) != simdjson::SUCCESS) {
    error = bad_request(std::string("'") + key + "' must be an integer, got " + type_name(e) + ".",
                        key);
    return false;
  }
  out = v;
  return true;
}

bool check_model(const element& root, std::string_view served, std::string& model,
                 ApiError& error) {
  element e;
  if (!get_field(root, "model", e)) return true;  // vLLM: model is optional
  std::string_view m;
  if (e.get_string().get(m) != simdjson::SUCCESS) {
    error =
        bad_request(std::string("'model' must be a string, got ") + type_name(e) + ".", "model");
    return false;
  }
  model = std::string(m);
  if (m != served) {
    error = ApiError{404, "NotFoundError", "The model `" + model + "` does not exist.", "model"};
    return false;
  }
  return true;
}

// Counts (or encodes) one message content: a string, or a list of parts whose text parts are
// concatenated.
bool message_text(const element& content, std::string& text, ApiError& error) {
  std::string_view s;
  if (content.get_string().get(s) == simdjson::SUCCESS) {
    text.assign(s);
    return true;
  }
  simdjson::dom::array parts;
  if (content.get_array().get(parts) != simdjson::SUCCESS) {
    error = bad_request(std::string("message 'content' must be a string or a list of parts, got ") +
                            type_name(content) + ".",
                        "messages");
    return false;
  }
  text.clear();
  for (element part : parts) {
    std::string_view type, t;
    if (part["type"].get_string().get(type) != simdjson::SUCCESS) {
      error = bad_request("each content part needs a string 'type'.", "messages");
      return false;
    }
    if (type != "text") continue;  // images etc. count nothing here
    if (part["text"].get_string().get(t) != simdjson::SUCCESS) {
      error = bad_request("a 'text' content part needs a string 'text'.", "messages");
      return false;
    }
    text.append(t);
  }
  return true;
}

// FNV-1a over `bytes`, continuing from `h` (a prefix key; never 0).
uint64_t fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

struct PrefixOut {
  uint64_t key = 0;
  int64_t tokens = 0;
};

// Chat messages → token count (and ids when `ids` is given; the prefix when `prefix` is).
bool messages_tokens(const element& root, const tokenizer::Tokenizer& tok, int64_t& count,
                     std::vector<tokenizer::TokenId>* ids, ApiError& error,
                     PrefixOut* prefix = nullptr) {
  element e;
  if (!get_field(root, "messages", e)) {
    error = bad_request("'messages' is required.", "messages");
    return false;
  }
  simdjson::dom::array messages;
  if (e.get_array().get(messages) != simdjson::SUCCESS || messages.size() == 0) {
    error = bad_request("'messages' must be a non-empty list.", "messages");
    return false;
  }
  count = 0;
  std::string text;
  const size_t n_messages = messages.size();
  size_t index = 0;
  uint64_t key = kFnvBasis;
  for (element m : messages) {
    if (prefix && index++ + 1 == n_messages && count > 0) *prefix = PrefixOut{key | 1, count};
    if (m.type() != element_type::OBJECT) {
      error = bad_request("each message must be an object.", "messages");
      return false;
    }
    std::string_view role;
    if (m["role"].get_string().get(role) != simdjson::SUCCESS) {
      error = bad_request("each message needs a string 'role'.", "messages");
      return false;
    }
    element content;
    if (!get_field(m, "content", content)) continue;  // e.g. assistant tool calls
    if (!message_text(content, text, error)) return false;
    if (prefix) key = fnv1a(fnv1a(key, role), text);
    if (ids) {
      auto part = tok.encode(text);
      ids->insert(ids->end(), part.begin(), part.end());
      count += static_cast<int64_t>(part.size());
    } else {
      count += static_cast<int64_t>(tok.count(text));
    }
  }
  return true;
}

// Completions prompt → token count (and ids when `ids` is given; the prefix when `prefix` is).
bool prompt_tokens(const element& root, const tokenizer::Tokenizer& tok, int64_t& count,
                   std::vector<tokenizer::TokenId>* ids, ApiError& error,
                   PrefixOut* prefix = nullptr) {
  element e;
  const char* kEmpty = "Either prompt or prompt_embeds must be provided and non-empty.";
  if (!get_field(root, "prompt", e)) {
    error = bad_request(kEmpty, "prompt");
    return false;
  }
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    if (s.empty()) {
      error = bad_request(kEmpty, "prompt");
      return false;
    }
    if (ids) {
      *ids = tok.encode(s);
      count = static_cast<int64_t>(ids->size());
    } else {
      count = static_cast<int64_t>(tok.count(s));
    }
    if (prefix) *prefix = PrefixOut{fnv1a(kFnvBasis, s) | 1, count};
    return true;
  }
  simdjson::dom::array list;
  if (e.get_array().get(list) != simdjson::SUCCESS) {
    error = bad_request(
        std::string("'prompt' must be a string or a list, got ") + type_name(e) + ".", "prompt");
    return false;
  }
  if (list.size() == 0) {
    error = bad_request(kEmpty, "prompt");
    return false;
  }
  element first = list.at(0).value_unsafe();
  bool token_ids = first.is_int64() || first.is_uint64();
  if (!token_ids) {
    // A list of prompts (strings, or lists of ids): one per request here.
    if (list.size() > 1) {
      error = bad_request("servebench sim serves one prompt per request; got a list of " +
                              std::to_string(list.size()) + " prompts.",
                          "prompt");
      return false;
    }
    if (first.get_string().get(s) == simdjson::SUCCESS) {
      if (s.empty()) {
        error = bad_request(kEmpty, "prompt");
        return false;
      }
      if (ids) *ids = tok.encode(s);
      count = ids ? static_cast<int64_t>(ids->size()) : static_cast<int64_t>(tok.count(s));
      if (prefix) *prefix = PrefixOut{fnv1a(kFnvBasis, s) | 1, count};
      return true;
    }
    if (first.get_array().get(list) != simdjson::SUCCESS || list.size() == 0) {
      error = bad_request("'prompt' list items must be strings or lists of token ids.", "prompt");
      return false;
    }
  }
  count = 0;
  uint64_t key = kFnvBasis;
  for (element id : list) {
    int64_t v;
    if (id.get_int64().get(v) != simdjson::SUCCESS || v < 0) {
      error = bad_request("token ids in 'prompt' must be non-negative integers.", "prompt");
      return false;
    }
    if (ids) ids->push_back(static_cast<tokenizer::TokenId>(v));
    if (prefix) key = fnv1a(key, std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
    ++count;
  }
  if (prefix) *prefix = PrefixOut{key | 1, count};
  return true;
}

}  // namespace

ApiError bad_request(std::string message, std::string param) {
  return ApiError{400, "BadRequestError", std::move(message), std::move(param)};
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  core::append_json_escaped(out, s);
  out += '"';
}

std::string error_json(const ApiError& e) {
  std::string out = R"({"error":{"message":)";
  out += json_quoted(e.message);
  out += R"(,"type":)";
  out += json_quoted(e.type);
  out += R"(,"param":)";
  out += e.param.empty() ? std::string("null") : json_quoted(e.param);
  out += R"(,"code":)";
  append_int(out, e.status);
  out += "}}";
  return out;
}

bool parse_generation_request(Endpoint endpoint, std::string_view body,
                              const tokenizer::Tokenizer& tok, const ParseLimits& limits,
                              simdjson::dom::parser& json, GenerationRequest& out,
                              ApiError& error) {
  element root;
  if (!parse_object(body, json, root, error)) return false;
  out = GenerationRequest{};
  out.endpoint = endpoint;
  if (!check_model(root, limits.served_model_name, out.model, error)) return false;
  if (out.model.empty()) out.model = std::string(limits.served_model_name);

  if (!get_bool(root, "stream", out.stream, error)) return false;
  if (!get_bool(root, "ignore_eos", out.ignore_eos, error)) return false;
  std::optional<int64_t> min_tokens, max_tokens, max_completion_tokens;
  if (!get_int(root, "min_tokens", min_tokens, error)) return false;
  if (!get_int(root, "max_tokens", max_tokens, error)) return false;
  if (endpoint == Endpoint::kChat &&
      !get_int(root, "max_completion_tokens", max_completion_tokens, error)) {
    return false;
  }
  // Completions' logprobs, checked as vLLM checks it against its default max_logprobs (20); the
  // simulator computes none (its chunks say "logprobs":null).
  if (endpoint == Endpoint::kCompletions) {
    constexpr int64_t kMaxLogprobs = 20;
    std::optional<int64_t> logprobs;
    if (!get_int(root, "logprobs", logprobs, error)) return false;
    if (logprobs && *logprobs > kMaxLogprobs) {
      error =
          bad_request("Requested sample logprobs of " + std::to_string(*logprobs) +
                          ", which is greater than max allowed: " + std::to_string(kMaxLogprobs),
                      "logprobs");
      return false;
    }
  }
  element so;
  if (get_field(root, "stream_options", so)) {
    if (!out.stream) {
      error =
          bad_request("Stream options can only be defined when `stream=True`.", "stream_options");
      return false;
    }
    if (so.type() != element_type::OBJECT) {
      error = bad_request("'stream_options' must be an object.", "stream_options");
      return false;
    }
    out.include_usage = true;  // StreamOptions.include_usage defaults to true in vLLM
    bool continuous = false;
    if (!get_bool(so, "include_usage", out.include_usage, error)) return false;
    if (!get_bool(so, "continuous_usage_stats", continuous, error)) return false;
    out.continuous_usage = out.include_usage && continuous;
  }

  int64_t count = 0;
  PrefixOut prefix;
  bool ok = endpoint == Endpoint::kChat ? messages_tokens(root, tok, count, nullptr, error, &prefix)
                                        : prompt_tokens(root, tok, count, nullptr, error, &prefix);
  if (!ok) return false;
  out.prefix_key = prefix.key;
  out.prefix_tokens = static_cast<int32_t>(std::min<int64_t>(prefix.tokens, count));
  const int64_t max_len = limits.max_model_len;
  if (count >= max_len) {
    error = bad_request("This model's maximum context length is " + std::to_string(max_len) +
                            " tokens. However, your request has " + std::to_string(count) +
                            " input tokens. Please reduce the length of the input messages.",
                        "input_tokens");
    return false;
  }
  out.prompt_tokens = static_cast<int32_t>(count);

  // Chat: max_completion_tokens wins over max_tokens (vLLM: `max_completion_tokens or
  // max_tokens`); absent = the remaining context. Completions: absent = 16.
  std::optional<int64_t> asked =
      max_completion_tokens.has_value() ? max_completion_tokens : max_tokens;
  const char* param = max_completion_tokens.has_value() ? "max_completion_tokens" : "max_tokens";
  if (asked.has_value()) {
    if (*asked < 1) {
      error = bad_request(
          std::string(param) + " must be at least 1, got " + std::to_string(*asked) + ".", param);
      return false;
    }
    // Not `count + *asked > max_len`: a huge max_tokens (2^63 - 1) overflows the sum.
    if (*asked > max_len - count) {
      error = bad_request(
          "'max_tokens' or 'max_completion_tokens' is too large: " + std::to_string(*asked) +
              ". This model's maximum context length is " + std::to_string(max_len) +
              " tokens and your request has " + std::to_string(count) + " input tokens (" +
              std::to_string(*asked) + " > " + std::to_string(max_len) + " - " +
              std::to_string(count) + ").",
          "max_tokens");
      return false;
    }
    out.max_tokens = static_cast<int32_t>(*asked);
  } else if (endpoint == Endpoint::kCompletions) {
    out.max_tokens = static_cast<int32_t>(std::min<int64_t>(16, max_len - count));
  } else {
    out.max_tokens = static_cast<int32_t>(max_len - count);
  }
  if (min_tokens.has_value()) {
    if (*min_tokens < 0) {
      error = bad_request(
          "min_tokens must be greater than or equal to 0, got " + std::to_string(*min_tokens) + ".",
          "min_tokens");
      return false;
    }
    if (*min_tokens > out.max_tokens) {
      error = bad_request(
          "min_tokens must be less than or equal to max_tokens=" + std::to_string(out.max_tokens) +
              ", got " + std::to_string(*min_tokens) + ".",
          "min_tokens");
      return false;
    }
    out.min_tokens = static_cast<int32_t>(*min_tokens);
  }
  return true;
}

bool parse_tokenize_request(std::string_view body, const tokenizer::Tokenizer& tok,
                            std::string_view served_model_name, simdjson::dom::parser& json,
                            std::vector<tokenizer::TokenId>& ids, bool& return_token_strs,
                            ApiError& error) {
  element root;
  if (!parse_object(body, json, root, error)) return false;
  std::string model;
  if (!check_model(root, served_model_name, model, error)) return false;
  return_token_strs = false;
  if (!get_bool(root, "return_token_strs", return_token_strs, error)) return false;
  ids.clear();
  int64_t count = 0;
  element unused;
  if (get_field(root, "messages", unused)) return messages_tokens(root, tok, count, &ids, error);
  element p;
  std::string_view s;
  // /tokenize accepts an empty prompt (count 0), unlike /v1/completions.
  if (get_field(root, "prompt", p) && p.get_string().get(s) == simdjson::SUCCESS) {
    ids = tok.encode(s);
    return true;
  }
  error = bad_request("'prompt' (a string) or 'messages' is required.", "prompt");
  return false;
}

bool parse_detokenize_request(std::string_view body, std::string_view served_model_name,
                              simdjson::dom::parser& json, std::vector<tokenizer::TokenId>& ids,
                              ApiError& error) {
  element root;
  if (!parse_object(body, json, root, error)) return false;
  std::string model;
  if (!check_model(root, served_model_name, model, error)) return false;
  element e;
  simdjson::dom::array list;
  if (!get_field(root, "tokens", e) || e.get_array().get(list) != simdjson::SUCCESS) {
    error = bad_request("'tokens' (a list of token ids) is required.", "tokens");
    return false;
  }
  ids.clear();
  for (element id : list) {
    int64_t v;
    if (id.get_int64().get(v) != simdjson::SUCCESS || v < 0 || v > INT32_MAX) {
      error = bad_request("'tokens' must hold non-negative integer token ids.", "tokens");
      return false;
    }
    ids.push_back(static_cast<tokenizer::TokenId>(v));
  }
  return true;
}

tokenizer::TokenId output_token_id(uint64_t token_seed, int32_t k, int32_t vocab_size) {
  // splitmix64 of (seed, k): a fixed sequence per request, independent of timing.
  uint64_t z = token_seed + (static_cast<uint64_t>(k) + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // The server refuses an empty vocabulary; id 0 rather than a division by zero all the same.
  if (vocab_size < 1) return 0;
  return static_cast<tokenizer::TokenId>(z % static_cast<uint64_t>(vocab_size));
}

ChunkShape make_chunk_shape(Endpoint endpoint, std::string_view id, int64_t created,
                            std::string_view model, int32_t prompt_tokens, bool continuous_usage) {
  ChunkShape shape;
  shape.endpoint = endpoint;
  shape.continuous_usage = continuous_usage;
  shape.prompt_tokens = prompt_tokens;
  std::string common =
      R"(data: {"id":)" + json_quoted(id) + R"(,"object":)" +
      (endpoint == Endpoint::kChat ? R"("chat.completion.chunk")" : R"("text_completion")") +
      R"(,"created":)";
  append_int(common, created);
  common += R"(,"model":)" + json_quoted(model) + R"(,"choices":[)";
  shape.head = common + (endpoint == Endpoint::kChat ? R"({"index":0,"delta":{"content":")"
                                                     : R"({"index":0,"text":")");
  shape.usage_head = common + R"(],"usage":)";
  if (endpoint == Endpoint::kChat) {
    shape.role_event = common + R"({"index":0,"delta":{"role":"assistant","content":""},)"
                                R"("logprobs":null,"finish_reason":null}])";
    if (continuous_usage) {
      shape.role_event += R"(,"usage":{"prompt_tokens":)";
      append_int(shape.role_event, prompt_tokens);
      shape.role_event += R"(,"total_tokens":)";
      append_int(shape.role_event, prompt_tokens);
      shape.role_event += R"(,"completion_tokens":0})";
    }
    shape.role_event += "}\n\n";
  }
  return shape;
}

namespace {
void append_usage_object(std::string& out, int32_t prompt, int32_t completion, bool details_null) {
  out += R"({"prompt_tokens":)";
  append_int(out, prompt);
  out += R"(,"total_tokens":)";
  append_int(out, static_cast<int64_t>(prompt) + completion);
  out += R"(,"completion_tokens":)";
  append_int(out, completion);
  if (details_null) out += R"(,"prompt_tokens_details":null)";
  out += '}';
}
}  // namespace

void append_token_event(std::string& out, const ChunkShape& shape, std::string_view text_json,
                        std::string_view finish_reason, int32_t completion_tokens) {
  out += shape.head;
  out += text_json;
  if (shape.endpoint == Endpoint::kCompletions) {
    out += R"(","logprobs":null,"finish_reason":)";
    if (finish_reason.empty()) {
      out += "null";
    } else {
      out += '"';
      out += finish_reason;
      out += '"';
    }
    out += R"(,"stop_reason":null}],"usage":)";
    if (shape.continuous_usage) {
      append_usage_object(out, shape.prompt_tokens, completion_tokens, true);
    } else {
      out += "null";
    }
  } else {
    out += R"("},"logprobs":null,"finish_reason":)";
    if (finish_reason.empty()) {
      out += "null}]";
    } else {
      out += '"';
      out += finish_reason;
      out += R"(","stop_reason":null}])";
    }
    if (shape.continuous_usage) {
      out += R"(,"usage":)";
      append_usage_object(out, shape.prompt_tokens, completion_tokens, false);
    }
  }
  out += "}\n\n";
}

void append_usage_event(std::string& out, const ChunkShape& shape, int32_t completion_tokens) {
  out += shape.usage_head;
  append_usage_object(out, shape.prompt_tokens, completion_tokens, false);
  out += "}\n\n";
}

std::string completion_body(Endpoint endpoint, std::string_view id, int64_t created,
                            std::string_view model, std::string_view text_json,
                            std::string_view finish_reason, int32_t prompt_tokens,
                            int32_t completion_tokens) {
  std::string out =
      R"({"id":)" + json_quoted(id) + R"(,"object":)" +
      (endpoint == Endpoint::kChat ? R"("chat.completion")" : R"("text_completion")") +
      R"(,"created":)";
  append_int(out, created);
  out += R"(,"model":)" + json_quoted(model) + R"(,"choices":[{"index":0,)";
  if (endpoint == Endpoint::kChat) {
    out += R"("message":{"role":"assistant","reasoning_content":null,"content":")";
    out += text_json;
    out += R"(","tool_calls":[]},"logprobs":null,"finish_reason":")";
    out += finish_reason;
    out += R"(","stop_reason":null}],"usage":)";
    append_usage_object(out, prompt_tokens, completion_tokens, true);
    out += R"(,"prompt_logprobs":null})";
  } else {
    out += R"("text":")";
    out += text_json;
    out += R"(","logprobs":null,"finish_reason":")";
    out += finish_reason;
    out += R"(","stop_reason":null,"prompt_logprobs":null}],"usage":)";
    append_usage_object(out, prompt_tokens, completion_tokens, true);
    out += '}';
  }
  return out;
}

std::string models_body(std::string_view model, int32_t max_model_len, int64_t created) {
  std::string c = std::to_string(created);
  std::string m = json_quoted(model);
  return R"({"object":"list","data":[{"id":)" + m + R"(,"object":"model","created":)" + c +
         R"(,"owned_by":"vllm","root":)" + m + R"(,"parent":null,"max_model_len":)" +
         std::to_string(max_model_len) +
         R"(,"permission":[{"id":"modelperm-servebench-sim","object":"model_permission",)"
         R"("created":)" +
         c +
         R"(,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,)"
         R"("allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,)"
         R"("organization":"*","group":null,"is_blocking":false}]}]})";
}

std::string hex_id(uint64_t a, uint64_t b) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return std::string(buf, 32);
}

}  // namespace servebench::sim::detail

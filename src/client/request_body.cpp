#include "client/request_body.h"

#include "core/error.h"

namespace servebench::client::detail {

namespace {

constexpr std::string_view kUsageStatsField = R"(,"continuous_usage_stats":true)";
constexpr std::string_view kStreamOptionsStart = R"("stream_options":{"include_usage":true)";

nlohmann::ordered_json user_message(const std::string& text) {
  nlohmann::ordered_json part;
  part["type"] = "text";
  part["text"] = text;
  nlohmann::ordered_json message;
  message["role"] = "user";
  message["content"] = nlohmann::ordered_json::array({part});
  return message;
}

nlohmann::ordered_json base_payload(const Endpoint& endpoint, const std::string& prompt,
                                    int32_t max_tokens, bool continuous_usage_stats,
                                    const std::vector<HistoryTurn>& history = {}) {
  nlohmann::ordered_json payload;
  payload["model"] = endpoint.model;
  if (endpoint.api == Api::kCompletions) {
    if (history.empty()) {
      payload["prompt"] = prompt;
    } else {
      std::string text;
      for (const HistoryTurn& turn : history) text += turn.user + turn.assistant + "\n\n";
      payload["prompt"] = text + prompt;
    }
    payload["repetition_penalty"] = 1.0;
    payload["max_tokens"] = max_tokens;
    payload["logprobs"] = nullptr;
  } else {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    for (const HistoryTurn& turn : history) {
      messages.push_back(user_message(turn.user));
      nlohmann::ordered_json answer;
      answer["role"] = "assistant";
      answer["content"] = turn.assistant;
      messages.push_back(std::move(answer));
    }
    messages.push_back(user_message(prompt));
    payload["messages"] = std::move(messages);
    payload["max_completion_tokens"] = max_tokens;
  }
  payload["stream"] = true;
  nlohmann::ordered_json stream_options;
  stream_options["include_usage"] = true;
  if (continuous_usage_stats) stream_options["continuous_usage_stats"] = true;
  payload["stream_options"] = std::move(stream_options);
  return payload;
}

std::string dump(const nlohmann::ordered_json& payload) {
  // Invalid UTF-8 in a prompt is replaced rather than thrown on: the dataset owns the text.
  return payload.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

void RequestBody::drop_continuous_usage_stats() {
  if (usage_stats_offset == std::string::npos) return;
  json.erase(usage_stats_offset, usage_stats_length);
  usage_stats_offset = std::string::npos;
  usage_stats_length = 0;
}

nlohmann::ordered_json parse_extra_body(const std::string& extra_body_json) {
  if (extra_body_json.empty()) return nlohmann::ordered_json::object();
  nlohmann::ordered_json extra =
      nlohmann::ordered_json::parse(extra_body_json, nullptr, /*allow_exceptions=*/false);
  if (extra.is_discarded())
    throw core::Error(core::ErrorKind::kUsage, "--extra-body", "not valid JSON");
  if (!extra.is_object())
    throw core::Error(core::ErrorKind::kUsage, "--extra-body", "must be a JSON object");
  return extra;
}

RequestBody build_request_body(const Endpoint& endpoint, const BodyOptions& options,
                               const nlohmann::ordered_json& extra_body,
                               const PlannedRequest& request,
                               const std::vector<HistoryTurn>& history) {
  nlohmann::ordered_json payload = base_payload(endpoint, request.prompt, request.max_tokens,
                                                options.continuous_usage_stats, history);
  if (options.ignore_eos) payload["ignore_eos"] = true;
  for (const auto& [key, value] : extra_body.items()) payload[key] = value;  // vLLM: update()

  RequestBody body;
  body.json = dump(payload);
  if (options.continuous_usage_stats) {
    // Structural text only: quotes inside JSON strings are escaped, so this cannot match a
    // prompt. It is absent when extra_body replaced stream_options.
    size_t start = body.json.find(kStreamOptionsStart);
    if (start != std::string::npos &&
        body.json.compare(start + kStreamOptionsStart.size(), kUsageStatsField.size(),
                          kUsageStatsField) == 0) {
      body.usage_stats_offset = start + kStreamOptionsStart.size();
      body.usage_stats_length = kUsageStatsField.size();
    }
  }
  return body;
}

std::string build_ready_check_body(const Endpoint& endpoint) {
  return dump(base_payload(endpoint, "Hello", 1, false));
}

}  // namespace servebench::client::detail

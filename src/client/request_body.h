// File: client/request_body.h (internal to the client part)
// The JSON bodies sent, built before t0 so the send path does no JSON work. Field order and
// content follow vLLM's benchmark client (vllm/benchmarks/lib/endpoint_request_func.py):
//   completions: model, prompt, repetition_penalty 1.0, max_tokens, logprobs null, stream,
//                stream_options, [ignore_eos], extra_body merged last
//   chat:        model, messages [{role user, content [{type text, text}]}],
//                max_completion_tokens, stream, stream_options, [ignore_eos], extra_body last
// (a conversation's later turn: its history before, see build_request_body)
// stream_options is {"include_usage":true} plus "continuous_usage_stats":true when asked; the
// byte range of that addition is remembered so it can be cut out if a server rejects it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "client/client.h"
#include "nlohmann/json.hpp"

namespace servebench::client::detail {

struct RequestBody {
  std::string json;
  // Where `,"continuous_usage_stats":true` sits in `json` (npos when not asked for, or when
  // extra_body replaced stream_options).
  size_t usage_stats_offset = std::string::npos;
  size_t usage_stats_length = 0;

  // Removes the continuous_usage_stats request in place (no-op when absent).
  void drop_continuous_usage_stats();
};

// Parses BodyOptions::extra_body_json once ("" → empty object). Throws core::Error (usage)
// naming "--extra-body" when it is not a JSON object.
nlohmann::ordered_json parse_extra_body(const std::string& extra_body_json);

// One earlier turn of a conversation: what the user sent and what the server generated.
struct HistoryTurn {
  std::string user;
  std::string assistant;
};

// `history`, for a conversation's later turn, goes before the request's prompt: chat messages
// user/assistant/…/user (assistant content as a plain string); for completions, the prompt is
// each earlier prompt followed by its answer and "\n\n", then this prompt.
RequestBody build_request_body(const Endpoint& endpoint, const BodyOptions& options,
                               const nlohmann::ordered_json& extra_body,
                               const PlannedRequest& request,
                               const std::vector<HistoryTurn>& history = {});

// The small request of the readiness check: one token, streamed, no continuous usage.
std::string build_ready_check_body(const Endpoint& endpoint);

}  // namespace servebench::client::detail

// File: record/record.h
// RequestRecord is the single seam between the client and the metrics: everything measured
// about one request, as plain data. Times are nanoseconds since the run's start (t0) on
// core::mono_ns(); -1 means "did not happen". Per-request failures are data here (success =
// false plus a one-line error), never exceptions.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace servebench::record {

struct RequestRecord {
  // --- identity
  uint64_t index = 0;      // position in the plan (dataset order); unique within a run
  std::string request_id;  // the x-request-id sent
  bool warmup = false;     // warmup requests are recorded but never enter the metrics
  // Multi-turn: the conversation (-1 = none) and the turn in it (0 = first). A later turn's
  // intended_ns is when the previous turn's record ended (it is sent then, not on a schedule).
  int64_t conversation = -1;
  int32_t turn = 0;

  // --- time, ns since run start (t0)
  int64_t intended_ns = -1;     // when the schedule wanted it sent
  int64_t sent_ns = -1;         // when the client handed it to the transport (vLLM's start)
  int64_t first_byte_ns = -1;   // first response body byte
  int64_t first_token_ns = -1;  // first SSE event with non-empty "choices" (vLLM's TTFT end)
  int64_t last_token_ns = -1;   // last SSE event with non-empty "choices" (vLLM's E2E end)
  int64_t done_ns = -1;         // response complete ([DONE], close or error)

  // Arrival time of every SSE event with non-empty "choices", first included (so the vLLM ITL
  // gaps are chunk_ns[i] - chunk_ns[i-1]).
  std::vector<int64_t> chunk_ns;
  // Output tokens carried by each of those events when the server says so (usage deltas with
  // continuous_usage_stats); empty when unknown. Same length as chunk_ns when present.
  std::vector<int32_t> chunk_tokens;

  // --- tokens
  int32_t prompt_tokens = 0;           // the dataset's count (client tokenizer)
  int32_t expected_output_tokens = 0;  // max_tokens asked for
  // The server's usage counts are 64-bit, as JSON gives them: a count past 2^31 is kept whole.
  int64_t server_prompt_tokens = -1;      // usage.prompt_tokens, when given
  int64_t server_completion_tokens = -1;  // usage.completion_tokens, when given
  // Counted from generated_text with the tokenizer when usage gives no (or a zero) count.
  int32_t client_output_tokens = -1;

  // --- outcome
  int http_status = 0;         // 0 = no HTTP status (connection failed)
  bool success = false;        // vLLM's rule: 200, at least one choices event, no error
  std::string error;           // one line, secrets redacted; empty on success
  std::string generated_text;  // the concatenated streamed text

  // Output tokens as vLLM counts them: usage.completion_tokens when present, else the client's
  // count, else 1 (vLLM's fallback when no tokenizer ran).
  int64_t output_tokens() const;
  // Input tokens as vLLM reports them: usage.prompt_tokens when present, else the dataset's.
  int64_t input_tokens() const;
};

// One record as one JSON line (no trailing newline), all fields above, for the per-request
// JSONL written as requests finish, so a killed run keeps everything already measured.
std::string to_json_line(const RequestRecord& r);
// Parses a line written by to_json_line; throws core::Error naming `where` on bad input.
RequestRecord from_json_line(std::string_view line, const std::string& where);

}  // namespace servebench::record

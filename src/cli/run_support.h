// File: cli/run_support.h
// Pieces of `servebench run` kept apart from the flow in run_command.cpp so each stays small
// and testable: vLLM-compatible value parsing and naming, the tqdm-style progress bar, and the
// one HTTP call the command makes itself (GET /v1/models when --model is not given).
// Internal to the cli part.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/client.h"
#include "dataset/dataset.h"
#include "schedule/schedule.h"

namespace servebench::cli::run {

// ---- plans

// Request i due at times[i] with prompt i % prompts.size() (reused in turn when there are more
// times than prompts); a multi-turn prompt's later turn follows the request before it.
std::vector<client::PlannedRequest> plan_at(const std::vector<int64_t>& times,
                                            const std::vector<dataset::Prompt>& prompts);

// ---- values (each throws core::Error kUsage naming `flag` on bad input)

// Refuses a flag's value: throws core::Error kUsage naming `flag`, with `message`.
[[noreturn]] void usage(const std::string& flag, const std::string& message);
// Python's str(float): "inf", "10.0", "2.5", "1e-05", "1e+16" (vLLM prints and names files so).
std::string python_float(double value);
int64_t parse_int(const std::string& flag, const std::string& text, int64_t min, int64_t max);
// A float as Python's float() reads it ("inf", "1e3", " 2.5 "); NaN is refused.
double parse_double(const std::string& flag, const std::string& text);
// Fails now (core::Error kInput naming `flag`), before a benchmark, when `path` could not be
// written after it: a directory, a file or directory we may not write, a FIFO with no reader.
// An existing file is left as it is; a new one is created and removed again.
void check_writable(const std::string& path, const std::string& flag);
// vLLM's "Error <i>: <error>" lines for the first 10 failed requests, given as (plan index,
// error) in any order: by index, secrets redacted, control bytes a server sent shown as \xNN
// (a NUL would end a printed line early).
std::string first_errors_text(std::vector<std::pair<uint64_t, std::string>> failed);
// An HTTP field name: an RFC 9110 token.
bool is_header_name(std::string_view name);
// KEY<sep>VALUE items (vLLM's --header / --metadata use '=', split at the first one, both sides
// stripped); order kept, a repeated key keeps its last value.
std::vector<std::pair<std::string, std::string>> parse_pairs(const std::string& flag,
                                                             const std::vector<std::string>& items,
                                                             char sep);
// "1,4,16,inf" → its items; an empty item is an error naming `flag`.
std::vector<std::string> split_list(const std::string& flag, const std::string& text);
// --percentile-metrics "ttft,tpot,itl,e2el" → names, each one vLLM allows.
// (--goodput and --metric-percentiles are parsed by metrics::parse_goodput/parse_percentiles.)
std::vector<std::string> parse_percentile_metrics(const std::string& text);

// vLLM's result file name: {label}-{rate}qps[-concurrency{N}]-{model basename}-{date}.json.
std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model_id, const std::string& date);
// With a ramp-up (vLLM's name for it):
// {label}-ramp-up-{strategy}-{start}qps-{end}qps[-concurrency{N}]-{model basename}-{date}.json.
std::string ramp_up_result_file_name(const std::string& label, const schedule::RampUp& ramp_up,
                                     int max_concurrency, const std::string& model_id,
                                     const std::string& date);
// A URL with any "user:password@" removed, for messages.
std::string url_for_messages(const std::string& url);
// "bench-" + 8 random hex digits + "-" (vLLM's --request-id-prefix default).
std::string default_request_id_prefix();

// ---- progress

// A tqdm-compatible bar on stderr: "100%|█████| 200/200 [00:11<00:00, 17.08it/s]". Redraws
// with '\r' at most every 100 ms (tqdm's mininterval), fills the terminal width when stderr is
// a terminal (else $COLUMNS, else a 10-cell bar, as tqdm), and ends with a newline on close().
class ProgressBar {
 public:
  ProgressBar(size_t total, bool enabled);
  ~ProgressBar();
  void update(size_t n = 1);
  void close();
  // The line tqdm would print (no '\r'), for tests: n of total after elapsed_s, bar width cells.
  static std::string format(size_t n, size_t total, double elapsed_s, int ncols);

 private:
  void draw(bool final_draw);
  size_t total_, n_ = 0;
  bool enabled_, closed_ = false;
  int64_t start_ns_, last_draw_ns_ = 0;
  size_t last_len_ = 0;
};

// ---- model discovery

struct ServerModel {
  std::string id;    // data[0].id  (vLLM's "model name", sent in requests)
  std::string root;  // data[0].root, or id when absent (vLLM's "model id")
};
// GET {base_url}/v1/models and the first entry, as vLLM does without --model. Throws
// core::Error (network) naming the URL when the server cannot be reached or lists no model.
ServerModel first_server_model(const std::string& base_url, const std::vector<std::string>& headers,
                               const std::string& api_key, bool insecure, double timeout_s);

}  // namespace servebench::cli::run

// File: report/report.h
// Lays figures out for people and tools: vLLM's console block (byte for byte in layout), the
// `--save-result` JSON with vLLM's keys (servebench's extras under "servebench"), and the
// `--save-detailed` per-request arrays.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/metrics.h"
#include "record/record.h"
#include "server_metrics/server_metrics.h"

namespace servebench::report {

// The client's own health over the run (fed from client::ClientStats by the run command);
// printed in the extras block so a reader can tell a slow server from a saturated client.
struct ClientHealth {
  double cpu_user_s = 0, cpu_system_s = 0;  // getrusage over the run
  int64_t max_loop_lag_ns = 0;              // longest time the event loop was late to a timer
  uint64_t bytes_received = 0;
  uint64_t sse_events = 0;
  uint64_t connections_opened = 0;
  int64_t t0_mono_ns = 0;  // CLOCK_MONOTONIC at t0: record times + this = a server trace's clock
  std::string transport;   // "http1" (servebench's own) or "curl"
  // "kernel" (chunk times are the kernel's receive stamps), "read" (when the client read them)
  // or "mixed"; over kernel-stamped reads, how long bytes waited for the client to read them.
  std::string arrival_clock;
  uint64_t kernel_stamped_reads = 0, reads_stamped_at_read = 0;
  int64_t read_delay_p50_ns = 0, read_delay_p99_ns = 0, read_delay_p999_ns = 0;
  int64_t read_delay_max_ns = 0;
};

// One entry of vLLM's rps_change_events: the integer rate a ramp-up reached, and when.
struct RpsChangeEvent {
  int64_t rps = 0;
  std::string timestamp;  // local time, "YYYY-MM-DDTHH:MM:SS[.ffffff]" (core::local_iso_timestamp)
};

// What vLLM prints above / stores beside the metrics.
// vLLM's --probe-request-rate figures (run/probes.h): probes that succeeded and failed,
// and the successful ones' end-to-end latency.
struct ProbeStats {
  size_t completed = 0, failed = 0;
  double median_e2el_ms = 0, p99_e2el_ms = 0, max_e2el_ms = 0;
};

struct RunInfo {
  std::string backend = "openai";  // --backend / endpoint_type
  std::string label;               // --label
  std::string model_id;            // --model
  std::string tokenizer_id;
  int num_prompts = 0;
  double request_rate = std::numeric_limits<double>::infinity();  // vLLM's default
  double burstiness = 1.0;
  int max_concurrency = 0;                      // 0 = none (JSON null)
  std::string date;                             // "%Y%m%d-%H%M%S"
  std::map<std::string, std::string> metadata;  // --metadata key=value
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl"};
  std::map<std::string, double> goodput_slo_ms;
  // vLLM's ramp-up (request_rate is then inf): its strategy ("" = none), rates and events.
  std::string ramp_up_strategy;
  int64_t ramp_up_start_rps = 0, ramp_up_end_rps = 0;
  std::vector<RpsChangeEvent> rps_change_events;
  // vLLM hides the token lines and the ttft/tpot/itl sections without a tokenizer
  // (--skip-tokenizer-init); tokenizer_id is then written as null.
  bool has_tokenizer = true;
  std::optional<ClientHealth> client_health;  // printed by extras_console_block(summary, info)
  // From the server's vllm:spec_decode_* counters over the run, when it has them.
  std::optional<server_metrics::SpecDecodeStats> spec_decode;
  std::optional<ProbeStats> probes;  // with --probe-request-rate, when a probe succeeded
  // Planned requests never sent (Ctrl-C, a stop rule, the end of --duration); they are neither
  // completed nor failed. Printed by extras_console_block when > 0.
  uint64_t not_sent = 0;
};

// The "============ Serving Benchmark Result ============" block as vLLM prints it, including
// the optional lines (failed requests, concurrency, goodput, peak figures) where vLLM has them.
std::string vllm_console_block(const metrics::Summary& summary, const RunInfo& info);
// servebench's extras, printed after the vLLM block.
std::string extras_console_block(const metrics::Summary& summary);
// The same, plus the client-health lines when info.client_health is set.
std::string extras_console_block(const metrics::Summary& summary, const RunInfo& info);
// The server's own figures over the run (the result's `servebench.server_metrics`, written by
// server_metrics::summarize): the known vLLM / SGLang / TGI / Dynamo metrics it found.
std::string server_metrics_console_block(const nlohmann::json& server_metrics);
// After the runs of a point run several times (`run --num-runs`): each figure of the result's
// "servebench.repeats" as "mean ± 95% CI half-width (sd, n runs)" under vLLM's labels, in vLLM's
// console order. "" for a result without repeats.
std::string repeats_console_block(const nlohmann::json& result);

// The simulator's lateness a run may not pass silently: the lag of its tokens (sent − due) adds
// to every TTFT and ITL measured. Above these, one console line says so.
inline constexpr double kSimLagP99WarnMs = 10;  // 1 % of tokens later than a seed-001 ITL
inline constexpr double kSimLagMaxWarnMs = 50;  // one stall as long as a whole TTFT
// The warning line (no newline) when the summary's headline (`server_metrics`, as in the result
// JSON) shows the simulator's emission lag with a p99 above kSimLagP99WarnMs or a max above
// kSimLagMaxWarnMs; "" when within both or when the server is no servebench simulator.
std::string sim_lag_warning(const nlohmann::json& server_metrics);

// vLLM's result JSON (same keys, same meanings). With `detailed`, adds the per-request arrays
// (input_lens, output_lens, ttfts, itls, generated_texts, errors, start_times).
// Keys vLLM always writes stay (including its "latencies" and "queue_times" arrays); records are
// laid out in plan order (by index), warmups left out; strings are made valid UTF-8.
nlohmann::json vllm_result_json(const metrics::Summary& summary, const RunInfo& info,
                                std::span<const record::RequestRecord> records, bool detailed);

// Every string and key of `j` through core::valid_utf8_text (a byte that is not UTF-8 shown as
// `\xE9`), so dump() cannot throw "incomplete UTF-8 string" and lose a result after the run.
// vllm_result_json applies it; anything added to a result afterwards needs it again.
void make_valid_utf8(nlohmann::json& j);

// vLLM's `.pytorch.json` companion (written only when SAVE_TO_PYTORCH_BENCHMARK_FORMAT is set):
// one record per TTFT/TPOT/ITL aggregate present in `result`; `args` is the run's flags as JSON.
// Empty array when `result` has none of those keys.
nlohmann::json pytorch_benchmark_records(const nlohmann::json& result, const nlohmann::json& args,
                                         const std::string& model);

}  // namespace servebench::report

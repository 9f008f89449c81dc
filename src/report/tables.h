// File: report/tables.h
// Reads finished results (servebench's and vLLM's `--save-result` JSON) back in and lays many
// of them out side by side in the layouts of the seed write-ups: vLLM's performance-suite
// markdown and its pandas JSON, the concurrency table, GuideLLM's Info and Stats tables,
// inference-perf's stages table, a CSV of every figure, and a comparison against a baseline.
// Each layout follows the metric definitions of the tool it imitates (docs/reports.md); a
// figure a result does not carry is printed as "n/a", never guessed.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/repeats.h"

namespace servebench::report {

// One benchmark run as read from a result file: vLLM's result object (servebench's carries its
// extras under "servebench"), with the name its row goes by. Imported GuideLLM and
// inference-perf reports are mapped onto vLLM's keys (import_guidellm.cpp,
// import_inference_perf.cpp; docs/reports.md says which definitions differ).
struct RunResult {
  std::string source;     // the file it came from
  std::string format;     // "servebench", "vllm", "guidellm" or "inference-perf"
  std::string test_name;  // metadata "test_name", else the file's stem (vLLM's suite does that)
  nlohmann::json result;  // the object as read (or, imported, as mapped)
  // vLLM's performance suite's three test kinds: "serving" (`vllm bench serve` result),
  // "latency" (`vllm bench latency`: avg_latency, latencies, percentiles) or "throughput"
  // (`vllm bench throughput`: elapsed_time, num_requests, …, tokens_per_second).
  std::string kind = "serving";
};

// Reads one result file, telling its format by its keys. Throws core::Error (kInput) naming the
// file for unreadable, malformed or unknown input, and for a file holding several runs (a
// GuideLLM report: use load_file).
RunResult load_run(const std::string& path);
// Every run in one file: one for a vLLM or servebench result or an inference-perf lifecycle
// report, one per benchmark of a GuideLLM benchmarks.json.
std::vector<RunResult> load_file(const std::string& path);
// A file gives its runs; a directory gives every *.json in it (not recursing), sorted by name,
// except a suite's summary.json and inference-perf's per-request report (and its run summary
// when per-stage reports are beside it).
std::vector<RunResult> load_runs(const std::string& path);

// A figure under vLLM's result key ("request_throughput", "mean_ttft_ms", "p99_e2el_ms", …).
// E2EL aggregates missing from a result (vLLM writes them only with --percentile-metrics e2el)
// are derived from its "latencies" array when it has one entry per completed request. A dotted
// key walks nested objects ("percentiles.99" of a latency result).
std::optional<double> figure(const RunResult& run, const std::string& key);

// A figure's statistics across repeated runs (`run --num-runs`: the result's
// "servebench.repeats.<key>"); nullopt for a single run or a key without them.
std::optional<metrics::RepeatStats> repeat_figure(const RunResult& run, const std::string& key);
// "mean ± half-width of the 95% interval", numbers as Python's str() prints them.
std::string plus_minus(const metrics::RepeatStats& stats);

// The runs that were repeated (`run --num-runs`), one row each: runs, then vLLM's throughputs and
// TTFT/TPOT/ITL/E2EL mean and P99 as "mean ± half-width of the 95% interval"; "" when no run
// was repeated. The GuideLLM and inference-perf layouts end with it.
std::string repeats_markdown(std::span<const RunResult> runs);

// vLLM's serving table (convert-results-json-to-markdown.py), the columns of seeds 000/002.
// GPU is metadata "gpu_type" as "<lines>x<first line>".
// kTabulate: tabulate's "pipe" layout, rows sorted by test name, as vLLM's script prints it
// (seed 002); kAligned: cells left-aligned and padded, rows in input order (seed 000).
enum class MarkdownStyle { kTabulate, kAligned };
std::string vllm_serving_markdown(std::span<const RunResult> runs, MarkdownStyle style);

// The same tables as vLLM's pandas JSON: {"latency": {…}, "throughput": {…}, "serving":
// {column: {"<row>": value}}}, each table the runs of its kind in input order (an empty kind is
// {}), GPU as stored, Python's separators.
std::string vllm_pandas_json(std::span<const RunResult> runs);

// vLLM's latency and throughput tables (convert-results-json-to-markdown.py's
// latency_column_mapping and throughput_results_column_mapping) over the runs of that kind.
std::string vllm_latency_markdown(std::span<const RunResult> runs, MarkdownStyle style);
std::string vllm_throughput_markdown(std::span<const RunResult> runs, MarkdownStyle style);
// The suite's tables: with only serving runs, the serving table alone (as before); with
// latency or throughput runs, "## Latency tests", "## Throughput tests" and "## Serving tests"
// sections, each kind present.
std::string vllm_suite_markdown(std::span<const RunResult> runs, MarkdownStyle style);
// `run --search-slo`'s probes (runs read from a search.json) as a table per search: load, sent,
// within the SLOs, attainment, each SLO metric's P99, meets; then the answer. "" without probes.
// vllm_suite_markdown appends it.
std::string search_markdown(std::span<const RunResult> runs);
// The runs of one kind.
std::vector<RunResult> runs_of_kind(std::span<const RunResult> runs, const std::string& kind);

// Seed 004's table: one row per max concurrency (request throughput, output throughput,
// mean/P99 E2E, TTFT, TPOT), one table per label.
std::string concurrency_markdown(std::span<const RunResult> runs);

// GuideLLM's "Benchmarks Info" and "Benchmarks Stats" console tables (seed 003), one row per
// run, with GuideLLM's TPOT/ITL definitions where the result's per-request detail allows.
std::string guidellm_tables(std::span<const RunResult> runs);

// inference-perf's stages table as in seed 003: qps, total_requests, avg_prompt_tokens,
// avg_output_tokens, avg_time_per_request (s).
std::string inference_perf_stages_markdown(std::span<const RunResult> runs);

// One CSV row per run: its name and source, then every scalar figure of any run (nested
// servebench extras as "servebench.<key>.<field>"); per-request arrays left out.
std::string figures_csv(std::span<const RunResult> runs);

// `servebench compare`: each input is the runs of one file or directory; the first is the
// baseline. Rows are matched by test name (kByName) or by position (kByOrder).
struct CompareInput {
  std::string name;  // column heading
  std::vector<RunResult> runs;
};
enum class CompareMatch { kByName, kByOrder };
enum class CompareFormat { kMarkdown, kCsv, kJson };
// The default metrics compared when none are named.
std::vector<std::string> default_compare_metrics();
std::string compare_runs(std::span<const CompareInput> inputs,
                         const std::vector<std::string>& metrics, CompareMatch match,
                         CompareFormat format);

}  // namespace servebench::report

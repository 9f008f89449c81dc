// The points of one target, in vLLM's order (serve.py main_async): target and model → prompts
// → initial test request → each point (point.h) → the sweep's table.
#include "run/sweep.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "report/tables.h"
#include "run/coordination.h"
#include "run/interrupt.h"
#include "run/names.h"
#include "run/point.h"
#include "run/point_setup.h"
#include "run/sequence.h"
#include "run/server_metrics_recorder.h"
#include "run/stages.h"

namespace servebench::run {
namespace {

// After a sweep, its runs side by side: seed 004's table when the concurrency varied, else
// vLLM's serving table (seed 000).
void print_sweep_summary(const Spec& c, std::vector<report::RunResult> runs) {
  if (runs.size() < 2) return;
  std::printf("\n%s\n", std::string(50, '=').c_str());
  std::printf("Sweep: %zu runs\n", runs.size());
  if (c.limits.profile != LoadProfile::kNone) {
    std::fputs(report::guidellm_tables(runs).c_str(), stdout);  // GuideLLM's tables (seed 003)
  } else if (!c.stages.empty()) {
    std::fputs(report::inference_perf_stages_markdown(runs).c_str(), stdout);  // seed 003
  } else if (c.max_concurrencies.size() > 1 && c.request_rates.size() == 1) {
    std::fputs(report::concurrency_markdown(runs).c_str(), stdout);
  } else {
    std::fputs(report::vllm_serving_markdown(runs, report::MarkdownStyle::kAligned).c_str(),
               stdout);
  }
  std::fflush(stdout);
}

// A sweep run's row name: what varies ("qps_4", "concurrency_16", "qps_4_concurrency_16").
std::string sweep_point_name(const Spec& c) {
  if (c.stage_index >= 0) return stage_name(c.stage_index);  // inference-perf's "stage_0", …
  std::string name;
  if (c.request_rates.size() > 1) name = "qps_" + python_float(c.request_rate);
  if (c.max_concurrencies.size() > 1)
    name +=
        (name.empty() ? "" : "_") + std::string("concurrency_") + std::to_string(c.max_concurrency);
  return name;
}

}  // namespace

std::string no_temperature_warning(const std::string& what) {
  return "WARNING: " + what +
         ", so requests carry none and the server's default applies (vLLM's benchmark no "
         "longer sends temperature=0); add --temperature=0 for greedy decoding.";
}

int run_sweep(Spec c) {
  // A fresh sweep forgets an earlier stop rule (not the second and later of several targets:
  // they share the flag).
  if (!c.coordination || c.coordination->index == 0) g_stop.store(false);
  // A signal in any phase before the main run ends the command there (core/interrupt.h).
  RunTokenizer run_tok = tokenizer_for(c.tokenizer, c.model);
  core::throw_if_interrupted("loading the tokenizer");
  const std::shared_ptr<const tokenizer::Tokenizer>& tok = run_tok.tok;
  const std::string date = core::wall_timestamp_compact();
  Target target = resolve_target(c, tok);
  // Against a server that named its model itself, that model's tokenizer, as vLLM does.
  if (c.tokenizer.empty() && c.model.empty() && !c.embedded)
    run_tok = tokenizer_for("", target.model_id);
  target.tokenizer_id = run_tok.id;
  core::throw_if_interrupted("setting up the target");
  // vLLM's arrivals draw from numpy's global generator after the dataset (prefix_repetition).
  const std::vector<dataset::Prompt> prompts = make_prompts(c, *tok, &c.numpy_words_drawn);
  core::throw_if_interrupted("building the prompts");
  // Some datasets yield fewer prompts than --num-prompts (a short trace, --no-oversample,
  // prefix_repetition's whole groups): the run, its warmups and its results count those.
  c.num_prompts_requested = c.num_prompts;
  c.num_prompts = static_cast<int>(prompts.size());
  c.num_conversations =
      static_cast<int>(std::count_if(prompts.begin(), prompts.end(), [](const dataset::Prompt& p) {
        return p.conversation >= 0 && p.turn == 0;
      }));
  if (c.request_rates.empty()) c.request_rates = {c.request_rate};
  if (c.max_concurrencies.empty()) c.max_concurrencies = {c.max_concurrency};
  if (!c.temperature_given && c.warn_no_temperature) {
    std::printf("%s\n", no_temperature_warning("no --temperature given").c_str());
  }
  initial_test_run(c, target.endpoint);
  // Which /metrics pages each run scrapes, looked for once (server_metrics_recorder.h).
  const std::optional<server_metrics::SamplerOptions> scrape =
      server_metrics_options(c, target.endpoint);
  core::throw_if_interrupted("looking for the server's /metrics");

  client::BodyOptions body;
  body.ignore_eos = c.ignore_eos;
  body.extra_body_json = c.extra_body_json;
  body.request_id_prefix = c.request_id_prefix;
  std::vector<report::RunResult> sweep;
  // vLLM's rate × concurrency lists, or a GuideLLM profile's benchmarks (sequence.h).
  BenchmarkSequence benchmarks(c);
  for (std::optional<Spec> next; (next = benchmarks.next(sweep));) {
    Spec& point = *next;
    if (sweep.empty()) core::throw_if_interrupted("setting up the first point");
    if (core::interrupted()) {  // between points: those done are saved, the rest not started
      std::fprintf(stderr,
                   "servebench: stopped by %s between the sweep's points: %zu done and saved, "
                   "the rest not started\n",
                   core::interrupt_name(), sweep.size());
      return core::interrupt_exit_code();
    }
    if (!c.stages.empty()) enter_stage(point, sweep.size(), target.model_id, date);
    if (!sweep.empty()) point.shard.start_at_ns.reset();  // the first point waits for --start-at
    PointResult done = execute_point(point, target, *tok, prompts, body, scrape, date);
    // The points not started are not part of the sweep: 130 after SIGINT, 143 after SIGTERM.
    if (done.interrupted) return core::interrupt_exit_code();
    sweep.push_back(report::RunResult{.source = done.result_file,
                                      .format = "servebench",
                                      .test_name = point.limits.benchmark.empty()
                                                       ? sweep_point_name(point)
                                                       : point.limits.benchmark,
                                      .result = std::move(done.result)});
    pause_between_stages(c, sweep.size());  // --stages: inference-perf's load.interval
  }
  print_sweep_summary(c, std::move(sweep));
  return 0;
}

}  // namespace servebench::run

// `servebench run`'s dataset flags (dataset_flags.h), checked as run_flag_checks.cpp checks the
// rest: every bad value is one line naming the flag.
#include "cli/dataset_flags.h"

#include <cmath>

#include "cli/values.h"

namespace servebench::cli {
namespace {

int32_t length_flag(const char* flag, const std::string& text, int64_t low) {
  return static_cast<int32_t>(parse_int(flag, text, low, 10'000'000));
}

}  // namespace

void check_random_dataset_flags(const RawFlags& f, const Given& given, dataset::RandomOptions& r) {
  r.input_len = given("--input-len") ? length_flag("--input-len", f.input_len, 0)
                                     : length_flag("--random-input-len", f.random_input_len, 0);
  r.output_len = given("--output-len") ? length_flag("--output-len", f.output_len, 1)
                                       : length_flag("--random-output-len", f.random_output_len, 1);
  r.range_ratio = parse_double("--random-range-ratio", f.random_range_ratio);
  if (!(r.range_ratio >= 0 && r.range_ratio < 1)) {
    usage("--random-range-ratio", "must be in [0, 1), got " + f.random_range_ratio);
  }
  r.prefix_len = length_flag("--random-prefix-len", f.random_prefix_len, 0);
  if (!dataset::parse_token_rule(f.random_token_rule, &r.token_rule)) {
    usage("--random-token-rule", "must be vllm or round-trip, got '" + f.random_token_rule + "'");
  }
  if (r.prefix_len + std::floor(r.input_len * (1 - r.range_ratio)) < 1) {
    usage("--random-input-len", "too small: the shortest prompt would have 0 tokens");
  }
}

void check_other_dataset_flags(const RawFlags& f, const Given& given, run::Spec& c) {
  dataset::DatasetOptions& d = c.dataset;
  const dataset::FileSampling sampling{f.dataset_path, c.seed, !f.disable_shuffle,
                                       !f.no_oversample};
  d.sharegpt.file = d.custom.file = sampling;
  if (given("--sharegpt-output-len")) {
    d.sharegpt.output_len = length_flag("--sharegpt-output-len", f.sharegpt_output_len, 1);
  }
  d.sharegpt.multi_turn = f.multi_turn;
  d.sharegpt.max_turns = length_flag("--max-turns", f.max_turns, 0);
  if (given("--max-active-conversations")) {
    c.max_active_conversations = static_cast<int>(
        parse_int("--max-active-conversations", f.max_active_conversations, 1, 10'000'000));
  }
  if (f.multi_turn && f.dataset_name != "sharegpt")
    usage("--multi-turn", "replays sharegpt conversations; use --dataset-name sharegpt");
  for (const char* flag : {"--max-turns", "--max-active-conversations"}) {
    if (!f.multi_turn && given(flag)) usage(flag, "applies only with --multi-turn");
  }
  d.custom.output_len =
      static_cast<int32_t>(parse_int("--custom-output-len", f.custom_output_len, -1, 10'000'000));
  if (d.custom.output_len == 0) usage("--custom-output-len", "must be >= 1, or -1 for the file's");

  d.sonnet.path = f.dataset_path;
  d.sonnet.seed = c.seed;
  d.sonnet.input_len = length_flag("--sonnet-input-len", f.sonnet_input_len, 1);
  d.sonnet.output_len = length_flag("--sonnet-output-len", f.sonnet_output_len, 1);
  d.sonnet.prefix_len = length_flag("--sonnet-prefix-len", f.sonnet_prefix_len, 0);

  auto& pr = d.prefix_repetition;
  pr.prefix_len = length_flag("--prefix-repetition-prefix-len", f.prefix_repetition_prefix_len, 0);
  pr.suffix_len = length_flag("--prefix-repetition-suffix-len", f.prefix_repetition_suffix_len, 0);
  pr.num_prefixes =
      length_flag("--prefix-repetition-num-prefixes", f.prefix_repetition_num_prefixes, 1);
  pr.output_len = length_flag("--prefix-repetition-output-len", f.prefix_repetition_output_len, 1);
  // vLLM's --output-len sets sharegpt's, custom's and prefix_repetition's output lengths (and
  // random's, check_random_dataset_flags); --input-len only random's. Sonnet keeps its own flags.
  if (given("--output-len")) {
    int32_t output_len = length_flag("--output-len", f.output_len, 1);
    d.sharegpt.output_len = d.custom.output_len = pr.output_len = output_len;
  }
  pr.seed = c.seed;
  pr.shuffle = !f.disable_shuffle;

  auto& gsp = d.shared_prefix;
  gsp.num_groups = length_flag("--gsp-num-groups", f.gsp_num_groups, 1);
  gsp.prompts_per_group = length_flag("--gsp-prompts-per-group", f.gsp_prompts_per_group, 1);
  gsp.system_prompt_len = length_flag("--gsp-system-prompt-len", f.gsp_system_prompt_len, 0);
  gsp.question_len = length_flag("--gsp-question-len", f.gsp_question_len, 0);
  gsp.output_len = length_flag("--gsp-output-len", f.gsp_output_len, 1);
  gsp.range_ratio = parse_double("--gsp-range-ratio", f.gsp_range_ratio);
  if (!(gsp.range_ratio > 0 && gsp.range_ratio <= 1)) {
    usage("--gsp-range-ratio", "must be in (0, 1], got " + f.gsp_range_ratio);
  }
  gsp.seed = c.seed;
  gsp.shuffle = !f.disable_shuffle && !f.gsp_ordered;

  auto& t = d.trace;
  t.path = f.dataset_path;
  t.seed = c.seed;
  if (d.name == "azure_trace") t.format = dataset::TraceOptions::Format::kAzureCsv;
  if (d.name == "timed_trace") {
    // vLLM's TimedTrace and its defaults: seconds, 16-token hash blocks, configurable labels.
    t.block_tokens = length_flag("--timed-trace-chunk-hash-size", f.timed_trace_chunk_hash_size, 1);
    t.seconds_per_unit = parse_double("--timed-trace-sec-multiplier", f.timed_trace_sec_multiplier);
    if (!(t.seconds_per_unit > 0) || std::isinf(t.seconds_per_unit)) {
      usage("--timed-trace-sec-multiplier", "must be a positive number");
    }
    t.timestamp_field = f.timed_trace_label_timestamp;
    t.input_field = f.timed_trace_label_input_length;
    t.output_field = f.timed_trace_label_output_length;
    t.hash_ids_field = f.timed_trace_label_hash_ids;
  } else {
    t.block_tokens = length_flag("--trace-block-tokens", f.trace_block_tokens, 1);
  }
  c.trace_time_scale = parse_double("--trace-time-scale", f.trace_time_scale);
  if (!(c.trace_time_scale > 0) || std::isinf(c.trace_time_scale)) {
    usage("--trace-time-scale", "must be a positive number, got " + f.trace_time_scale);
  }
}

}  // namespace servebench::cli

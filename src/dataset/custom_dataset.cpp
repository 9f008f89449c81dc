// vLLM's `custom` dataset (vllm/benchmarks/datasets: CustomDataset): JSONL rows with a
// "prompt" and an optional "output_tokens", shuffled with Python's generator seeded with the
// seed, the first N taken, oversampled when there are fewer. The prompt is sent as it is in the
// file (vLLM's --skip-chat-template; see docs/datasets.md).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "dataset/dataset.h"
#include "dataset/input_file.h"
#include "dataset/py_random.h"
#include "dataset/sampling.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

namespace od = simdjson::ondemand;

struct Row {
  std::string prompt;
  std::optional<int64_t> output_tokens;
  size_t output_offset = 0;  // of the value, for the range check made after reading
};

}  // namespace

std::vector<Prompt> custom_prompts(size_t count, const CustomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer, DatasetReport* report) {
  if (options.output_len != -1)
    check_range("--custom-output-len", options.output_len, 1, INT32_MAX);
  DatasetReport local;
  const InputFile file(options.file.path);
  std::vector<Row> rows;
  Row row;
  bool has_prompt = false;
  read_jsonl(
      file,
      [&](size_t, std::string_view key, od::value& value) {
        if (key == "prompt") {
          std::string_view text;
          const size_t at = file.offset_of(value.raw_json_token().data());
          if (value.type() != od::json_type::string) file.fail(at, "\"prompt\" must be a string");
          if (value.get_string().get(text) != simdjson::SUCCESS) {
            // simdjson has checked the bytes are UTF-8; an escape can still make bad text.
            file.fail(at,
                      "\"prompt\" has an invalid escape (a lone surrogate such as \\ud800, "
                      "or a bad \\u sequence): not valid UTF-8 text");
          }
          row.prompt.assign(text);
          has_prompt = true;
        } else if (key == "output_tokens") {
          row.output_offset = file.offset_of(value.raw_json_token().data());
          row.output_tokens = json_integer(file, value, "output_tokens");
        }
      },
      [&](size_t line_offset) {
        if (!has_prompt) file.fail(line_offset, "row has no \"prompt\" field");
        if (options.output_len == -1 && !row.output_tokens) {
          file.fail(line_offset,
                    "row has no \"output_tokens\" field, needed with --custom-output-len -1");
        }
        rows.push_back(std::move(row));
        row = Row{};
        has_prompt = false;
        return true;
      });
  local.rows = rows.size();
  if (options.file.shuffle) {
    PyRandom rng(options.file.seed);
    rng.shuffle(rows);
  }
  std::vector<Prompt> prompts;
  prompts.reserve(std::min(count, rows.size()));
  size_t empty_prompts = 0;
  for (Row& r : rows) {
    if (prompts.size() >= count) break;
    if (r.prompt.find_first_not_of(" \t\r\n") == std::string::npos) {
      ++empty_prompts;  // nothing to send: not a usable row
      continue;
    }
    Prompt p;
    p.output_tokens = static_cast<int32_t>(options.output_len);
    if (options.output_len == -1) {
      if (*r.output_tokens < 1 || *r.output_tokens > INT32_MAX) {
        file.fail(r.output_offset,
                  "\"output_tokens\" is out of range (" +
                      std::string(*r.output_tokens < 1 ? "too small" : "too large") +
                      "; allowed 1 to " + std::to_string(INT32_MAX) + "), got " +
                      std::to_string(*r.output_tokens));
      }
      p.output_tokens = static_cast<int32_t>(*r.output_tokens);
    }
    p.prompt_tokens = static_cast<int32_t>(tokenizer.count(r.prompt));
    p.text = std::move(r.prompt);
    prompts.push_back(std::move(p));
  }
  if (empty_prompts > 0) {
    local.notes.push_back(std::to_string(empty_prompts) + " rows of " + options.file.path +
                          " skipped: empty \"prompt\"");
  }
  fill_to_count(prompts, count, options.file, "rows with a prompt", local);
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset

// vLLM's `sharegpt` dataset (vllm/benchmarks/datasets: ShareGPTDataset.load_data and .sample,
// is_valid_sequence). The file is one large JSON array, so it is scanned once with simdjson
// On-Demand keeping only where each kept row's first two turns are; only the strings of rows
// actually looked at after the shuffle are unescaped and tokenized.
#include <string>
#include <string_view>
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

// vLLM's is_valid_sequence with its defaults (min_len 4, max_prompt_len 1024,
// max_total_len 2048); a fixed --sharegpt-output-len skips the output minimum.
bool is_valid_sequence(int64_t prompt_len, int64_t output_len, bool skip_min_output) {
  constexpr int64_t kMinLen = 4, kMaxPrompt = 1024, kMaxTotal = 2048;
  return !(prompt_len < kMinLen || (!skip_min_output && output_len < kMinLen) ||
           prompt_len > kMaxPrompt || prompt_len + output_len > kMaxTotal);
}

// A row with at least two turns: the raw JSON string tokens (quotes included) of turn 0's and
// turn 1's "value".
struct Row {
  std::string_view prompt_json, reply_json;
  std::vector<std::string_view> later_json;  // turns 2, 3, … (read only for --multi-turn)
};

// The "value" of one turn as a raw JSON string token; fails with the turn's place otherwise.
std::string_view turn_value(const InputFile& file, od::value turn, size_t index) {
  const char* at = turn.raw_json_token().data();
  od::object object;
  if (turn.get_object().get(object) != simdjson::SUCCESS) {
    file.fail(file.offset_of(at),
              "conversation turn " + std::to_string(index) + " is not an object");
  }
  od::value value;
  if (object.find_field_unordered("value").get(value) != simdjson::SUCCESS) {
    file.fail(file.offset_of(at),
              "conversation turn " + std::to_string(index) + " has no \"value\" field");
  }
  std::string_view raw = value.raw_json_token();
  if (value.type() != od::json_type::string) {
    file.fail(file.offset_of(raw.data()),
              "conversation turn " + std::to_string(index) + " \"value\" is not a string");
  }
  return raw;
}

// Scans the array; counts every element in report.rows and keeps those with >= 2 turns.
std::vector<Row> scan_rows(const InputFile& file, bool all_turns, DatasetReport& report) {
  od::parser parser;
  std::vector<Row> rows;
  od::document doc;
  const char* at = file.text().data();
  bool iterating = false;  // a document that never started has no location to ask for
  try {
    doc = parser.iterate(file.padded());
    iterating = true;
    od::array array;
    const simdjson::error_code top = doc.get_array().get(array);
    if (top == simdjson::INCORRECT_TYPE) {
      file.fail(0, "expected a JSON array of conversations ([{\"conversations\": [...]}, ...])");
    }
    if (top != simdjson::SUCCESS) throw simdjson::simdjson_error(top);
    for (auto element : array) {
      od::value entry_value = element.value();
      at = entry_value.raw_json_token().data();
      od::object entry;
      if (entry_value.get_object().get(entry) != simdjson::SUCCESS) {
        file.fail(file.offset_of(at), "array element is not an object");
      }
      ++report.rows;
      for (auto field : entry) {
        if (std::string_view(field.unescaped_key()) != "conversations") continue;
        od::value conversations = field.value();
        at = conversations.raw_json_token().data();
        od::array turns;
        if (conversations.get_array().get(turns) != simdjson::SUCCESS) {
          file.fail(file.offset_of(at), "\"conversations\" is not an array");
        }
        Row row;
        size_t n = 0;
        for (auto turn : turns) {
          if (n == 0) row.prompt_json = turn_value(file, turn.value(), 0);
          if (n == 1) row.reply_json = turn_value(file, turn.value(), 1);
          if (n >= 2) row.later_json.push_back(turn_value(file, turn.value(), n));
          if (++n == 2 && !all_turns) break;  // the rest of the conversation is skipped unread
        }
        if (n >= 2) rows.push_back(row);
      }
    }
    if (const char* extra = trailing_text(doc)) {
      file.fail(file.offset_of(extra), "unexpected text after the JSON array");
    }
  } catch (const simdjson::simdjson_error& e) {
    if (size_t extra = text_after_value(file.text());
        e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && extra != std::string_view::npos) {
      file.fail(extra, "unexpected text after the JSON array");
    }
    const char* location = nullptr;
    if (iterating && doc.current_location().get(location) == simdjson::SUCCESS) at = location;
    file.fail(file.offset_of(at), std::string("not valid JSON: ") + e.what());
  }
  return rows;
}

// Unescapes one raw JSON string token (only for rows actually looked at); a bad escape (a lone
// surrogate such as \ud800) fails at the string's place.
std::string unescape(const InputFile& file, od::parser& parser, std::string_view raw_json) {
  simdjson::padded_string copy(raw_json);
  std::string_view text;
  od::document doc;
  if (parser.iterate(copy).get(doc) != simdjson::SUCCESS ||
      doc.get_string().get(text) != simdjson::SUCCESS) {
    file.fail(file.offset_of(raw_json.data()),
              "conversation \"value\" has an invalid escape (a lone surrogate such as \\ud800, "
              "or a bad \\u sequence): not valid UTF-8 text");
  }
  return std::string(text);
}

// --multi-turn: the row's user turns (0, 2, 4, …) with their replies' lengths, up to
// max_turns; empty when the first pair fails vLLM's filter.
std::vector<Prompt> conversation_turns(const InputFile& file, od::parser& parser, const Row& row,
                                       const ShareGptOptions& options,
                                       const tokenizer::Tokenizer& tokenizer) {
  const bool fixed_output = options.output_len >= 0;
  std::vector<std::string_view> raw = {row.prompt_json, row.reply_json};
  raw.insert(raw.end(), row.later_json.begin(), row.later_json.end());
  std::vector<Prompt> turns;
  for (size_t i = 0; i + 1 < raw.size(); i += 2) {
    if (options.max_turns > 0 && turns.size() >= static_cast<size_t>(options.max_turns)) break;
    Prompt p;
    p.text = unescape(file, parser, raw[i]);
    const auto prompt_len = static_cast<int64_t>(tokenizer.count(p.text));
    const int64_t output_len =
        fixed_output ? options.output_len
                     : static_cast<int64_t>(tokenizer.count(unescape(file, parser, raw[i + 1])));
    if (!is_valid_sequence(prompt_len, output_len, fixed_output)) break;
    p.prompt_tokens = static_cast<int32_t>(prompt_len);
    p.output_tokens = static_cast<int32_t>(output_len);
    p.turn = static_cast<int32_t>(turns.size());
    turns.push_back(std::move(p));
  }
  return turns;
}

// What the usable-row count in a too-few-rows notice is of.
std::string length_filters(size_t multi_turn_rows) {
  return "vLLM's length filters (prompt 4..1024 tokens, output >= 4, together <= 2048; " +
         std::to_string(multi_turn_rows) + " rows have >= 2 turns)";
}

// sharegpt_prompts for --multi-turn: conversations picked (shuffle, oversampling) as rows are
// for single prompts, then flattened turn by turn.
std::vector<Prompt> sharegpt_conversations(const InputFile& file, size_t count,
                                           const ShareGptOptions& options, std::vector<Row>& rows,
                                           size_t multi_turn, const tokenizer::Tokenizer& tokenizer,
                                           DatasetReport& report) {
  od::parser small;
  std::vector<std::vector<Prompt>> conversations;
  // First turns stand for their conversations in fill_to_count (its oversampling draws whole
  // conversations); `conversation` holds the position in `conversations` meanwhile.
  std::vector<Prompt> firsts;
  for (const Row& row : rows) {
    if (conversations.size() >= count) break;
    std::vector<Prompt> turns = conversation_turns(file, small, row, options, tokenizer);
    if (turns.empty()) continue;
    firsts.push_back(turns.front());
    firsts.back().conversation = static_cast<int64_t>(conversations.size());
    conversations.push_back(std::move(turns));
  }
  fill_to_count(firsts, count, options.file,
                "conversations whose first turn passes " + length_filters(multi_turn), report);
  std::vector<Prompt> prompts;
  for (size_t c = 0; c < firsts.size(); ++c) {
    for (const Prompt& turn : conversations[static_cast<size_t>(firsts[c].conversation)]) {
      prompts.push_back(turn);
      prompts.back().conversation = static_cast<int64_t>(c);
    }
  }
  return prompts;
}

}  // namespace

std::vector<Prompt> sharegpt_prompts(size_t count, const ShareGptOptions& options,
                                     const tokenizer::Tokenizer& tokenizer, DatasetReport* report) {
  if (options.output_len < -1) {
    check_range("--sharegpt-output-len", options.output_len, 1, INT32_MAX);
  }
  DatasetReport local;
  const InputFile file(options.file.path);
  if (options.max_turns < 0) check_range("--max-turns", options.max_turns, 0, INT32_MAX);
  std::vector<Row> rows = scan_rows(file, options.multi_turn, local);
  const size_t multi_turn = rows.size();
  if (options.file.shuffle) {
    PyRandom rng(options.file.seed);
    rng.shuffle(rows);
  }
  if (options.multi_turn) {
    std::vector<Prompt> prompts =
        sharegpt_conversations(file, count, options, rows, multi_turn, tokenizer, local);
    if (report) *report = std::move(local);
    return prompts;
  }
  const bool fixed_output = options.output_len >= 0;
  od::parser small;
  std::vector<Prompt> prompts;
  prompts.reserve(count);
  for (const Row& row : rows) {
    if (prompts.size() >= count) break;
    Prompt p;
    p.text = unescape(file, small, row.prompt_json);
    const auto prompt_len = static_cast<int64_t>(tokenizer.count(p.text));
    const int64_t output_len =
        fixed_output ? options.output_len
                     : static_cast<int64_t>(tokenizer.count(unescape(file, small, row.reply_json)));
    if (!is_valid_sequence(prompt_len, output_len, fixed_output)) continue;
    p.prompt_tokens = static_cast<int32_t>(prompt_len);
    p.output_tokens = static_cast<int32_t>(output_len);
    prompts.push_back(std::move(p));
  }
  fill_to_count(prompts, count, options.file,
                "conversations of >= 2 turns that pass " + length_filters(multi_turn), local);
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset

// Traces replayed at their timestamps:
//   mooncake     Mooncake's FAST'25 traces (JSONL; timestamp in ms, hash_ids of 512-token
//                blocks), as SGLang's bench_serving reads them
//   timed_trace  vLLM's TimedTrace: the same JSONL with configurable field names, timestamp
//                unit and block size (vLLM's defaults: seconds, 16 tokens)
//   azure_trace  the Azure LLM inference traces (CSV: TIMESTAMP,ContextTokens,GeneratedTokens)
// The first `count` usable rows in file order are taken (as SGLang and vLLM do), then put in
// timestamp order. Each hash id stands for one block of tokens whose text depends only on
// (seed, id): prompts that share ids share text, so a server's prefix cache sees the sharing.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "dataset/dataset.h"
#include "dataset/input_file.h"
#include "dataset/sampling.h"
#include "dataset/synth.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

namespace od = simdjson::ondemand;
using tokenizer::TokenId;

struct TraceRow {
  int64_t time_ns = 0;  // as in the file, converted to ns
  int64_t input_tokens = 0, output_tokens = 0;
  std::vector<int64_t> hash_ids;
};

// Times are kept in int64 ns; this bound (~126 years either side of 1970) leaves room for the
// difference of two of them.
constexpr int64_t kMaxTimeNs = 4'000'000'000'000'000'000;

std::optional<int64_t> seconds_to_ns(double seconds) {
  const double ns = seconds * 1e9;
  if (!std::isfinite(ns) || std::abs(ns) > static_cast<double>(kMaxTimeNs)) return std::nullopt;
  return std::llround(ns);
}

// Rows kept and rows skipped (lengths < 1), with the reason of the first skip.
struct Rows {
  std::vector<TraceRow> kept;
  size_t read = 0, skipped = 0;
  std::string first_skip;
};

void keep_or_skip(Rows& rows, TraceRow&& row, const InputFile& file, size_t offset) {
  ++rows.read;
  constexpr int64_t kMaxTokens = 10'000'000;  // the CLI's limit for every length flag
  if (row.input_tokens > kMaxTokens || row.output_tokens > kMaxTokens) {
    file.fail(offset, "input or output length over " + std::to_string(kMaxTokens) + " tokens");
  }
  if (row.input_tokens >= 1 && row.output_tokens >= 1) {
    rows.kept.push_back(std::move(row));
    return;
  }
  if (rows.skipped++ == 0) {
    rows.first_skip = file.where(offset) + " (input " + std::to_string(row.input_tokens) +
                      ", output " + std::to_string(row.output_tokens) + ")";
  }
}

// ---- Mooncake / timed_trace JSONL

Rows read_jsonl_trace(const InputFile& file, const TraceOptions& o, size_t count) {
  Rows rows;
  TraceRow row;
  bool has_time = false, has_input = false, has_output = false;
  read_jsonl(
      file,
      [&](size_t, std::string_view key, od::value& value) {
        if (key == o.timestamp_field) {
          double t = 0;
          if (value.type() != od::json_type::number ||
              value.get_double().get(t) != simdjson::SUCCESS || !std::isfinite(t)) {
            file.fail(file.offset_of(value.raw_json_token().data()),
                      "\"" + o.timestamp_field + "\" must be a number");
          }
          const std::optional<int64_t> ns = seconds_to_ns(t * o.seconds_per_unit);
          if (!ns) {
            file.fail(file.offset_of(value.raw_json_token().data()),
                      "\"" + o.timestamp_field + "\" is out of range");
          }
          row.time_ns = *ns;
          has_time = true;
        } else if (key == o.input_field) {
          row.input_tokens = json_integer(file, value, key);
          has_input = true;
        } else if (key == o.output_field) {
          row.output_tokens = json_integer(file, value, key);
          has_output = true;
        } else if (key == o.hash_ids_field) {
          od::array ids;
          if (value.get_array().get(ids) != simdjson::SUCCESS) {
            file.fail(file.offset_of(value.raw_json_token().data()),
                      "\"" + o.hash_ids_field + "\" must be an array of integers");
          }
          for (auto id : ids) {
            od::value v = id.value();
            row.hash_ids.push_back(json_integer(file, v, o.hash_ids_field));
          }
        }
      },
      [&](size_t line_offset) {
        const char* missing = !has_time     ? o.timestamp_field.c_str()
                              : !has_input  ? o.input_field.c_str()
                              : !has_output ? o.output_field.c_str()
                                            : nullptr;
        if (missing) file.fail(line_offset, "row has no \"" + std::string(missing) + "\" field");
        keep_or_skip(rows, std::move(row), file, line_offset);
        row = TraceRow{};
        has_time = has_input = has_output = false;
        return rows.kept.size() < count;
      });
  return rows;
}

// ---- Azure CSV (RFC 4180: quoted fields may hold commas, doubled quotes and newlines)

struct CsvRecord {
  std::vector<std::string> fields;
  size_t offset = 0;  // of the record's first byte
};

class CsvReader {
 public:
  explicit CsvReader(const InputFile& file) : file_(file), text_(file.text()) {}
  // The next non-empty record; false at the end of the file.
  bool next(CsvRecord& record) {
    while (pos_ < text_.size()) {
      record.fields.clear();
      record.offset = pos_;
      read_record(record);
      if (!(record.fields.size() == 1 && record.fields[0].empty())) return true;
    }
    return false;
  }

 private:
  void read_record(CsvRecord& record) {
    std::string field;
    for (;;) {
      if (pos_ < text_.size() && text_[pos_] == '"') {
        const size_t open = pos_++;
        for (;;) {
          if (pos_ >= text_.size()) file_.fail(open, "quoted field is never closed");
          if (text_[pos_] == '"') {
            if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
              field += '"';
              pos_ += 2;
              continue;
            }
            ++pos_;
            break;
          }
          field += text_[pos_++];
        }
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
            text_[pos_] != '\r') {
          file_.fail(pos_, "unexpected character after a quoted field");
        }
      } else {
        while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
               text_[pos_] != '\r') {
          if (text_[pos_] == '"') file_.fail(pos_, "stray quote inside an unquoted field");
          field += text_[pos_++];
        }
      }
      record.fields.push_back(std::move(field));
      field.clear();
      if (pos_ >= text_.size()) return;
      const char c = text_[pos_++];
      if (c == ',') continue;
      if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      return;
    }
  }

  const InputFile& file_;
  std::string_view text_;
  size_t pos_ = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" ('T' also separates), or a plain number
// of seconds. Returns ns since the epoch, or nullopt.
std::optional<int64_t> parse_time_ns(std::string_view s) {
  double seconds = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
  if (ec == std::errc() && end == s.data() + s.size()) return seconds_to_ns(seconds);
  size_t i = 0;
  auto digits = [&](size_t n, int64_t& out) {
    if (i + n > s.size()) return false;
    out = 0;
    for (size_t k = 0; k < n; ++k, ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  auto expect = [&](char c) { return i < s.size() && s[i++] == c; };
  int64_t y, mo, d, h, mi, sec;
  if (!digits(4, y) || !expect('-') || !digits(2, mo) || !expect('-') || !digits(2, d)) {
    return std::nullopt;
  }
  if (i >= s.size() || (s[i] != ' ' && s[i] != 'T')) return std::nullopt;
  ++i;
  if (!digits(2, h) || !expect(':') || !digits(2, mi) || !expect(':') || !digits(2, sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int64_t scale = 100'000'000;
    const size_t start = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      frac_ns += (s[i] - '0') * scale;
      scale /= 10;
    }
    if (i == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int64_t sign = s[i++] == '-' ? -1 : 1;
    int64_t oh = 0, om = 0;
    if (!digits(2, oh)) return std::nullopt;
    if (i < s.size() && s[i] == ':') ++i;
    if (i < s.size() && !digits(2, om)) return std::nullopt;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (i != s.size()) return std::nullopt;
  const int64_t epoch_s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  if (std::abs(epoch_s) > kMaxTimeNs / 1'000'000'000) return std::nullopt;
  return epoch_s * 1'000'000'000 + frac_ns;
}

int64_t csv_integer(const InputFile& file, const CsvRecord& record, size_t column,
                    const char* name) {
  const std::string_view text = trim(record.fields[column]);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    file.fail(record.offset,
              std::string(name) + " must be an integer, got '" + std::string(text) + "'");
  }
  return value;
}

Rows read_azure_csv(const InputFile& file, size_t count) {
  CsvReader reader(file);
  CsvRecord record;
  if (!reader.next(record)) file.fail_file("the file is empty (expected a CSV header)");
  std::optional<size_t> time_col, input_col, output_col;
  for (size_t c = 0; c < record.fields.size(); ++c) {
    const std::string name = lower(trim(record.fields[c]));
    if (name == "timestamp") time_col = c;
    if (name == "contexttokens") input_col = c;
    if (name == "generatedtokens") output_col = c;
  }
  if (!time_col || !input_col || !output_col) {
    file.fail(record.offset,
              "header must name the columns TIMESTAMP, ContextTokens and GeneratedTokens");
  }
  const size_t needed = std::max({*time_col, *input_col, *output_col}) + 1;
  Rows rows;
  while (rows.kept.size() < count && reader.next(record)) {
    if (record.fields.size() < needed) {
      file.fail(record.offset, "row has " + std::to_string(record.fields.size()) +
                                   " fields, the header " + std::to_string(needed) + " or more");
    }
    TraceRow row;
    const std::string_view time_text = trim(record.fields[*time_col]);
    const std::optional<int64_t> t = parse_time_ns(time_text);
    if (!t) {
      file.fail(record.offset, "TIMESTAMP '" + std::string(time_text) +
                                   "' is not a time (YYYY-MM-DD HH:MM:SS[.fraction]) or seconds");
    }
    row.time_ns = *t;
    row.input_tokens = csv_integer(file, record, *input_col, "ContextTokens");
    row.output_tokens = csv_integer(file, record, *output_col, "GeneratedTokens");
    keep_or_skip(rows, std::move(row), file, record.offset);
  }
  return rows;
}

// ---- prompts from rows

// The text of hash-id blocks: block `id` is block_tokens random ids from (seed, id); a final
// partial block is the start of the full one, so a shared id always means shared text.
class BlockTexts {
 public:
  BlockTexts(uint64_t seed, size_t block_tokens, int32_t vocab)
      : seed_(seed), block_tokens_(block_tokens), vocab_(vocab) {}
  const std::vector<TokenId>& block(int64_t id) {
    auto [it, inserted] = blocks_.try_emplace(id);
    if (inserted) {
      Draw draw(mix_seed(seed_, static_cast<uint64_t>(id)));
      it->second.reserve(block_tokens_);
      draw.append_ids(it->second, block_tokens_, vocab_);
    }
    return it->second;
  }

 private:
  uint64_t seed_;
  size_t block_tokens_;
  int32_t vocab_;
  std::unordered_map<int64_t, std::vector<TokenId>> blocks_;
};

}  // namespace

std::vector<Prompt> trace_prompts(size_t count, const TraceOptions& options,
                                  const tokenizer::Tokenizer& tokenizer, DatasetReport* report) {
  if (options.block_tokens < 1)
    check_range("--trace-block-tokens", options.block_tokens, 1, INT32_MAX);
  if (!(options.seconds_per_unit > 0) || !std::isfinite(options.seconds_per_unit)) {
    throw core::Error(core::ErrorKind::kUsage, "--timed-trace-sec-multiplier",
                      "must be a positive number");
  }
  const InputFile file(options.path);
  Rows rows = options.format == TraceOptions::Format::kAzureCsv
                  ? read_azure_csv(file, count)
                  : read_jsonl_trace(file, options, count);
  DatasetReport local;
  local.rows = rows.read;
  local.usable = rows.kept.size();
  if (rows.kept.empty()) {
    file.fail_file("no usable rows: " + std::to_string(rows.read) +
                   " read, none with input and output lengths >= 1");
  }
  if (rows.skipped > 0) {
    local.notes.push_back("skipped " + std::to_string(rows.skipped) +
                          " trace rows with an input or output length below 1, the first at " +
                          rows.first_skip);
  }
  if (rows.kept.size() < count) {
    local.notes.push_back("the trace has " + std::to_string(rows.kept.size()) +
                          " usable rows; sending those (" + std::to_string(count) +
                          " prompts asked for)");
  }
  if (!std::is_sorted(rows.kept.begin(), rows.kept.end(),
                      [](const TraceRow& a, const TraceRow& b) { return a.time_ns < b.time_ns; })) {
    local.notes.push_back("the trace's rows are not in timestamp order; replaying them sorted");
    std::stable_sort(rows.kept.begin(), rows.kept.end(),
                     [](const TraceRow& a, const TraceRow& b) { return a.time_ns < b.time_ns; });
  }

  const auto block_tokens = static_cast<size_t>(options.block_tokens);
  const int32_t vocab = tokenizer.vocab_size();
  BlockTexts blocks(options.seed, block_tokens, vocab);
  const int64_t t0 = rows.kept.front().time_ns;
  std::vector<Prompt> prompts;
  prompts.reserve(rows.kept.size());
  std::vector<TokenId> ids;
  for (size_t r = 0; r < rows.kept.size(); ++r) {
    const TraceRow& row = rows.kept[r];
    const auto target = static_cast<size_t>(row.input_tokens);
    ids.clear();
    for (int64_t id : row.hash_ids) {
      if (ids.size() >= target) break;
      const auto& block = blocks.block(id);
      ids.insert(
          ids.end(), block.begin(),
          block.begin() + static_cast<std::ptrdiff_t>(std::min(block_tokens, target - ids.size())));
    }
    // Tokens the hash ids do not cover (or every token, for traces without ids) are this
    // row's own.
    Draw own(mix_seed(options.seed, ~static_cast<uint64_t>(r)));
    if (ids.size() < target) own.append_ids(ids, target - ids.size(), vocab);
    Converged c = decode_to_target_len(tokenizer, ids, target, own, false);
    local.token_mismatch += c.mismatch;
    Prompt p;
    p.text = std::move(c.text);
    p.prompt_tokens = static_cast<int32_t>(c.tokens);
    p.output_tokens = static_cast<int32_t>(row.output_tokens);
    p.trace_offset_ns = row.time_ns - t0;
    prompts.push_back(std::move(p));
  }
  note_token_mismatch(local);
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset

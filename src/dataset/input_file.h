// File: dataset/input_file.h (internal to the dataset part)
// A dataset file read whole into memory with simdjson's padding, places in it for error
// messages ("FILE:LINE (byte N): what is wrong", core::Error kInput), and a JSONL reader that
// walks every field of every line with simdjson On-Demand. A leading UTF-8 byte-order mark
// (Windows editors write one) is skipped: text() starts after it, places still count it.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace servebench::dataset {

class InputFile {
 public:
  // How long a pipe or FIFO may give nothing before reading it fails (no writer, a stall).
  static constexpr int kPipeWaitMs = 60'000;
  // Throws core::Error (kInput, naming --dataset-path) when the file cannot be read. A pipe
  // (`<(cat f.json)`), FIFO or device is read until EOF, waiting at most `pipe_wait_ms` for
  // each read.
  explicit InputFile(const std::string& path, int pipe_wait_ms = kPipeWaitMs);
  const std::string& path() const { return path_; }
  std::string_view text() const {
    return std::string_view(data_.data() + skipped_, data_.size() - skipped_);
  }
  // text() with simdjson's padding after it.
  simdjson::padded_string_view padded() const {
    return simdjson::padded_string_view(text().data(), text().size(),
                                        text().size() + simdjson::SIMDJSON_PADDING);
  }
  // Byte offset of a pointer into text().
  size_t offset_of(const char* p) const { return static_cast<size_t>(p - text().data()); }
  // "FILE:LINE (byte N)" for a byte offset into text() (lines counted from 1; the byte counted
  // in the file, byte-order mark included).
  std::string where(size_t byte_offset) const;
  [[noreturn]] void fail(size_t byte_offset, const std::string& message) const;
  // For problems of the whole file (empty, too few rows): "FILE: message".
  [[noreturn]] void fail_file(const std::string& message) const;

 private:
  std::string path_;
  simdjson::padded_string data_;
  size_t skipped_ = 0;  // the byte-order mark's 3 bytes, when the file starts with one
};

// vLLM reads counts with int(value): integers, and numbers without a fraction, are accepted;
// anything else fails at the value's place naming the field.
int64_t json_integer(const InputFile& file, simdjson::ondemand::value& value,
                     std::string_view name);

// Where text follows the document's single value, or nullptr when the value ends the input.
inline const char* trailing_text(simdjson::ondemand::document& doc) {
  const char* at = nullptr;
  return doc.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
}

// For a document simdjson refused: when it is one balanced object or array followed by more
// than whitespace, the offset in `json` where that text starts, else npos. simdjson refuses
// "{...} extra" at the root as an object that "ended early" at byte 0, which misleads.
size_t text_after_value(std::string_view json);

// Reads a JSONL file: one JSON object per line, blank lines skipped. For each line calls
// on_field(line_offset, key, value) for every field in order, then on_row(line_offset), which
// returns false to stop reading. Any
// syntax error, a line that is not an object, or text after the object fails with the line's
// place. The callbacks may throw core::Error themselves (missing or mistyped fields).
template <typename OnField, typename OnRow>
void read_jsonl(const InputFile& file, OnField on_field, OnRow on_row) {
  simdjson::ondemand::parser parser;
  const std::string_view text = file.text();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    size_t stop = end;
    if (stop > start && text[stop - 1] == '\r') --stop;
    const std::string_view line = text.substr(start, stop - start);
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      const size_t line_offset = start;
      // The rest of the file (and simdjson's padding) follows the line, so it may be parsed in
      // place without copying.
      const size_t room = text.size() + simdjson::SIMDJSON_PADDING - start;
      const char* at = line.data();
      try {
        simdjson::ondemand::document doc =
            parser.iterate(simdjson::padded_string_view(line.data(), line.size(), room));
        simdjson::ondemand::object object;
        if (auto error = doc.get_object().get(object)) {
          if (error == simdjson::INCORRECT_TYPE)
            file.fail(line_offset, "line is not a JSON object");
          throw simdjson::simdjson_error(error);
        }
        for (auto field : object) {
          simdjson::ondemand::value value = field.value();
          at = value.raw_json_token().data();
          on_field(line_offset, std::string_view(field.unescaped_key()), value);
        }
        if (const char* extra = trailing_text(doc)) {
          file.fail(file.offset_of(extra), "unexpected text after the JSON object");
        }
      } catch (const simdjson::simdjson_error& e) {
        if (size_t extra = text_after_value(line);
            e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && extra != std::string_view::npos) {
          file.fail(line_offset + extra, "unexpected text after the JSON object");
        }
        const size_t offset =
            at >= line.data() && at < line.data() + line.size() ? file.offset_of(at) : line_offset;
        file.fail(offset, std::string("not valid JSON: ") + e.what());
      }
      if (!on_row(line_offset)) return;
    }
    start = end + 1;
  }
}

}  // namespace servebench::dataset

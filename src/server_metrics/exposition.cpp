// Prometheus' text exposition format, version 0.0.4
// (prometheus.io/docs/instrumenting/exposition_formats): `# TYPE name type` and `# HELP` lines,
// other comments, and samples `name{label="value",…} value [timestamp]`.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/json_text.h"
#include "server_metrics/server_metrics.h"

namespace servebench::server_metrics {

namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

class LineParser {
 public:
  LineParser(std::string_view line, const std::string& where) : line_(line), where_(where) {}

  void skip_blanks() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  bool at_end() const { return pos_ >= line_.size(); }
  char peek() const { return at_end() ? '\0' : line_[pos_]; }

  std::string_view name(bool allow_colon = true) {
    size_t start = pos_;
    if (at_end() || !is_name_start(line_[pos_]) || (!allow_colon && line_[pos_] == ':'))
      fail("expected a metric or label name");
    while (!at_end() && is_name_char(line_[pos_]) && (allow_colon || line_[pos_] != ':')) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  // `{a="x",b="y"}` (a trailing comma allowed), returned canonical: sorted by name, values kept
  // escaped as written.
  std::string labels() {
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    ++pos_;  // '{'
    for (;;) {
      skip_blanks();
      if (peek() == '}') break;
      std::string_view label = name(false);
      skip_blanks();
      expect('=');
      skip_blanks();
      expect('"');
      size_t start = pos_;
      while (!at_end() && line_[pos_] != '"') {
        if (line_[pos_] == '\\') {
          if (pos_ + 1 >= line_.size()) break;
          char e = line_[pos_ + 1];
          if (e != '\\' && e != '"' && e != 'n') fail("bad escape in a label value");
          ++pos_;
        }
        ++pos_;
      }
      if (at_end()) fail("unterminated label value");
      pairs.emplace_back(label, line_.substr(start, pos_ - start));
      ++pos_;  // closing quote
      skip_blanks();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' after a label");
      break;
    }
    ++pos_;  // '}'
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 1; i < pairs.size(); ++i) {
      if (pairs[i].first == pairs[i - 1].first)
        fail("label " + std::string(pairs[i].first) + " given twice");
    }
    std::string canonical;
    for (const auto& [label, value] : pairs) {
      if (!canonical.empty()) canonical += ',';
      canonical.append(label).append("=\"");
      // A byte that is not UTF-8 (a Latin-1 label) shown as `\xE9`, its backslash escaped as
      // the canonical form keeps escapes: the summary's JSON can always be written.
      core::append_valid_utf8(canonical, value, "\\\\x");
      canonical += '"';
    }
    return canonical;
  }

  // The text up to the next blank.
  std::string_view word() {
    size_t start = pos_;
    while (!at_end() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
    return line_.substr(start, pos_ - start);
  }

  double number() {
    std::string_view text = word();
    if (text.empty()) fail("missing sample value");
    if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
    if (text == "-Inf") return -std::numeric_limits<double>::infinity();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text.front() == '+') text.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
      fail("bad number '" + std::string(text.substr(0, 40)) + "'");
    return value;
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw core::Error(core::ErrorKind::kInput, where_,
                      message + " at column " + std::to_string(pos_ + 1));
  }

 private:
  std::string_view line_;
  const std::string& where_;
  size_t pos_ = 0;
};

MetricType type_named(std::string_view name) {
  if (name == "gauge") return MetricType::kGauge;
  if (name == "counter") return MetricType::kCounter;
  if (name == "histogram" || name == "gaugehistogram") return MetricType::kHistogram;
  if (name == "summary") return MetricType::kSummary;
  return MetricType::kUntyped;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

Exposition parse_exposition(std::string_view text, const std::string& source) {
  Exposition out;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = source + " line " + std::to_string(line_number);
    LineParser p(line, where);
    p.skip_blanks();
    if (p.at_end()) continue;
    if (p.peek() == '#') {
      // "# TYPE name type" declares a family; every other comment (HELP, EOF, …) is skipped.
      p.expect('#');
      p.skip_blanks();
      if (p.word() == "TYPE") {
        p.skip_blanks();
        std::string family(p.name());
        p.skip_blanks();
        out.types[family] = type_named(p.word());
      }
      continue;
    }
    Sample sample;
    sample.name = std::string(p.name());
    p.skip_blanks();
    if (p.peek() == '{') sample.labels = p.labels();
    p.skip_blanks();
    sample.value = p.number();
    p.skip_blanks();
    if (!p.at_end()) {
      p.number();  // the optional timestamp (ms); scrapes are timed by their arrival
      p.skip_blanks();
      if (!p.at_end()) p.fail("unexpected text after the sample");
    }
    out.samples.push_back(std::move(sample));
  }
  return out;
}

std::pair<std::string, MetricType> family_of(const Exposition& exposition,
                                             const std::string& sample_name) {
  if (auto it = exposition.types.find(sample_name); it != exposition.types.end())
    return {sample_name, it->second};
  for (std::string_view suffix : {"_bucket", "_sum", "_count", "_total", "_created"}) {
    if (!ends_with(sample_name, suffix)) continue;
    std::string family = sample_name.substr(0, sample_name.size() - suffix.size());
    if (auto it = exposition.types.find(family); it != exposition.types.end())
      return {family, it->second};
  }
  return {sample_name, MetricType::kUntyped};
}

}  // namespace servebench::server_metrics

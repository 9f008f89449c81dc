// Text-table shapes. tabulate's pipe layout follows tabulate's documented rules (MIN_PADDING 2,
// "decimal" number alignment, colons on the aligned side); GuideLLM's follows the print_table
// family of guidellm/benchmark/output.py (v0.3): widths from headers, cells and sections, cells
// right-justified and joined by "| ".
#include "report/text_tables.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace servebench::report::text {
namespace {

// tabulate's _afterpoint: characters after the decimal point (or the exponent mark), -1 for an
// integer or a string without either.
int after_point(const std::string& s) {
  size_t pos = s.rfind('.');
  if (pos == std::string::npos) pos = s.find_last_of("eE");
  if (pos == std::string::npos) return -1;
  return static_cast<int>(s.size() - pos - 1);
}

// The columns a cell takes: its UTF-8 characters, not its bytes ("±" is one), as tabulate counts.
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

std::string pad_left(const std::string& s, size_t width) {
  const size_t w = columns(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}
std::string pad_right(const std::string& s, size_t width) {
  const size_t w = columns(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// Each column's widest text, header included.
std::vector<size_t> widest_cells(const std::vector<std::string>& headers,
                                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) {
    width[c] = columns(headers[c]);
    for (const auto& r : rows) width[c] = std::max(width[c], c < r.size() ? columns(r[c]) : 0);
  }
  return width;
}

}  // namespace

std::string tabulate_pipe(const std::vector<std::string>& headers, const std::vector<Row>& rows) {
  const size_t n = headers.size();
  std::vector<std::vector<std::string>> cols(n);
  std::vector<bool> numeric(n, !rows.empty());
  for (const Row& r : rows) {
    for (size_t c = 0; c < n; ++c) numeric[c] = numeric[c] && c < r.size() && r[c].numeric;
  }
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) {
    std::vector<std::string>& cells = cols[c];
    for (const Row& r : rows) cells.push_back(c < r.size() ? r[c].text : "");
    if (numeric[c]) {
      int max_after = -1;
      for (const std::string& s : cells) max_after = std::max(max_after, after_point(s));
      for (std::string& s : cells) s += std::string(max_after - after_point(s), ' ');
    }
    width[c] = columns(headers[c]) + 2;
    for (const std::string& s : cells) width[c] = std::max(width[c], columns(s));
  }
  auto line = [&](auto&& cell_text) {
    std::string out = "|";
    for (size_t c = 0; c < n; ++c) out += " " + cell_text(c) + " |";
    return out + "\n";
  };
  std::string out = line([&](size_t c) {
    return numeric[c] ? pad_left(headers[c], width[c]) : pad_right(headers[c], width[c]);
  });
  out += "|";
  for (size_t c = 0; c < n; ++c) {
    out += numeric[c] ? std::string(width[c] + 1, '-') + ":" : ":" + std::string(width[c] + 1, '-');
    out += "|";
  }
  out += "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += line([&](size_t c) {
      return numeric[c] ? pad_left(cols[c][r], width[c]) : pad_right(cols[c][r], width[c]);
    });
  }
  return out;
}

std::string aligned_markdown(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows) {
  const size_t n = headers.size();
  std::vector<size_t> width = widest_cells(headers, rows);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t c = 0; c < n; ++c) {
      out += " " + pad_right(c < cells.size() ? cells[c] : "", width[c]) + " |";
    }
    return out + "\n";
  };
  std::string out = line(headers) + "|";
  for (size_t c = 0; c < n; ++c) out += std::string(width[c] + 2, '-') + "|";
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string guidellm_console_table(const std::vector<std::pair<std::string, size_t>>& sections,
                                   const std::vector<std::string>& headers,
                                   const std::vector<std::vector<std::string>>& rows) {
  const size_t n = headers.size();
  std::vector<size_t> width = widest_cells(headers, rows);
  // A section needs its name plus one separator per inner boundary; short ones widen evenly.
  size_t first = 0;
  for (const auto& [name, last] : sections) {
    const size_t span = last - first;
    const size_t needed = name.size() + span;
    size_t have = 2 * span;
    for (size_t c = first; c <= last; ++c) have += width[c];
    if (needed > have) {
      const size_t add = (needed - have + span) / (span + 1);  // ceil over span + 1 columns
      for (size_t c = first; c <= last; ++c) width[c] += add;
    }
    first = last + 1;
  }
  auto rule = [&](bool separators) {
    std::string out;
    for (size_t c = 0; c < n; ++c) {
      out += separators ? std::string(width[c], '-') + "|-" : std::string(width[c] + 2, '=');
    }
    out.resize(out.size() - 2);
    return out + "\n";
  };
  auto row_line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < n; ++c) {
      if (c > 0) out += "| ";
      out += pad_left(c < cells.size() ? cells[c] : "", width[c]);
    }
    return out + "\n";
  };
  std::string out = rule(false);
  first = 0;
  std::string section_line;
  for (const auto& [name, last] : sections) {
    const size_t span = last - first;
    size_t length = 2 * (span + 1);
    for (size_t c = first; c <= last; ++c) length += width[c];
    section_line +=
        name + std::string(length - name.size() - span - 2, ' ') + std::string(span, '|') + "| ";
    first = last + 1;
  }
  section_line.resize(section_line.size() - 2);
  out += section_line + "\n";
  out += row_line(headers);
  out += rule(true);
  for (const auto& r : rows) out += row_line(r);
  out += rule(false);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string python_g(double x) {
  return fmt::format("{:g}", x);
}

std::string python_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // nlohmann prints the shortest round-trip digits and keeps ".0" on integral values, as repr.
  return nlohmann::json(x).dump();
}

std::string round2(double x) {
  std::string s = fmt::format("{:.2f}", x);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace servebench::report::text

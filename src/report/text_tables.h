// File: report/text_tables.h (internal to the report part)
// The three text-table shapes the seed write-ups use, given cells already formatted, and the
// number formats of the Python tools that printed them. tables.cpp fills them from results;
// the tests check each shape byte for byte against the seeds.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace servebench::report::text {

struct Cell {
  std::string text;
  bool numeric = false;  // tabulate aligns numeric columns on the decimal point, right
};
using Row = std::vector<Cell>;

// tabulate(rows, headers="keys", tablefmt="pipe") as vLLM's convert-results-json-to-markdown.py
// calls it: string columns left-aligned, numeric ones decimal-aligned and right-aligned, every
// column at least its header plus 2 wide, ":" in the separator on the aligned side.
std::string tabulate_pipe(const std::vector<std::string>& headers, const std::vector<Row>& rows);

// A markdown table with every cell left-aligned and padded to its column (seed 000's cumulative
// table, seed 003's inference-perf tables); separators are dashes 2 wider than the column.
std::string aligned_markdown(const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows);

// GuideLLM's console table (guidellm/benchmark/output.py, print_table): a "=" rule, the
// section line ("Metadata  ||||"), right-aligned headers and cells joined by "| ", a "-|-"
// rule, the rows and a closing "=" rule. `sections` are (name, last column) in order; each
// section widens its columns evenly until its name fits.
std::string guidellm_console_table(const std::vector<std::pair<std::string, size_t>>& sections,
                                   const std::vector<std::string>& headers,
                                   const std::vector<std::vector<std::string>>& rows);

// A CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, quote or newline.
std::string csv_field(const std::string& s);

// Python's format(x, "g"), tabulate's default float format: 6 significant digits.
std::string python_g(double x);
// Python's repr(float): the shortest text that reads back as x ("2.0", "4.202913660966805").
std::string python_repr(double x);
// Python's round(x, 2) as the seed-004 tables print it: 2 decimals, trailing zeros dropped.
std::string round2(double x);

}  // namespace servebench::report::text

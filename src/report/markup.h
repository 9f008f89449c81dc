// File: report/markup.h (internal to the report part)
// Text put into SVG and HTML: the chart descriptions (charts.cpp) and the HTML report
// (html_report.cpp).
#pragma once

#include <string>

namespace servebench::report::markup {

// `s` with &, <, > and " written as entities: safe as XML/HTML text and in quoted attributes.
inline std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace servebench::report::markup

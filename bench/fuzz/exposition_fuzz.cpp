// File: bench/fuzz/exposition_fuzz.cpp
// libFuzzer target: arbitrary bytes as a server's /metrics text (Prometheus exposition). The
// parser accepts it or throws core::Error; an accepted text, scraped twice, must summarize and
// its summary must dump as JSON (invalid UTF-8 in a label once lost whole results). Anything
// else is a finding. Built by scripts/sanitize.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "server_metrics/server_metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servebench::server_metrics;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Exposition e;
  try {
    e = parse_exposition(text, "http://fuzz/metrics");
  } catch (const servebench::core::Error&) {
    return 0;
  }
  for (const Sample& s : e.samples) (void)split_labels(s.labels);
  EndpointSeries series;
  series.url = "http://fuzz/metrics";
  series.scrapes = {{1'000'000'000, e}, {2'000'000'000, e}};
  SummaryOptions options;
  options.with_timeseries = true;
  const nlohmann::json summary = summarize({series}, options);
  (void)summary.dump();  // throws (a finding) on a string that is not UTF-8
  (void)spec_decode_stats({series});
  return 0;
}

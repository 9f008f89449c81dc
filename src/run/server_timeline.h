// File: run/server_timeline.h
// The server's series over time, kept compact in every result (not only with --save-detailed)
// so that `servebench report --chart timeline` can draw the server beside the client: per
// endpoint, the scrape times and, for the families the console block shows and the DCGM and
// node_exporter network/InfiniBand families, each series' value per scrape; with
// --save-detailed also each histogram series' cumulative bucket counts per scrape.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_metrics/server_metrics.h"

namespace servebench::run {

// Adds `timeline` = {"t_s": [seconds since t0 per scrape], "<family>": {"<canonical labels>":
// [value per scrape or null]}} to summary["endpoints"][i] (endpoints in the order scraped), and
// with `with_buckets` `bucket_timeseries` = {"le": [...], "counts": [[cumulative count per le]
// per scrape]} to each histogram series of endpoints[i].metrics.
void add_server_timelines(nlohmann::json& summary,
                          const std::vector<server_metrics::EndpointSeries>& endpoints,
                          int64_t t0_mono_ns, bool with_buckets);

}  // namespace servebench::run

// File: run/coordination.h
// How one target's sweep of a multi-target run (targets.cpp) meets the others: each hook is
// called by that target's own points (point.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace servebench::run {

struct TargetCoordination {
  size_t index = 0, count = 1;  // this target (0-based) of how many
  std::string url;              // its base URL without credentials (url_for_messages)
  // Ends this target's setup (the next target's starts) and waits for every target to be
  // ready: returns the common t0 (core::mono_ns). `planned` = this target's requests.
  std::function<int64_t(size_t planned)> start_gate;
  std::function<void()> on_record;  // one of this target's requests finished (combined bar)
  // Waits until every target's run has ended and the targets before this one have printed,
  // then prints this target's heading (its base URL, shown without credentials).
  std::function<void(const std::string& base_url)> before_report;
  // This target's result is out: hands it over (combined figures) and lets the next print.
  std::function<void(const nlohmann::json& result)> after_report;
};

}  // namespace servebench::run

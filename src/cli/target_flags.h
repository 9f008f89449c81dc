// File: cli/target_flags.h
// Several targets at once as `servebench run` flags: a --base-url list, --sim-instances, and a
// --model list naming each target's model. Internal to the cli part.
#pragma once

#include <string>
#include <vector>

#include "cli/values.h"
#include "run/run.h"

namespace servebench::cli {

// --base-url as given: a comma list, or the flag repeated (CLI11 joins the values with '\n').
// Each URL loses its trailing '/'; a URL not starting with http:// or https://, or an empty
// item, is a usage error naming --base-url (the URL shown without its credentials).
std::vector<std::string> parse_base_urls(const std::string& text);

// Fills c.sim_instances and c.target_models after the target and simulator flags are checked
// (c.target_urls, c.embedded and c.model set): --model "a,b" names one model per target (or one
// for all); several targets refuse a --request-rate / --max-concurrency list. Throws
// core::Error kUsage naming the flag.
void apply_target_flags(const std::string& sim_instances, const Given& given, run::Spec& c);

}  // namespace servebench::cli

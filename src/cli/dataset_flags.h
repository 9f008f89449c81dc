// File: cli/dataset_flags.h (internal to cli)
// The dataset flags of `run` turned into dataset options: vLLM's names and defaults, SGLang's
// --gsp-*, servebench's --trace-*. Part of spec_from_flags (run_flag_checks.cpp), which chooses
// the dataset; each throws core::Error kUsage naming the flag of a bad value.
#pragma once

#include "cli/run_flags.h"
#include "cli/values.h"

namespace servebench::cli {

// The `random` dataset (--input-len/--output-len stand for its lengths, as in vLLM).
void check_random_dataset_flags(const RawFlags& f, const Given& given, dataset::RandomOptions& r);
// Every other dataset's flags. Flags of a dataset not chosen are parsed too, so a bad value is
// never ignored.
void check_other_dataset_flags(const RawFlags& f, const Given& given, run::Spec& c);

}  // namespace servebench::cli

// File: dataset/sampling.h (internal to the dataset part)
// vLLM's handling of a file dataset that yields fewer prompts than asked for
// (BenchmarkDataset.maybe_oversample_requests), and small shared checks.
#pragma once

#include <string>
#include <vector>

#include "dataset/dataset.h"

namespace servebench::dataset {

// When prompts.size() < count: with oversampling, appends random.choice(prompts) (Python's
// generator seeded with the seed, as vLLM) until there are `count`; without it, leaves them.
// Either way a note says how many usable rows there were. `what` names the rows ("conversations
// that pass vLLM's length filters"). Throws core::Error (kInput, naming the file) when there is
// not a single usable row.
void fill_to_count(std::vector<Prompt>& prompts, size_t count, const FileSampling& sampling,
                   const std::string& what, DatasetReport& report);

// Throws core::Error (kUsage, naming the flag) unless low <= value <= high.
void check_range(const char* flag, int64_t value, int64_t low, int64_t high);

// Adds the tokens-vs-target drift note vLLM logs as a warning, when there is any.
void note_token_mismatch(DatasetReport& report);

}  // namespace servebench::dataset

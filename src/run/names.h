// File: run/names.h
// What the command line and the run both write as vLLM (or GuideLLM) writes it: Python's float
// text, result file names, URLs without credentials, the first errors of a run; and the check
// that a file can be written before a benchmark spends time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/run.h"
#include "schedule/schedule.h"

namespace servebench::run {

// Python's str(float): "inf", "10.0", "2.5", "1e-05", "1e+16" (vLLM prints and names files so).
std::string python_float(double value);
// vLLM's result file name: {label}-{rate}qps[-concurrency{N}]-{model basename}-{date}.json.
std::string result_file_name(const std::string& label, double request_rate, int max_concurrency,
                             const std::string& model_id, const std::string& date);
// With a ramp-up (vLLM's name for it):
// {label}-ramp-up-{strategy}-{start}qps-{end}qps[-concurrency{N}]-{model basename}-{date}.json.
std::string ramp_up_result_file_name(const std::string& label, const schedule::RampUp& ramp_up,
                                     int max_concurrency, const std::string& model_id,
                                     const std::string& date);
// A URL with any "user:password@" removed, for messages.
std::string url_for_messages(const std::string& url);
// vLLM's "Error <i>: <error>" lines for the first 10 failed requests, given as (plan index,
// error) in any order: by index, secrets redacted, control bytes a server sent shown as \xNN
// (a NUL would end a printed line early).
std::string first_errors_text(std::vector<std::pair<uint64_t, std::string>> failed);
// GuideLLM's name of a profile ("" for kNone).
const char* profile_name(LoadProfile p);
// Fails now (core::Error kInput naming `flag`), before a benchmark, when `path` could not be
// written after it: a directory, a file or directory we may not write, a FIFO with no reader.
// An existing file is left as it is; a new one is created and removed again.
void check_writable(const std::string& path, const std::string& flag);
// Writes `text` to `path`, or to stdout when `path` is empty; an unwritable file is a
// core::Error naming it.
void write_text(const std::string& path, const std::string& text);

}  // namespace servebench::run

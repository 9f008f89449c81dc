// File: run/output_files.h
// The files one point writes: the records file, appended as requests finish, and the result
// JSON (vLLM's file name, or --result-filename), created before the point starts so that an
// unwritable place costs no benchmark time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "core/error.h"
#include "record/record.h"
#include "run/run.h"

namespace servebench::run {

class RecordsFile {
 public:
  // `flag`: the flag that chose the path, for the message.
  RecordsFile(const std::string& path, const char* flag);
  ~RecordsFile();
  RecordsFile(const RecordsFile&) = delete;
  RecordsFile& operator=(const RecordsFile&) = delete;

  // One line per finished request, kept until flush(): the client calls it after each batch of
  // records it delivers (finished within a few ms of each other), so a killed run keeps what it
  // measured and a busy one makes one write(2) per batch, not per request.
  void append(const record::RequestRecord& r);

  // Hands the pending lines to the kernel. The file only ever holds whole lines: a failed write
  // (a full disk, EFBIG past the file size limit) is cut back to the last whole line, what was
  // written is fsynced, and the failure is said once, naming the file and the first record
  // missing from it; the run and its result go on without the rest of the file.
  void flush();

  // `options` with flush() after each batch of delivered records.
  client::RunOptions flushing(const client::RunOptions& options) {
    client::RunOptions with_flush = options;
    with_flush.after_records = [this] { flush(); };
    return with_flush;
  }

 private:
  // After `written` bytes of pending_ reached the file and a write failed with `err`.
  void give_up(size_t written, int err);

  static constexpr size_t kMaxPendingBytes = 1 << 20;
  std::string path_;
  const char* flag_;
  int fd_ = -1;
  std::string pending_;
  // Each pending line: where it ends in pending_, and its record (plan index, request id).
  struct PendingLine {
    size_t end;
    uint64_t index;
    std::string request_id;
  };
  std::vector<PendingLine> pending_lines_;
  uint64_t file_bytes_ = 0;  // whole lines written so far
};

struct Paths {
  std::string result;   // "" unless --save-result / --append-result
  std::string records;  // "" = no records file
  // The flags that chose them, for messages.
  const char* result_flag = "--save-result";
  const char* records_flag = "--records";
};

// vLLM's compute_result_filename, and the records file beside it (or in --result-dir); makes
// the directories, holds both paths for this run (hold_output) and checks that the result can
// be written. A default name (no --result-filename) that another live run holds, because it
// started in the same second, steps aside to "<name>-2.json" (then -3, …), said on stderr: both
// runs keep their results under vLLM's name pattern. A path the user named is refused.
Paths output_paths(const Spec& c, const std::string& model_id, const std::string& date);

// Holds `path` as this process's output until it exits (core::OutputLock: a flock()ed
// `<path>.lock`, dropped by the kernel even after kill -9). Another live process's path is
// refused: core::Error(kInput, flag, "'<path>' is being written by another process (pid N; …)").
// Held twice by this process (a sweep's points, several targets, a kind's iterations) is held
// once. A device or a FIFO (/dev/stdout, /dev/full) is not locked. Makes the parent directory.
void hold_output(const std::string& path, const char* flag);

// The paths a run names on its command line (--records, --result-filename, a search's summary),
// held first thing in run::execute, before any set-up or request; and SIGXFSZ ignored, so that
// a file size limit fails a write with EFBIG (said, and the run goes on) instead of killing the
// run. Default names are held by output_paths, before the point's first request.
void hold_named_outputs(const Spec& c);

// Writes (or with `append`, appends a line of) `result`; errors name `flag`.
void save_result(const std::string& path, const nlohmann::json& result, bool append,
                 const char* flag);

}  // namespace servebench::run

// File: bench/fuzz/sse_stream_fuzz.cpp
// libFuzzer target: arbitrary bytes as a streamed response body, fed to the client's SSE reader
// (client/sse_stream.h) in pieces whose sizes the first byte picks (events split anywhere).
// The reader turns anything into a record (success or an error text); a crash, a sanitizer
// report or an exception is a finding. Built by scripts/sanitize.sh.
#include <cstddef>
#include <cstdint>

#include "client/sse_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servebench;
  if (size < 1) return 0;
  static client::detail::ParseScratch scratch;
  const size_t piece = 1 + data[0] % 64;
  const char* body = reinterpret_cast<const char*>(data + 1);
  const size_t length = size - 1;
  // Twice: with the event template (the fast path) and without.
  for (bool fast : {true, false}) {
    client::detail::StreamReader reader(&scratch);
    reader.set_template_enabled(fast);
    record::RequestRecord record;
    reader.begin(&record);
    int64_t now_ns = 0;
    for (size_t at = 0; at < length; at += piece) {
      reader.feed(body + at, length - at < piece ? length - at : piece, now_ns += 1000);
    }
    reader.finish(now_ns + 1000);
  }
  return 0;
}

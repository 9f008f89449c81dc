// File: sim/deploy/frontend_output.h (private to sim/deploy)
// A frontend's output stage: where the tokens its workers produce wait until the frontend has
// written them. A real frontend handles a step's outputs one request at a time (vLLM's AsyncLLM
// output handler detokenizes them in turn, then each request's SSE generator writes its
// chunk), so the tokens of one step leave one after another, `chunk_ns` apart, and a frontend
// that is handed more chunks per second than it can write falls behind. It has `lanes` such
// loops working in parallel (vLLM's --api-server-count); a request keeps its lane.
// docs/deployments.md, "Frontend output".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/model/timing_model.h"

namespace servebench::sim::deploy {

class FrontendOutput {
 public:
  FrontendOutput(int64_t chunk_ns, int32_t lanes);

  // The lane of a new request: round robin.
  int32_t assign_lane();
  // A token its worker produced at ev.due_ns; called in nondecreasing ev.due_ns. The tokens of
  // one request produced together (a speculative step's) make one chunk and leave together.
  void push(int32_t lane, TokenEvent ev);
  std::optional<int64_t> next_due_ns() const;
  // Appends every token written by now_ns, in due order (a chunk's tokens consecutive).
  void pop_due(int64_t now_ns, std::vector<TokenEvent>& out);
  void cancel(uint64_t request_id);

 private:
  struct Lane {
    std::deque<TokenEvent> queue;  // due order
    int64_t free_ns = 0;           // when this loop has written everything handed to it
    bool has_chunk = false;        // the last chunk: its request, when produced and written
    uint64_t chunk_request = 0;
    int64_t chunk_produced_ns = 0;
    int64_t chunk_written_ns = 0;
  };
  size_t first_due_lane() const;  // lanes_.size(): all empty

  int64_t chunk_ns_;
  std::vector<Lane> lanes_;
  uint32_t next_lane_ = 0;
};

}  // namespace servebench::sim::deploy

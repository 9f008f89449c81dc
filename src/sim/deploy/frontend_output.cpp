#include "sim/deploy/frontend_output.h"

#include <algorithm>

namespace servebench::sim::deploy {

FrontendOutput::FrontendOutput(int64_t chunk_ns, int32_t lanes)
    : chunk_ns_(chunk_ns), lanes_(static_cast<size_t>(std::max(lanes, 1))) {}

int32_t FrontendOutput::assign_lane() {
  return static_cast<int32_t>(next_lane_++ % lanes_.size());
}

void FrontendOutput::push(int32_t lane_index, TokenEvent ev) {
  Lane& lane = lanes_.at(static_cast<size_t>(lane_index));
  if (lane.has_chunk && lane.chunk_request == ev.request_id &&
      lane.chunk_produced_ns == ev.due_ns) {
    ev.due_ns = lane.chunk_written_ns;
  } else {
    lane.has_chunk = true;
    lane.chunk_request = ev.request_id;
    lane.chunk_produced_ns = ev.due_ns;
    ev.due_ns = std::max(ev.due_ns, lane.free_ns) + chunk_ns_;
    lane.free_ns = ev.due_ns;
    lane.chunk_written_ns = ev.due_ns;
  }
  lane.queue.push_back(ev);
}

size_t FrontendOutput::first_due_lane() const {
  size_t first = lanes_.size();
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].queue.empty()) continue;
    // Ties go to the lower lane, so a chunk's tokens stay together.
    if (first == lanes_.size() ||
        lanes_[i].queue.front().due_ns < lanes_[first].queue.front().due_ns) {
      first = i;
    }
  }
  return first;
}

std::optional<int64_t> FrontendOutput::next_due_ns() const {
  const size_t first = first_due_lane();
  if (first == lanes_.size()) return std::nullopt;
  return lanes_[first].queue.front().due_ns;
}

void FrontendOutput::pop_due(int64_t now_ns, std::vector<TokenEvent>& out) {
  for (;;) {
    const size_t first = first_due_lane();
    if (first == lanes_.size() || lanes_[first].queue.front().due_ns > now_ns) return;
    out.push_back(lanes_[first].queue.front());
    lanes_[first].queue.pop_front();
  }
}

void FrontendOutput::cancel(uint64_t request_id) {
  for (Lane& lane : lanes_) {
    std::erase_if(lane.queue, [&](const TokenEvent& e) { return e.request_id == request_id; });
  }
}

}  // namespace servebench::sim::deploy

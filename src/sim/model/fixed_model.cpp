// Fixed timing: every request on its own. Token k of a request arriving at a is due at
// a + ttft + itl_1 + ... + itl_k, each value drawn from its Millis (normal, clamped at 0).
//
// Each live request has exactly one entry in an indexed binary min-heap, keyed by the due time
// of its next token (ties: earlier add first). pop_due takes the top, emits, draws the next
// ITL and sifts the same entry down: O(log n) per token and no allocation per token once the
// slot and heap vectors have grown. cancel removes the entry from the middle of the heap.
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "core/error.h"
#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

// splitmix64: tiny, fast and good enough to seed and feed per-request streams.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in (0, 1]: never 0, so log() below is finite.
double uniform_open0(uint64_t& state) {
  return (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1.0p-53;
}

// One draw in ns: mean when there is no jitter (no random numbers used), else a normal draw
// (Box-Muller) clamped at 0.
int64_t draw_ns(const Millis& m, uint64_t& state) {
  double ms = m.mean_ms;
  if (m.jitter_ms > 0) {
    double u1 = uniform_open0(state);
    double u2 = uniform_open0(state);
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    ms = std::max(0.0, m.mean_ms + m.jitter_ms * z);
  }
  return std::llround(ms * 1e6);
}

void check_millis(const Millis& m, const char* what) {
  if (!std::isfinite(m.mean_ms) || !std::isfinite(m.jitter_ms) || m.mean_ms < 0 ||
      m.jitter_ms < 0) {
    throw core::Error(core::ErrorKind::kUsage, std::string("fixed timing ") + what,
                      "mean and jitter must be finite and >= 0 ms, got mean " +
                          std::to_string(m.mean_ms) + ", jitter " + std::to_string(m.jitter_ms));
  }
}

class FixedModel final : public TimingModel {
 public:
  explicit FixedModel(const FixedTiming& timing) : timing_(timing) {
    check_millis(timing.ttft, "ttft");
    check_millis(timing.itl, "itl");
  }

  std::string rejection_reason(RequestShape shape) const override {
    if (shape.output_tokens < 1) {
      return "output_tokens must be at least 1, got " + std::to_string(shape.output_tokens);
    }
    return {};
  }

  void add(uint64_t request_id, RequestShape shape, int64_t arrival_ns) override {
    if (std::string why = rejection_reason(shape); !why.empty()) {
      throw core::Error(core::ErrorKind::kInternal,
                        "fixed model request " + std::to_string(request_id), why);
    }
    if (index_.contains(request_id)) {
      throw core::Error(core::ErrorKind::kInternal,
                        "fixed model request " + std::to_string(request_id), "added twice");
    }
    uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& s = slots_[slot];
    s.request_id = request_id;
    s.order = next_order_++;
    // The stream depends only on (seed, position of this add), never on timing.
    s.rng = timing_.seed ^ (s.order * 0xd1b54a32d192ed03ULL);
    splitmix64(s.rng);
    s.output_tokens = shape.output_tokens;
    s.next_index = 0;
    s.due_ns = arrival_ns + draw_ns(timing_.ttft, s.rng);
    index_.emplace(request_id, slot);
    s.heap_pos = static_cast<uint32_t>(heap_.size());
    heap_.push_back(slot);
    sift_up(s.heap_pos);
  }

  void cancel(uint64_t request_id) override {
    auto it = index_.find(request_id);
    if (it == index_.end()) return;
    uint32_t slot = it->second;
    index_.erase(it);
    remove_at(slots_[slot].heap_pos);
    free_slots_.push_back(slot);
  }

  std::optional<int64_t> next_due_ns() const override {
    if (heap_.empty()) return std::nullopt;
    return slots_[heap_.front()].due_ns;
  }

  void pop_due(int64_t now_ns, std::vector<TokenEvent>& out) override {
    while (!heap_.empty()) {
      uint32_t slot = heap_.front();
      Slot& s = slots_[slot];
      if (s.due_ns > now_ns) break;
      bool last = s.next_index + 1 == s.output_tokens;
      out.push_back(TokenEvent{s.request_id, s.next_index, s.due_ns, last});
      if (last) {
        index_.erase(s.request_id);
        remove_at(0);
        free_slots_.push_back(slot);
      } else {
        ++s.next_index;
        s.due_ns += draw_ns(timing_.itl, s.rng);
        sift_down(0);
      }
    }
  }

  ModelStats stats() const override {
    ModelStats st;
    st.running = static_cast<int32_t>(heap_.size());
    return st;
  }

 private:
  struct Slot {
    uint64_t request_id = 0;
    uint64_t order = 0;  // position of the add: tie-break and RNG stream
    uint64_t rng = 0;
    int64_t due_ns = 0;  // of token next_index
    int32_t next_index = 0;
    int32_t output_tokens = 0;
    uint32_t heap_pos = 0;
  };

  bool before(uint32_t a, uint32_t b) const {
    const Slot& x = slots_[a];
    const Slot& y = slots_[b];
    return x.due_ns != y.due_ns ? x.due_ns < y.due_ns : x.order < y.order;
  }

  void place(uint32_t pos, uint32_t slot) {
    heap_[pos] = slot;
    slots_[slot].heap_pos = pos;
  }

  void sift_up(uint32_t pos) {
    uint32_t slot = heap_[pos];
    while (pos > 0) {
      uint32_t parent = (pos - 1) / 2;
      if (!before(slot, heap_[parent])) break;
      place(pos, heap_[parent]);
      pos = parent;
    }
    place(pos, slot);
  }

  void sift_down(uint32_t pos) {
    uint32_t slot = heap_[pos];
    const auto n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t child = 2 * pos + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], slot)) break;
      place(pos, heap_[child]);
      pos = child;
    }
    place(pos, slot);
  }

  void remove_at(uint32_t pos) {
    uint32_t last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size()) return;
    place(pos, last);
    sift_down(pos);
    sift_up(slots_[last].heap_pos);
  }

  FixedTiming timing_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> heap_;  // slot indices
  std::unordered_map<uint64_t, uint32_t> index_;
  uint64_t next_order_ = 0;
};

}  // namespace

std::unique_ptr<TimingModel> make_fixed_model(const FixedTiming& timing) {
  return std::make_unique<FixedModel>(timing);
}

}  // namespace servebench::sim

// The continuous-batching engine model, after vLLM's V1 scheduler
// (vllm/v1/core/sched/scheduler.py, Scheduler.schedule): facts used, not code.
//
// A step is planned at its start time and applied at its end time:
//   1. Running requests, in running order, each get min(tokens still to compute, budget)
//      tokens (one for a decoding request, a chunk for one still prefilling). If the KV cache
//      cannot hold the new tokens, the last running request is preempted (its blocks freed,
//      its computed tokens forgotten) until it fits; when the request itself is the last one,
//      it is preempted and the running pass stops.
//   2. Only if nobody was preempted: waiting requests, FCFS, are admitted while the token
//      budget lasts, running < max_num_seqs and the KV cache has room for their first chunk
//      (without chunked prefill the whole prompt must fit the remaining budget). The first
//      one that does not fit stops admission (head-of-line, as vLLM's FCFS).
//   3. At the step's end each request whose computed tokens reach prompt + generated samples
//      one token: the first token when its prefill completes, then one per step. Preempted
//      requests go back to the front of the waiting queue (in their running order) and
//      recompute prompt + generated tokens before sampling their next token.
// The plan is a pure function of the state and the requests that arrived by its start, so a
// request added late (its arrival at or before the planned start, but add() came after the
// plan was made) simply causes a re-plan: a request joins the first step starting at or after
// its arrival, whatever order the caller's threads call in.
// A request may arrive with KV for part of its prompt (add_with_kv): it waits like any other
// and computes only the rest. With speculative decoding a decoding request is scheduled
// 1 + drafts tokens (vLLM charges the budget and KV slots for them) and keeps 1 + accepted.
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_map>

#include "core/error.h"
#include "sim/model/engine.h"

namespace servebench::sim {
namespace {

void check_profile(const EngineProfile& p) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw core::Error(core::ErrorKind::kUsage, "engine profile '" + p.name + "' " + key, what);
  };
  if (p.max_num_seqs < 1) fail("max_num_seqs", "must be at least 1");
  if (p.max_num_batched_tokens < 1) fail("max_num_batched_tokens", "must be at least 1");
  if (p.block_size < 1) fail("block_size", "must be at least 1");
  if (p.num_gpu_blocks < 1) fail("num_gpu_blocks", "must be at least 1");
  for (auto [key, value] : {std::pair{"step_overhead_us", p.step_overhead_us},
                            std::pair{"per_prefill_token_us", p.per_prefill_token_us},
                            std::pair{"per_decode_seq_us", p.per_decode_seq_us},
                            std::pair{"per_context_token_us", p.per_context_token_us}}) {
    if (!std::isfinite(value) || value < 0) fail(key, "must be a finite number >= 0");
  }
}

// A draw in [0, 1) fixed by (seed, request, position): acceptance does not depend on who
// else is in the batch.
double unit_draw(uint64_t seed, uint64_t request_id, uint64_t position) {
  uint64_t z = seed ^ (request_id * 0x9E3779B97F4A7C15ULL) ^ (position * 0xBF58476D1CE4E5B9ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;  // splitmix64's finalizer
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

class EngineModel final : public Engine {
 public:
  EngineModel(const EngineProfile& profile, std::shared_ptr<const StepCost> cost, SpecDecode spec)
      : profile_(profile),
        cost_(std::move(cost)),
        spec_(spec),
        free_blocks_(profile.num_gpu_blocks) {
    check_profile(profile_);
    if (spec_.draft_tokens < 0) {
      throw core::Error(core::ErrorKind::kUsage, "engine '" + profile_.name + "' draft_tokens",
                        "must be >= 0");
    }
    if (!(spec_.acceptance_rate >= 0 && spec_.acceptance_rate <= 1)) {
      throw core::Error(core::ErrorKind::kUsage, "engine '" + profile_.name + "' acceptance_rate",
                        "must be in [0, 1]");
    }
    counters_.spec_accepted_per_position.assign(static_cast<size_t>(spec_.draft_tokens), 0);
  }

  std::string rejection_reason(RequestShape shape) const override {
    if (shape.prompt_tokens < 1) {
      return "prompt_tokens must be at least 1, got " + std::to_string(shape.prompt_tokens);
    }
    if (shape.output_tokens < 1) {
      return "output_tokens must be at least 1, got " + std::to_string(shape.output_tokens);
    }
    // The last output token is sampled but never fed back, so it needs no KV slot.
    int64_t kv_tokens = int64_t{shape.prompt_tokens} + shape.output_tokens - 1;
    if (kv_tokens >= std::numeric_limits<int32_t>::max()) {
      return "prompt (" + std::to_string(shape.prompt_tokens) + ") + output (" +
             std::to_string(shape.output_tokens) + ") tokens are too many to model";
    }
    if (blocks_for(kv_tokens) > profile_.num_gpu_blocks) {
      return "prompt (" + std::to_string(shape.prompt_tokens) + ") + output (" +
             std::to_string(shape.output_tokens) + ") tokens need " +
             std::to_string(blocks_for(kv_tokens)) + " KV blocks of " +
             std::to_string(profile_.block_size) + " tokens; engine profile '" + profile_.name +
             "' has " + std::to_string(profile_.num_gpu_blocks);
    }
    // Without chunking a prompt (or a preempted request's recompute) runs in one step.
    if (!profile_.chunked_prefill && kv_tokens > profile_.max_num_batched_tokens) {
      return "prompt (" + std::to_string(shape.prompt_tokens) + ") + output (" +
             std::to_string(shape.output_tokens) + ") tokens exceed max_num_batched_tokens (" +
             std::to_string(profile_.max_num_batched_tokens) + ") of engine profile '" +
             profile_.name + "', which has chunked prefill off";
    }
    return {};
  }

  void add(uint64_t request_id, RequestShape shape, int64_t arrival_ns) override {
    add_with_kv(request_id, shape, arrival_ns, 0);
  }

  void add_with_kv(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                   int32_t computed_tokens) override {
    auto where = [&] { return "engine model request " + std::to_string(request_id); };
    if (std::string why = rejection_reason(shape); !why.empty()) {
      throw core::Error(core::ErrorKind::kInternal, where(), why);
    }
    if (computed_tokens < 0 || computed_tokens >= shape.prompt_tokens) {
      throw core::Error(
          core::ErrorKind::kInternal, where(),
          "computed tokens must be in [0, prompt), got " + std::to_string(computed_tokens));
    }
    if (index_.contains(request_id)) {
      throw core::Error(core::ErrorKind::kInternal, where(), "added twice");
    }
    uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<uint32_t>(reqs_.size());
      reqs_.emplace_back();
    }
    Req& r = reqs_[slot];
    r = Req{};
    r.id = request_id;
    r.prompt = shape.prompt_tokens;
    r.output = shape.output_tokens;
    r.computed = computed_tokens;  // its KV arrives with it; blocks are taken on admission
    r.arrival_ns = arrival_ns;
    r.state = State::kArriving;
    index_.emplace(request_id, slot);
    // Keep arrivals sorted by time (stable): callers add in about-arrival order, so this
    // scans from the back a step or two at most.
    auto it = arrivals_.end();
    while (it != arrivals_.begin() && reqs_[*(it - 1)].arrival_ns > arrival_ns) --it;
    arrivals_.insert(it, slot);
    if (plan_.valid && arrival_ns <= plan_.start_ns) plan_.valid = false;
  }

  void cancel(uint64_t request_id) override {
    auto it = index_.find(request_id);
    if (it == index_.end()) return;
    uint32_t slot = it->second;
    Req& r = reqs_[slot];
    auto erase_from = [slot](auto& container) {
      for (auto i = container.begin(); i != container.end(); ++i) {
        if (*i == slot) {
          container.erase(i);
          return;
        }
      }
    };
    switch (r.state) {
      case State::kArriving:
        erase_from(arrivals_);
        break;
      case State::kWaiting:
        erase_from(waiting_);
        break;
      case State::kRunning:
        erase_from(running_);
        break;
      case State::kFinished:
        break;
    }
    release(slot);
    plan_.valid = false;  // its blocks and budget are free for the step not yet run
  }

  std::optional<int64_t> next_due_ns() const override {
    ensure_plan();
    if (!plan_.valid) return std::nullopt;
    return plan_.end_ns;
  }

  void pop_due(int64_t now_ns, std::vector<TokenEvent>& out) override {
    for (;;) {
      ensure_plan();
      if (!plan_.valid || plan_.end_ns > now_ns) return;
      apply_plan(out);
    }
  }

  ModelStats stats() const override {
    ModelStats st;
    st.running = static_cast<int32_t>(running_.size());
    st.waiting = static_cast<int32_t>(waiting_.size() + arrivals_.size());
    st.kv_cache_usage = static_cast<double>(profile_.num_gpu_blocks - free_blocks_) /
                        static_cast<double>(profile_.num_gpu_blocks);
    st.preemptions = preemptions_;
    st.steps = steps_;
    return st;
  }

  EngineCounters counters() const override { return counters_; }

  bool busy_at(int64_t now_ns) const override {
    return !running_.empty() || !waiting_.empty() ||
           (!arrivals_.empty() && reqs_[arrivals_.front()].arrival_ns <= now_ns);
  }

  int32_t outstanding() const override { return static_cast<int32_t>(index_.size()); }

  int32_t num_gpu_blocks() const override { return profile_.num_gpu_blocks; }

 private:
  enum class State { kArriving, kWaiting, kRunning, kFinished };

  struct Req {
    uint64_t id = 0;
    int32_t prompt = 0;
    int32_t output = 0;
    int32_t computed = 0;   // tokens whose KV exists (reset to 0 by preemption)
    int32_t generated = 0;  // output tokens already sampled
    int32_t blocks = 0;     // KV blocks held
    int64_t arrival_ns = 0;
    State state = State::kArriving;
    int32_t num_tokens() const { return prompt + generated; }
    // Feeding back its last sampled token: a decode, not (re)prefill.
    bool decoding() const { return generated > 0 && computed == num_tokens() - 1; }
  };

  // The next step, decided at its start. Running requests [0, kept) survive; the rest are
  // preempted. running_tokens[i] is scheduled for running_[i]; admitted_tokens[j] for the
  // j-th request of (waiting_ then the first moved_arrivals of arrivals_).
  struct Plan {
    bool valid = false;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    size_t moved_arrivals = 0;
    size_t kept = 0;
    std::vector<int32_t> running_tokens;
    std::vector<int32_t> admitted_tokens;
  };

  int64_t blocks_for(int64_t tokens) const {
    return (tokens + profile_.block_size - 1) / profile_.block_size;
  }

  // The request waiting at position j of (waiting_, then arrivals_).
  const Req& queued(size_t j) const {
    return reqs_[j < waiting_.size() ? waiting_[j] : arrivals_[j - waiting_.size()]];
  }

  void ensure_plan() const {
    if (plan_.valid) return;
    Plan& p = plan_;
    p.running_tokens.clear();
    p.admitted_tokens.clear();
    if (running_.empty() && waiting_.empty()) {
      if (arrivals_.empty()) return;  // idle: nothing due
      p.start_ns = std::max(clock_ns_, reqs_[arrivals_.front()].arrival_ns);
    } else {
      p.start_ns = clock_ns_;
    }
    p.moved_arrivals = 0;
    while (p.moved_arrivals < arrivals_.size() &&
           reqs_[arrivals_[p.moved_arrivals]].arrival_ns <= p.start_ns) {
      ++p.moved_arrivals;
    }

    int64_t budget = profile_.max_num_batched_tokens;
    int64_t free_blocks = free_blocks_;
    StepBatch batch;
    batch.start_ns = p.start_ns;
    auto count = [&](const Req& r, int32_t n) {
      if (r.decoding()) {
        ++batch.decode_seqs;
        batch.decode_tokens += n;
        batch.decode_context_tokens += r.computed;
        batch.draft_tokens += n - 1;
        ++batch.sampling_seqs;
      } else {
        ++batch.prefill_seqs;
        batch.prefill_tokens += n;
        batch.prefill_attention_pairs += int64_t{n} * r.computed + int64_t{n} * n / 2;
        if (r.computed + n == r.num_tokens()) ++batch.sampling_seqs;
      }
      batch.context_tokens += int64_t{r.computed} + n;
    };

    // 1. Running requests first; preempt from the back when the KV cache is full.
    p.kept = running_.size();
    while (p.running_tokens.size() < p.kept && budget > 0) {
      size_t i = p.running_tokens.size();
      const Req& r = reqs_[running_[i]];
      auto n = static_cast<int32_t>(std::min<int64_t>(wanted_tokens(r), budget));
      int64_t need = blocks_for(int64_t{r.computed} + n) - r.blocks;
      bool preempted_itself = false;
      while (need > free_blocks) {
        --p.kept;
        free_blocks += reqs_[running_[p.kept]].blocks;
        if (p.kept == i) {
          preempted_itself = true;
          break;
        }
      }
      if (preempted_itself) break;
      free_blocks -= need;
      budget -= n;
      p.running_tokens.push_back(n);
      count(r, n);
    }

    // 2. Waiting requests, FCFS, only when nobody was preempted in this step.
    if (p.kept == running_.size()) {
      const size_t queue_len = waiting_.size() + p.moved_arrivals;
      for (size_t j = 0; j < queue_len && budget > 0; ++j) {
        if (p.kept + j >= static_cast<size_t>(profile_.max_num_seqs)) break;
        const Req& r = queued(j);
        int64_t n = r.num_tokens() - r.computed;  // computed > 0 only for imported KV
        if (!profile_.chunked_prefill && n > budget) break;
        n = std::min(n, budget);
        int64_t need = blocks_for(r.computed + n);
        if (need > free_blocks) break;
        free_blocks -= need;
        budget -= n;
        p.admitted_tokens.push_back(static_cast<int32_t>(n));
        count(r, static_cast<int32_t>(n));
      }
    }

    bool work = !p.running_tokens.empty() || !p.admitted_tokens.empty();
    if (!work && p.kept == running_.size()) {
      // Cannot happen for shapes rejection_reason() accepts; never spin on it.
      throw core::Error(core::ErrorKind::kInternal, "engine model",
                        "a step with no work and no preemption");
    }
    p.end_ns = p.start_ns + (work ? cost_->step_ns(batch) : 0);
    p.valid = true;
  }

  // Tokens a running request asks of a step: the rest of its prompt (or recompute), or one
  // decode plus as many drafts as its remaining output can use.
  int32_t wanted_tokens(const Req& r) const {
    int32_t n = r.num_tokens() - r.computed;
    if (r.decoding()) n += std::min(spec_.draft_tokens, r.output - r.generated - 1);
    return n;
  }

  // Accepted drafts among n - 1 verified: the leading run of accepted positions.
  int32_t accepted_drafts(const Req& r, int32_t drafts) {
    int32_t accepted = 0;
    while (accepted < drafts &&
           unit_draw(spec_.seed, r.id, static_cast<uint64_t>(r.generated) * 64 + accepted) <
               spec_.acceptance_rate) {
      ++accepted;
    }
    ++counters_.spec_drafts;
    counters_.spec_draft_tokens += static_cast<uint64_t>(drafts);
    counters_.spec_accepted_tokens += static_cast<uint64_t>(accepted);
    for (int32_t i = 0; i < accepted; ++i) ++counters_.spec_accepted_per_position[i];
    return accepted;
  }

  // Computes n tokens of `slot`; appends its sampled token (if any) to out. True if finished.
  bool advance(uint32_t slot, int32_t n, int64_t due_ns, std::vector<TokenEvent>& out) {
    Req& r = reqs_[slot];
    int32_t sampled = 1;
    if (r.decoding() && n > 1) {
      sampled += accepted_drafts(r, n - 1);
      n = sampled;  // rejected drafts leave no KV behind
    } else if (!r.decoding()) {
      counters_.prompt_tokens += static_cast<uint64_t>(n);
    }
    auto blocks = static_cast<int32_t>(blocks_for(int64_t{r.computed} + n));
    free_blocks_ -= blocks - r.blocks;
    r.blocks = blocks;
    r.computed += n;
    if (r.computed < r.num_tokens()) return false;  // a prefill chunk, nothing sampled
    for (int32_t k = 0; k < sampled; ++k) {
      ++r.generated;
      out.push_back(TokenEvent{r.id, r.generated - 1, due_ns, r.generated == r.output});
    }
    counters_.generation_tokens += static_cast<uint64_t>(sampled);
    if (r.generated < r.output) return false;
    ++counters_.finished_requests;
    return true;
  }

  void apply_plan(std::vector<TokenEvent>& out) {
    Plan& p = plan_;
    p.valid = false;
    for (size_t k = 0; k < p.moved_arrivals; ++k) {
      reqs_[arrivals_.front()].state = State::kWaiting;
      waiting_.push_back(arrivals_.front());
      arrivals_.pop_front();
    }
    // Preempted requests go to the front of the waiting queue, keeping their running order.
    for (size_t k = running_.size(); k-- > p.kept;) {
      Req& r = reqs_[running_[k]];
      free_blocks_ += r.blocks;
      r.blocks = 0;
      r.computed = 0;
      r.state = State::kWaiting;
      waiting_.push_front(running_[k]);
      ++preemptions_;
    }
    running_.resize(p.kept);
    counters_.busy_ns += p.end_ns - p.start_ns;
    clock_ns_ = p.end_ns;
    if (p.running_tokens.empty() && p.admitted_tokens.empty()) return;  // preemption only
    ++steps_;

    finished_.clear();
    for (size_t i = 0; i < p.running_tokens.size(); ++i) {
      if (advance(running_[i], p.running_tokens[i], p.end_ns, out)) {
        finished_.push_back(running_[i]);
      }
    }
    for (int32_t n : p.admitted_tokens) {
      uint32_t slot = waiting_.front();
      waiting_.pop_front();
      reqs_[slot].state = State::kRunning;
      running_.push_back(slot);
      if (advance(slot, n, p.end_ns, out)) finished_.push_back(slot);
    }
    if (!finished_.empty()) {
      for (uint32_t slot : finished_) reqs_[slot].state = State::kFinished;
      std::erase_if(running_,
                    [this](uint32_t slot) { return reqs_[slot].state == State::kFinished; });
      for (uint32_t slot : finished_) release(slot);
    }
  }

  // Forgets a request that is in no queue any more; frees its KV blocks.
  void release(uint32_t slot) {
    Req& r = reqs_[slot];
    free_blocks_ += r.blocks;
    r.blocks = 0;
    index_.erase(r.id);
    free_slots_.push_back(slot);
  }

  EngineProfile profile_;
  std::shared_ptr<const StepCost> cost_;
  SpecDecode spec_;
  EngineCounters counters_;
  std::vector<Req> reqs_;
  std::vector<uint32_t> free_slots_;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<uint32_t> running_;   // running order = admission order
  std::deque<uint32_t> waiting_;    // FCFS; preempted requests at the front
  std::deque<uint32_t> arrivals_;   // added, not yet reached by the engine's time line
  std::vector<uint32_t> finished_;  // scratch
  int64_t clock_ns_ = std::numeric_limits<int64_t>::min();  // end of the last step
  int64_t free_blocks_;
  uint64_t steps_ = 0;
  uint64_t preemptions_ = 0;
  // A cache of the next step: computed on demand (also from next_due_ns), dropped by any
  // change that could alter it, so it is logically part of the const state.
  mutable Plan plan_;
};

}  // namespace

std::unique_ptr<Engine> make_engine(const EngineProfile& scheduler,
                                    std::shared_ptr<const StepCost> cost, SpecDecode spec) {
  if (!cost) cost = make_linear_cost(scheduler);
  return std::make_unique<EngineModel>(scheduler, std::move(cost), spec);
}

std::unique_ptr<TimingModel> make_engine_model(const EngineProfile& profile) {
  return make_engine(profile, make_linear_cost(profile));
}

}  // namespace servebench::sim

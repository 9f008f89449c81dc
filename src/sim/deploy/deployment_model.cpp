// A deployment as TimingModels: engines (one per worker replica) advanced together in due
// order, routers choosing replicas, disaggregated requests moving from a prefill engine to a
// decode engine after their KV transfer, co-tenants on one GPU slowing each other's steps,
// one output stage per frontend. docs/deployments.md, "Topologies".
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_map>

#include "core/error.h"
#include "sim/deploy/deploy.h"
#include "sim/deploy/frontend_output.h"
#include "sim/deploy/scaled_cost.h"

namespace servebench::sim::deploy {
namespace {

// The prefixes a replica has cached, newest last; bounded (its cache evicts, we forget).
struct PrefixMemory {
  static constexpr size_t kMaxEntries = 4096;
  std::unordered_map<uint64_t, int32_t> tokens_by_key;
  std::deque<uint64_t> order;
  int32_t cached(uint64_t key) const {
    auto it = tokens_by_key.find(key);
    return key == 0 || it == tokens_by_key.end() ? 0 : it->second;
  }
  void remember(uint64_t key, int32_t tokens) {
    if (key == 0 || tokens <= 0) return;
    auto [it, fresh] = tokens_by_key.try_emplace(key, tokens);
    it->second = std::max(it->second, tokens);
    if (!fresh) return;
    order.push_back(key);
    if (order.size() > kMaxEntries) {
      tokens_by_key.erase(order.front());
      order.pop_front();
    }
  }
};

struct Replica {
  size_t worker = 0;
  int32_t index = 0;
  std::unique_ptr<Engine> engine;
  std::shared_ptr<ScaledCost> cost;
  PrefixMemory prefixes;
  double kv_sent_bytes = 0, kv_received_bytes = 0;
  int64_t start_phase_ns = 0;       // its first step waits this long after its first arrival
  std::optional<int64_t> ready_ns;  // set by its first arrival: no step starts before
  int32_t kv_sending = 0;           // KV transfers leaving …
  int32_t kv_receiving = 0;         // … and arriving now
  int64_t at(int64_t arrival_ns) {  // when an arrival reaches the engine
    if (!ready_ns) ready_ns = arrival_ns + start_phase_ns;
    return std::max(arrival_ns, *ready_ns);
  }
};

struct Pool {
  std::vector<size_t> replicas;
  size_t next = 0;  // round robin
};

struct Flight {
  size_t frontend = 0;
  int32_t output_lane = 0;  // of its frontend's output stage
  uint64_t request_id = 0;
  RequestShape shape{};
  size_t router = 0;
  size_t replica = 0;                    // the engine holding it now
  bool prefilling = false;               // on a prefill engine: its one token is not the client's
  std::optional<size_t> decode_replica;  // chosen when it was routed, if it was
  uint64_t prefix_key = 0;
  int32_t prefix_tokens = 0;
  RequestRoute route;
};

// A KV cache on its way: bytes still to move at a rate fixed since `since_ns`.
struct Transfer {
  uint64_t flight = 0;
  size_t from = 0, to = 0;  // replicas
  double bytes_left = 0;
  double full_bytes_per_ns = 0;  // alone on its links
  double bytes_per_ns = 0;       // now, shared
  int64_t fixed_ns = 0;          // link latency + per-transfer overhead, after the bytes
  int64_t since_ns = 0;
  int64_t bytes_done_ns = 0;  // when its last byte leaves at today's rate
  int64_t arrival_ns = -1;    // what the decode engine was told
};

class Deployed;

class Frontend final : public FrontendModel {
 public:
  Frontend(Deployed& owner, size_t index, const FrontendSpec& spec)
      : output(spec.output_ns_per_chunk, spec.api_servers), owner_(owner), index_(index) {}
  std::string rejection_reason(RequestShape shape) const override;
  void add(uint64_t request_id, RequestShape shape, int64_t arrival_ns) override {
    add_with_prefix(request_id, shape, arrival_ns, 0, 0);
  }
  void add_with_prefix(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                       uint64_t prefix_key, int32_t prefix_tokens) override;
  void cancel(uint64_t request_id) override;
  std::optional<int64_t> next_due_ns() const override;
  void pop_due(int64_t now_ns, std::vector<TokenEvent>& out) override;
  ModelStats stats() const override;
  std::optional<RequestRoute> route(uint64_t request_id) const override;

  std::unordered_map<uint64_t, uint64_t> internal_ids;  // request id → flight id
  FrontendOutput output;                                // client's ids
  std::vector<uint64_t> finished;                       // flights to forget on the next call
  std::vector<size_t> replicas;                         // reachable engines

 private:
  Deployed& owner_;
  size_t index_;
};

class Deployed final : public DeploymentModel {
 public:
  explicit Deployed(const Deployment& d) : spec_(d) {
    std::vector<std::vector<size_t>> replicas_of(d.workers.size());
    for (size_t w = 0; w < d.workers.size(); ++w) {
      const WorkerSpec& ws = d.workers[w];
      std::shared_ptr<const StepCost> base =
          ws.given_costs ? make_linear_cost(ws.engine) : make_roofline_cost(ws.hardware);
      for (int32_t r = 0; r < ws.replicas; ++r) {
        Replica rep;
        rep.worker = w;
        rep.index = r;
        const uint64_t seed = ws.noise_seed ^ (uint64_t{w} << 32) ^ static_cast<uint64_t>(r);
        rep.cost = std::make_shared<ScaledCost>(base, ws.step_time_scale, ws.step_time_cv, seed);
        rep.start_phase_ns =
            std::llround(unit_draw(seed, ~uint64_t{0}) * static_cast<double>(ws.start_phase_ns));
        SpecDecode spec = ws.spec;
        spec.seed ^= (uint64_t{w} << 32) ^ static_cast<uint64_t>(r);
        rep.engine = make_engine(ws.engine, rep.cost, spec);
        replicas_of[w].push_back(replicas_.size());
        replicas_.push_back(std::move(rep));
      }
    }
    for (const SharedGpuSpec& shared : d.shared_gpus) {
      for (const std::string& a : shared.workers) {
        for (const std::string& b : shared.workers) {
          if (a == b) continue;
          const auto& ra = replicas_of[worker_index(a)];
          const auto& rb = replicas_of[worker_index(b)];
          for (size_t r = 0; r < ra.size() && r < rb.size(); ++r) {
            replicas_[ra[r]].cost->share_with(replicas_[rb[r]].engine.get(), shared.slowdown);
          }
        }
      }
    }
    auto pool_of = [&](const std::vector<std::string>& workers) {
      Pool pool;
      for (const std::string& name : workers) {
        for (size_t r : replicas_of[worker_index(name)]) pool.replicas.push_back(r);
      }
      return pool;
    };
    for (const RouterSpec& router : d.routers) {
      serving_.push_back(pool_of(router.disaggregated() ? router.decode : router.workers));
      prefilling_.push_back(pool_of(router.prefill));
    }
    for (size_t f = 0; f < d.frontends.size(); ++f) {
      frontends_.push_back(std::make_unique<Frontend>(*this, f, d.frontends[f]));
      size_t router = router_index(d.frontends[f].router);
      frontend_router_.push_back(router);
      for (const Pool* pool : {&serving_[router], &prefilling_[router]}) {
        for (size_t r : pool->replicas) frontends_.back()->replicas.push_back(r);
      }
    }
  }

  size_t frontend_count() const override { return frontends_.size(); }
  const FrontendSpec& frontend_spec(size_t i) const override { return spec_.frontends.at(i); }
  FrontendModel& frontend(size_t i) override { return *frontends_.at(i); }

  std::vector<WorkerState> worker_states() const override {
    std::vector<WorkerState> states;
    for (const Replica& rep : replicas_) {
      states.push_back(WorkerState{spec_.workers[rep.worker].name, rep.index, rep.engine->stats(),
                                   rep.engine->counters(), rep.engine->num_gpu_blocks(),
                                   rep.kv_sent_bytes, rep.kv_received_bytes});
    }
    return states;
  }

  std::string rejection_reason(size_t frontend, RequestShape shape) const {
    size_t router = frontend_router_[frontend];
    for (size_t r : serving_[router].replicas) {
      if (std::string why = replicas_[r].engine->rejection_reason(shape); !why.empty()) {
        return why;
      }
    }
    for (size_t r : prefilling_[router].replicas) {
      std::string why = replicas_[r].engine->rejection_reason({shape.prompt_tokens, 1});
      if (!why.empty()) return why;
    }
    return {};
  }

  void add(size_t frontend, uint64_t request_id, RequestShape shape, int64_t arrival_ns,
           uint64_t prefix_key, int32_t prefix_tokens) {
    Frontend& fe = *frontends_[frontend];
    forget_finished(fe);
    auto where = [&] { return "deployment frontend request " + std::to_string(request_id); };
    if (std::string why = rejection_reason(frontend, shape); !why.empty()) {
      throw core::Error(core::ErrorKind::kInternal, where(), why);
    }
    if (fe.internal_ids.contains(request_id)) {
      throw core::Error(core::ErrorKind::kInternal, where(), "added twice");
    }
    const uint64_t id = next_flight_id_++;
    fe.internal_ids.emplace(request_id, id);
    Flight& flight = flights_[id];
    flight.frontend = frontend;
    flight.output_lane = fe.output.assign_lane();
    flight.request_id = request_id;
    flight.shape = shape;
    flight.router = frontend_router_[frontend];
    flight.prefix_key = prefix_key;
    flight.prefix_tokens = std::min(prefix_tokens, shape.prompt_tokens);
    const RouterSpec& router = spec_.routers[flight.router];
    const int64_t at = arrival_ns + spec_.frontends[frontend].request_overhead_ns;
    if (router.disaggregated()) {
      if (router.local_prefill_max_tokens > 0) {
        // Conditional disaggregation: a prompt with little left to prefill on the decode
        // replica it would go to stays there.
        size_t decode = pick(serving_[flight.router], router, flight);
        if (flight.shape.prompt_tokens - cached_on(decode, flight) <=
            router.local_prefill_max_tokens) {
          place(id, flight, decode, at);
          return;
        }
        flight.decode_replica = decode;
      }
      flight.prefilling = true;
      place(id, flight, pick(prefilling_[flight.router], router, flight), at);
      return;
    }
    place(id, flight, pick(serving_[flight.router], router, flight), at);
  }

  void cancel(size_t frontend, uint64_t request_id) {
    Frontend& fe = *frontends_[frontend];
    forget_finished(fe);
    auto it = fe.internal_ids.find(request_id);
    if (it == fe.internal_ids.end()) return;
    const uint64_t id = it->second;
    replicas_[flights_.at(id).replica].engine->cancel(id);
    // A KV transfer under way stops, from the last change of the links' sharing.
    auto moving = std::find_if(transfers_.begin(), transfers_.end(),
                               [&](const Transfer& t) { return t.flight == id; });
    const bool was_moving = moving != transfers_.end();
    if (was_moving) {
      --replicas_[moving->from].kv_sending;
      --replicas_[moving->to].kv_receiving;
      transfers_.erase(moving);
    }
    fe.output.cancel(request_id);
    flights_.erase(id);
    fe.internal_ids.erase(it);
    if (was_moving) rate_transfers();  // the others share the links anew
  }

  std::optional<int64_t> next_due_ns(size_t frontend) const {
    const Frontend& fe = *frontends_[frontend];
    std::optional<int64_t> due = fe.output.next_due_ns();
    for (size_t r : fe.replicas) {
      auto d = replicas_[r].engine->next_due_ns();
      if (d && (!due || *d < *due)) due = d;
    }
    // A transfer leaving the links speeds up the others: the model must advance then.
    for (const Transfer& t : transfers_) {
      if (!due || t.bytes_done_ns < *due) due = t.bytes_done_ns;
    }
    return due;
  }

  void pop_due(size_t frontend, int64_t now_ns, std::vector<TokenEvent>& out) {
    Frontend& fe = *frontends_[frontend];
    forget_finished(fe);
    advance_to(now_ns);
    const size_t first = out.size();
    fe.output.pop_due(now_ns, out);
    for (size_t i = first; i < out.size(); ++i) {
      if (out[i].last) fe.finished.push_back(fe.internal_ids.at(out[i].request_id));
    }
  }

  ModelStats stats(size_t frontend) const {
    ModelStats total;
    const Frontend& fe = *frontends_[frontend];
    for (size_t r : fe.replicas) {
      ModelStats s = replicas_[r].engine->stats();
      total.running += s.running;
      total.waiting += s.waiting;
      total.kv_cache_usage += s.kv_cache_usage / static_cast<double>(fe.replicas.size());
      total.preemptions += s.preemptions;
      total.steps += s.steps;
    }
    return total;
  }

  std::optional<RequestRoute> route(size_t frontend, uint64_t request_id) const {
    const Frontend& fe = *frontends_[frontend];
    auto it = fe.internal_ids.find(request_id);
    if (it == fe.internal_ids.end()) return std::nullopt;
    return flights_.at(it->second).route;
  }

 private:
  size_t worker_index(const std::string& name) const {
    for (size_t w = 0; w < spec_.workers.size(); ++w) {
      if (spec_.workers[w].name == name) return w;
    }
    throw core::Error(core::ErrorKind::kInternal, spec_.path, "unknown worker " + name);
  }
  size_t router_index(const std::string& name) const {
    for (size_t r = 0; r < spec_.routers.size(); ++r) {
      if (spec_.routers[r].name == name) return r;
    }
    throw core::Error(core::ErrorKind::kInternal, spec_.path, "unknown router " + name);
  }

  int32_t cached_on(size_t replica, const Flight& flight) const {
    if (!spec_.workers[replicas_[replica].worker].prefix_caching) return 0;
    int32_t cached =
        std::min(replicas_[replica].prefixes.cached(flight.prefix_key), flight.prefix_tokens);
    return std::min(cached, flight.shape.prompt_tokens - 1);
  }

  // The replica of `pool` the router's policy chooses for `flight`.
  size_t pick(Pool& pool, const RouterSpec& router, const Flight& flight) {
    const auto& reps = pool.replicas;
    switch (router.policy) {
      case RoutePolicy::kRoundRobin:
        return reps[pool.next++ % reps.size()];
      case RoutePolicy::kLeastOutstanding:
        return *std::min_element(reps.begin(), reps.end(), [&](size_t a, size_t b) {
          return replicas_[a].engine->outstanding() < replicas_[b].engine->outstanding();
        });
      case RoutePolicy::kKvAware:
        break;
    }
    // Dynamo's KV router: cost = weight × blocks still to prefill + blocks in use.
    size_t best = reps.front();
    double best_cost = std::numeric_limits<double>::infinity();
    for (size_t r : reps) {
      const Engine& engine = *replicas_[r].engine;
      const double block = spec_.workers[replicas_[r].worker].engine.block_size;
      const double to_prefill = flight.shape.prompt_tokens - cached_on(r, flight);
      const double cost = router.kv_overlap_weight * std::ceil(to_prefill / block) +
                          engine.stats().kv_cache_usage * engine.num_gpu_blocks() +
                          engine.outstanding() * 1e-3;  // ties: the less loaded
      if (cost < best_cost) {
        best_cost = cost;
        best = r;
      }
    }
    return best;
  }

  void place(uint64_t id, Flight& flight, size_t replica, int64_t at_ns) {
    Replica& rep = replicas_[replica];
    int32_t cached = cached_on(replica, flight);
    RequestShape shape = flight.shape;
    if (flight.prefilling) {
      shape.output_tokens = 1;  // the prefill worker's token is not the client's
      flight.route.prefill_worker = spec_.workers[rep.worker].name;
      flight.route.prefill_replica = rep.index;
    } else {
      flight.route.worker = spec_.workers[rep.worker].name;
      flight.route.replica = rep.index;
    }
    flight.route.cached_prompt_tokens = std::max(flight.route.cached_prompt_tokens, cached);
    flight.replica = replica;
    rep.engine->add_with_kv(id, shape, rep.at(at_ns), cached);
    rep.prefixes.remember(flight.prefix_key, flight.prefix_tokens);
  }

  // The KV of a finished prefill goes to a decode replica: α + bytes / bandwidth, the
  // bandwidth of min(TP_prefill, TP_decode) GPUs sending in parallel. Transfers contend: one
  // leaving a replica shares that replica's links with the others leaving it, one arriving
  // shares the receiver's, each getting the bandwidth ÷ the larger of the two counts (fair
  // share; exact when the transfers share one end). The decode engine is told the arrival
  // each time the sharing changes it.
  void hand_over(uint64_t id, Flight& flight, int64_t due_ns) {
    const RouterSpec& router = spec_.routers[flight.router];
    const WorkerSpec& from = spec_.workers[replicas_[flight.replica].worker];
    size_t decode = flight.decode_replica ? *flight.decode_replica
                                          : pick(serving_[flight.router], router, flight);
    const WorkerSpec& to = spec_.workers[replicas_[decode].worker];
    const double bytes = kv_bytes_per_token(spec_.model) * flight.shape.prompt_tokens;
    const double lanes = std::min(from.hardware.tp, to.hardware.tp);
    settle_transfers(due_ns);
    Transfer t;
    t.flight = id;
    t.from = flight.replica;
    t.to = decode;
    t.bytes_left = bytes;
    t.full_bytes_per_ns =
        router.kv_link.bytes_per_s * from.hardware.efficiency.network * lanes / 1e9;
    t.fixed_ns = router.kv_link.latency_ns + router.kv_overhead_ns;
    t.since_ns = due_ns;
    flight.route.kv_transfer_bytes = bytes;
    flight.route.kv_transfer_start_ns = due_ns;
    replicas_[flight.replica].kv_sent_bytes += bytes;
    replicas_[decode].kv_received_bytes += bytes;
    ++replicas_[t.from].kv_sending;
    ++replicas_[t.to].kv_receiving;
    flight.prefilling = false;
    flight.replica = decode;
    Replica& rep = replicas_[decode];
    flight.route.worker = to.name;
    flight.route.replica = rep.index;
    transfers_.push_back(t);
    rate_transfers();
  }

  // Moves every transfer's bytes on to now_ns (no transfer finishes before it: the caller
  // steps through bytes_done_ns in order).
  void settle_transfers(int64_t now_ns) {
    for (Transfer& t : transfers_) {
      t.bytes_left -= t.bytes_per_ns * static_cast<double>(now_ns - t.since_ns);
      t.since_ns = now_ns;
    }
  }

  // Shares the links anew, and tells each decode engine when its KV arrives.
  void rate_transfers() {
    for (Transfer& t : transfers_) {
      const int32_t sharing = std::max(replicas_[t.from].kv_sending, replicas_[t.to].kv_receiving);
      t.bytes_per_ns = t.full_bytes_per_ns / sharing;
      t.bytes_done_ns = t.since_ns + std::llround(std::max(t.bytes_left, 0.0) / t.bytes_per_ns);
      const int64_t arrival = t.bytes_done_ns + t.fixed_ns;
      if (arrival == t.arrival_ns) continue;
      Flight& flight = flights_.at(t.flight);
      Engine& engine = *replicas_[t.to].engine;
      if (t.arrival_ns >= 0) engine.cancel(t.flight);
      t.arrival_ns = arrival;
      flight.route.kv_transfer_end_ns = arrival;
      // The decode worker computes the prompt's last token itself and samples the first
      // token: the client's first token comes from its first step (as Dynamo's does).
      engine.add_with_kv(t.flight, flight.shape, replicas_[t.to].at(arrival),
                         flight.shape.prompt_tokens - 1);
    }
  }

  // The transfer whose bytes are done first, if by now_ns: it leaves the links.
  bool finish_transfer_by(int64_t now_ns, int64_t before_ns) {
    auto first = std::min_element(
        transfers_.begin(), transfers_.end(),
        [](const Transfer& a, const Transfer& b) { return a.bytes_done_ns < b.bytes_done_ns; });
    if (first == transfers_.end() || first->bytes_done_ns > now_ns ||
        first->bytes_done_ns > before_ns) {
      return false;
    }
    const int64_t done = first->bytes_done_ns;
    --replicas_[first->from].kv_sending;
    --replicas_[first->to].kv_receiving;
    transfers_.erase(first);
    settle_transfers(done);
    rate_transfers();
    return true;
  }

  // Runs every engine's steps and transfers due by now_ns in due order, so a prefill's
  // hand-over reaches the decode engine before any of its later steps run.
  void advance_to(int64_t now_ns) {
    for (;;) {
      size_t best = replicas_.size();
      int64_t best_due = 0;
      for (size_t r = 0; r < replicas_.size(); ++r) {
        auto due = replicas_[r].engine->next_due_ns();
        if (due && *due <= now_ns && (best == replicas_.size() || *due < best_due)) {
          best = r;
          best_due = *due;
        }
      }
      const int64_t before = best == replicas_.size() ? now_ns : best_due;
      if (finish_transfer_by(now_ns, before)) continue;
      if (best == replicas_.size()) return;
      scratch_.clear();
      replicas_[best].engine->pop_due(best_due, scratch_);
      for (const TokenEvent& e : scratch_) deliver(e);
    }
  }

  void deliver(const TokenEvent& e) {
    Flight& flight = flights_.at(e.request_id);
    if (flight.prefilling) {
      hand_over(e.request_id, flight, e.due_ns);
      return;
    }
    frontends_[flight.frontend]->output.push(
        flight.output_lane, TokenEvent{flight.request_id, e.token_index, e.due_ns, e.last});
  }

  void forget_finished(Frontend& fe) {
    for (uint64_t id : fe.finished) {
      auto it = flights_.find(id);
      if (it == flights_.end()) continue;
      fe.internal_ids.erase(it->second.request_id);
      flights_.erase(it);
    }
    fe.finished.clear();
  }

  Deployment spec_;
  std::vector<Replica> replicas_;
  std::vector<Pool> serving_;     // per router: aggregated or decode replicas
  std::vector<Pool> prefilling_;  // per router: prefill replicas (empty: aggregated)
  std::vector<std::unique_ptr<Frontend>> frontends_;
  std::vector<size_t> frontend_router_;
  std::unordered_map<uint64_t, Flight> flights_;
  uint64_t next_flight_id_ = 1;
  std::vector<TokenEvent> scratch_;
  std::vector<Transfer> transfers_;  // KV caches on their way, few
};

std::string Frontend::rejection_reason(RequestShape shape) const {
  return owner_.rejection_reason(index_, shape);
}
void Frontend::add_with_prefix(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                               uint64_t prefix_key, int32_t prefix_tokens) {
  owner_.add(index_, request_id, shape, arrival_ns, prefix_key, prefix_tokens);
}
void Frontend::cancel(uint64_t request_id) {
  owner_.cancel(index_, request_id);
}
std::optional<int64_t> Frontend::next_due_ns() const {
  return owner_.next_due_ns(index_);
}
void Frontend::pop_due(int64_t now_ns, std::vector<TokenEvent>& out) {
  owner_.pop_due(index_, now_ns, out);
}
ModelStats Frontend::stats() const {
  return owner_.stats(index_);
}
std::optional<RequestRoute> Frontend::route(uint64_t request_id) const {
  return owner_.route(index_, request_id);
}

}  // namespace

std::unique_ptr<DeploymentModel> make_deployment_model(const Deployment& deployment) {
  return std::make_unique<Deployed>(deployment);
}

}  // namespace servebench::sim::deploy

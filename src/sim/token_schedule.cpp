// The schedule made of timing models: each model is paced by one steady_timer on the front
// thread that drives it, armed at the model's next due time minus a short spin. When it fires,
// every due token goes to the sink of the thread that owns the request (directly when that is
// the driving thread, else as one posted batch per thread).
#include "sim/token_schedule.h"

#include <algorithm>
#include <atomic>
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/clock.h"
#include "sim/deployment_state.h"
#include "sim/sim.h"

namespace servebench::sim::detail {
namespace {

namespace asio = boost::asio;

// Wake this early, then spin to the due time. It bounds lateness by the wake-up latency of a
// timer with 1 ns slack, and costs up to this much CPU per wake-up (bench/scripts/bench_sim.py).
constexpr int64_t kSpinNs = 50'000;
// A deployment's token due within kSpinNs of the last ones is sent up to this much late,
// together with whatever falls due meanwhile, rather than after a spin or a wake-up of its own.
// Its frontend writes chunks 23–46 µs apart (deploy/frontend_output.h), and on this VM a
// wake-up per chunk, or a spin to each, doubled the CPU per token: docs/performance.md.
constexpr int64_t kDeploymentCoalesceNs = 250'000;

// One timing model and the timer of the front thread that drives it. The model is guarded by
// mu_ (submit and cancel come from every front thread); the timer state belongs to the driving
// thread alone.
class PacedModel {
 public:
  // A model of its own, guarded by its own mutex.
  PacedModel(std::unique_ptr<TimingModel> model, size_t driver,
             const std::vector<FrontThread>& fronts)
      : owned_(std::move(model)),
        model_(owned_.get()),
        mu_(own_mu_),
        fronts_(fronts),
        driver_(driver),
        timer_(*fronts[driver].ioc) {}
  // A deployment's frontend: its state is shared with the other frontends under `mu`.
  PacedModel(deploy::FrontendModel& frontend, std::mutex& mu, bool keep_routes, size_t driver,
             const std::vector<FrontThread>& fronts)
      : model_(&frontend),
        frontend_(&frontend),
        keep_routes_(keep_routes),
        mu_(mu),
        fronts_(fronts),
        driver_(driver),
        timer_(*fronts[driver].ioc) {}

  std::string submit(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                     PromptPrefix prefix) {
    {
      std::lock_guard lock(mu_);
      std::string why = model_->rejection_reason(shape);
      if (!why.empty()) return why;
      if (frontend_) {
        frontend_->add_with_prefix(request_id, shape, arrival_ns, prefix.key, prefix.tokens);
      } else {
        model_->add(request_id, shape, arrival_ns);
      }
      snapshot();
    }
    if (front_of(request_id) == driver_) {
      arm();
    } else {
      asio::post(*fronts_[driver_].ioc, [this] { arm(); });
    }
    return {};
  }

  void cancel(uint64_t request_id) {
    std::lock_guard lock(mu_);
    if (keep_routes_) keep_route(request_id);
    model_->cancel(request_id);
    snapshot();
  }

  std::optional<deploy::RequestRoute> take_route(uint64_t request_id) {
    std::lock_guard lock(mu_);
    auto it = routes_.find(request_id);
    if (it == routes_.end()) return std::nullopt;
    deploy::RequestRoute route = std::move(it->second);
    routes_.erase(it);
    return route;
  }

  size_t driver() const { return driver_; }

  void stop() {
    ++timer_gen_;
    timer_.cancel();
  }

  void add_stats(ScheduleStats& s) const {
    s.running += running_.load(std::memory_order_relaxed);
    s.waiting += waiting_.load(std::memory_order_relaxed);
    s.preemptions += preemptions_.load(std::memory_order_relaxed);
    s.kv_cache_usage = std::max(s.kv_cache_usage, kv_usage_.load(std::memory_order_relaxed));
  }

 private:
  void keep_route(uint64_t request_id) {  // under mu_
    if (auto route = frontend_->route(request_id)) routes_[request_id] = std::move(*route);
  }

  void snapshot() {  // under mu_
    ModelStats s = model_->stats();
    running_.store(s.running, std::memory_order_relaxed);
    waiting_.store(s.waiting, std::memory_order_relaxed);
    preemptions_.store(s.preemptions, std::memory_order_relaxed);
    kv_usage_.store(s.kv_cache_usage, std::memory_order_relaxed);
  }

  std::optional<int64_t> next_due() {
    std::lock_guard lock(mu_);
    return model_->next_due_ns();
  }

  // Wakes `early` before the next due time (negative: after it).
  void arm(int64_t early = kSpinNs) {
    std::optional<int64_t> next = next_due();
    if (!next) return;
    const int64_t wake = *next - early;
    if (timer_armed_ && wake >= armed_wake_ns_) return;
    timer_armed_ = true;
    armed_wake_ns_ = wake;
    const uint64_t gen = ++timer_gen_;
    timer_.expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(wake)));
    timer_.async_wait([this, gen](boost::system::error_code ec) {
      if (ec || gen != timer_gen_) return;
      timer_armed_ = false;
      on_timer();
    });
  }

  void on_timer() {
    std::optional<int64_t> next = next_due();
    if (!next) return;
    int64_t now = core::mono_ns();
    if (*next - now > kSpinNs) {
      arm();
      return;
    }
    while (now < *next) now = core::mono_ns();
    events_.clear();
    {
      std::lock_guard lock(mu_);
      model_->pop_due(now, events_);
      if (keep_routes_) {
        for (const TokenEvent& ev : events_) {
          if (ev.last) keep_route(ev.request_id);
        }
      }
      snapshot();
      next = model_->next_due_ns();
    }
    dispatch();
    if (!next) return;
    const bool soon = *next - core::mono_ns() <= kSpinNs;
    if (soon && frontend_) {
      arm(-kDeploymentCoalesceNs);
    } else if (soon) {
      // Soon due again: come back after any ready I/O rather than looping here.
      ++timer_gen_;
      timer_armed_ = false;
      asio::post(*fronts_[driver_].ioc, [this] { on_timer(); });
    } else {
      arm();
    }
  }

  // The driver's own tokens go to its sink at once, the others' as one posted batch per thread;
  // the order of each request's tokens is kept.
  void dispatch() {
    const size_t n_fronts = fronts_.size();
    if (n_fronts == 1) {
      if (!events_.empty()) fronts_[driver_].sink->on_tokens_due(events_.data(), events_.size());
      return;
    }
    if (outgoing_.size() < n_fronts) outgoing_.resize(n_fronts);
    own_.clear();
    for (const TokenEvent& ev : events_) {
      const size_t owner = front_of(ev.request_id);
      if (owner == driver_ || owner >= n_fronts) {
        own_.push_back(ev);
      } else {
        outgoing_[owner].push_back(ev);
      }
    }
    if (!own_.empty()) fronts_[driver_].sink->on_tokens_due(own_.data(), own_.size());
    for (size_t i = 0; i < outgoing_.size(); ++i) {
      if (outgoing_[i].empty()) continue;
      TokenSink* sink = fronts_[i].sink;
      asio::post(*fronts_[i].ioc, [sink, batch = std::move(outgoing_[i])] {
        sink->on_tokens_due(batch.data(), batch.size());
      });
      outgoing_[i] = {};
    }
  }

  std::unique_ptr<TimingModel> owned_;
  std::mutex own_mu_;
  TimingModel* model_;
  deploy::FrontendModel* frontend_ = nullptr;
  bool keep_routes_ = false;
  std::mutex& mu_;
  std::unordered_map<uint64_t, deploy::RequestRoute> routes_;  // under mu_
  std::atomic<int32_t> running_{0}, waiting_{0};
  std::atomic<uint64_t> preemptions_{0};
  std::atomic<double> kv_usage_{0};

  const std::vector<FrontThread>& fronts_;
  const size_t driver_;
  asio::steady_timer timer_;
  uint64_t timer_gen_ = 0;
  bool timer_armed_ = false;
  int64_t armed_wake_ns_ = 0;
  std::vector<TokenEvent> events_, own_;
  std::vector<std::vector<TokenEvent>> outgoing_;  // batches for other front threads
};

class ModelSchedule final : public TokenSchedule {
 public:
  ModelSchedule(const Options& o, std::vector<FrontThread> fronts) : fronts_(std::move(fronts)) {
    if (o.mode == Options::Mode::kEngine) {
      models_.push_back(std::make_unique<PacedModel>(make_engine_model(o.engine), 0, fronts_));
      return;
    }
    for (size_t i = 0; i < fronts_.size(); ++i) {
      FixedTiming t = o.fixed;
      t.seed = o.seed + static_cast<uint64_t>(i);
      models_.push_back(std::make_unique<PacedModel>(make_fixed_model(t), i, fronts_));
    }
  }

  std::string submit(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                     PromptPrefix prefix) override {
    return model_of(request_id).submit(request_id, shape, arrival_ns, prefix);
  }
  void cancel(uint64_t request_id) override { model_of(request_id).cancel(request_id); }
  void stop(size_t front) override {
    for (auto& m : models_) {
      if (m->driver() == front) m->stop();
    }
  }
  ScheduleStats stats() const override {
    ScheduleStats s;
    for (const auto& m : models_) m->add_stats(s);
    return s;
  }

 private:
  // Fixed mode: the model of the owning thread; engine mode: the one engine.
  PacedModel& model_of(uint64_t request_id) {
    return models_.size() == 1 ? *models_[0] : *models_[front_of(request_id)];
  }

  std::vector<FrontThread> fronts_;
  std::vector<std::unique_ptr<PacedModel>> models_;
};

// One frontend of a deployment, paced by front thread 0.
class DeploymentSchedule final : public TokenSchedule {
 public:
  DeploymentSchedule(DeploymentShared& shared, size_t frontend, bool keep_routes,
                     std::vector<FrontThread> fronts)
      : fronts_(std::move(fronts)),
        model_(shared.model->frontend(frontend), shared.mu, keep_routes, 0, fronts_) {}

  std::string submit(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                     PromptPrefix prefix) override {
    return model_.submit(request_id, shape, arrival_ns, prefix);
  }
  void cancel(uint64_t request_id) override { model_.cancel(request_id); }
  void stop(size_t front) override {
    if (front == model_.driver()) model_.stop();
  }
  ScheduleStats stats() const override {
    ScheduleStats s;
    model_.add_stats(s);
    return s;
  }
  std::optional<deploy::RequestRoute> take_route(uint64_t request_id) override {
    return model_.take_route(request_id);
  }

 private:
  std::vector<FrontThread> fronts_;
  PacedModel model_;
};

}  // namespace

std::unique_ptr<TokenSchedule> make_deployment_schedule(DeploymentShared& shared, size_t frontend,
                                                        bool keep_routes,
                                                        std::vector<FrontThread> fronts) {
  return std::make_unique<DeploymentSchedule>(shared, frontend, keep_routes, std::move(fronts));
}

std::unique_ptr<TokenSchedule> make_model_schedule(const Options& options,
                                                   std::vector<FrontThread> fronts) {
  return std::make_unique<ModelSchedule>(options, std::move(fronts));
}

}  // namespace servebench::sim::detail

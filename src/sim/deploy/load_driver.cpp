// The tests' benchmark client on a made-up clock (load_driver.h).
#include "sim/deploy/load_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace servebench::sim::deploy {

LoadSummary summarize(const std::vector<Finished>& done, size_t target) {
  LoadSummary s;
  int64_t start = INT64_MAX;
  int64_t end = INT64_MIN;
  for (const Finished& f : done) {
    if (target != SIZE_MAX && f.target != target) continue;
    ++s.completed;
    s.mean_ttft_ms += f.ttft_ms();
    s.mean_tpot_ms += f.tpot_ms();
    start = std::min(start, f.arrival_ns);
    end = std::max(end, f.last_ns);
  }
  if (s.completed == 0) return s;
  s.mean_ttft_ms /= static_cast<double>(s.completed);
  s.mean_tpot_ms /= static_cast<double>(s.completed);
  s.requests_per_s = static_cast<double>(s.completed) / (static_cast<double>(end - start) / 1e9);
  return s;
}

std::vector<Finished> LoadDriver::closed_loop(const std::vector<int>& clients, int per_client,
                                              const std::function<Job(size_t, int)>& job) {
  return run({}, clients, per_client, job);
}

std::vector<Finished> LoadDriver::open_loop(std::vector<Job> jobs) {
  return run(std::move(jobs), {}, 0, {});
}

std::vector<Finished> LoadDriver::run(std::vector<Job> jobs, const std::vector<int>& clients,
                                      int per_client, const std::function<Job(size_t, int)>& make) {
  std::multimap<int64_t, Job> pending;  // by arrival
  for (const Job& j : jobs) pending.emplace(j.arrival_ns, j);
  std::vector<int> sent(targets_.size(), 0);
  auto next_of = [&](size_t t, int64_t at) {
    Job j = make(t, sent[t]++);
    j.target = t;
    j.arrival_ns = at;
    pending.emplace(at, j);
  };
  for (size_t t = 0; t < clients.size(); ++t) {
    for (int c = 0; c < clients[t]; ++c) next_of(t, 0);
  }
  const int64_t per_target_total =
      clients.empty() ? 0 : static_cast<int64_t>(per_client);  // per client
  std::map<std::pair<size_t, uint64_t>, Finished> live;
  std::vector<Finished> done;
  uint64_t next_id = 1;
  std::vector<TokenEvent> out;
  for (int guard = 0; guard < 50'000'000; ++guard) {
    std::optional<int64_t> due;
    for (TimingModel* m : targets_) {
      auto d = m->next_due_ns();
      if (d && (!due || *d < *due)) due = d;
    }
    if (!pending.empty() && (!due || pending.begin()->first <= *due)) {
      Job j = pending.begin()->second;
      pending.erase(pending.begin());
      Finished f;
      f.target = j.target;
      f.id = next_id++;
      f.shape = j.shape;
      f.arrival_ns = j.arrival_ns;
      live[{j.target, f.id}] = f;
      if (auto* fe = dynamic_cast<FrontendModel*>(targets_[j.target])) {
        fe->add_with_prefix(f.id, j.shape, j.arrival_ns, j.prefix_key, j.prefix_tokens);
      } else {
        targets_[j.target]->add(f.id, j.shape, j.arrival_ns);
      }
      continue;
    }
    if (!due) return done;
    for (size_t t = 0; t < targets_.size(); ++t) {
      out.clear();
      targets_[t]->pop_due(*due, out);
      for (const TokenEvent& e : out) {
        Finished& f = live.at({t, e.request_id});
        if (e.token_index == 0) f.first_ns = e.due_ns;
        if (e.due_ns == f.first_ns) ++f.events_at_first_due;
        if (e.due_ns != f.last_ns) ++f.distinct_due_times;
        f.last_ns = e.due_ns;
        ++f.tokens;
        if (!e.last) continue;
        done.push_back(f);
        live.erase({t, e.request_id});
        if (!clients.empty() && sent[t] < clients[t] * per_target_total) next_of(t, e.due_ns);
      }
    }
  }
  ADD_FAILURE() << "the load never finished";
  return done;
}

}  // namespace servebench::sim::deploy

// The replay loop and the tools' metric definitions (replay.h).
#include "replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

namespace servebench::calibration {

std::vector<FrontendRun> replay(sim::deploy::DeploymentModel& model,
                                const std::vector<Load>& loads) {
  if (loads.size() > model.frontend_count()) {
    throw std::runtime_error("more loads than the deployment has frontends");
  }
  struct Pending {
    size_t frontend;
  };
  std::multimap<int64_t, Pending> pending;  // sends by time
  std::vector<int64_t> sent(loads.size(), 0);
  for (size_t f = 0; f < loads.size(); ++f) {
    const Load& load = loads[f];
    if (load.concurrency > 0) {
      for (int32_t c = 0; c < load.concurrency && sent[f] < load.prompts; ++c, ++sent[f]) {
        pending.emplace(0, Pending{f});
      }
    } else {
      for (int64_t t : load.arrivals_ns) pending.emplace(t, Pending{f});
      sent[f] = static_cast<int64_t>(load.arrivals_ns.size());
    }
  }
  int64_t window_ns = 0;  // the latest window: the run stops there
  bool every_window = true;
  for (const Load& l : loads) {
    window_ns = std::max(window_ns, l.window_ns);
    every_window = every_window && l.window_ns > 0;
  }
  if (!every_window) window_ns = 0;

  std::vector<FrontendRun> runs(loads.size());
  std::vector<std::map<uint64_t, RequestResult>> live(loads.size());
  uint64_t next_id = 1;
  std::mt19937_64 lengths(17);
  std::vector<sim::TokenEvent> out;
  for (;;) {
    std::optional<int64_t> due;
    for (size_t f = 0; f < loads.size(); ++f) {
      auto d = model.frontend(f).next_due_ns();
      if (d && (!due || *d < *due)) due = d;
    }
    const bool send_first = !pending.empty() && (!due || pending.begin()->first <= *due);
    const int64_t now = send_first ? pending.begin()->first : (due ? *due : -1);
    if (now < 0 || (window_ns > 0 && now > window_ns)) break;
    if (send_first) {
      auto [at, p] = *pending.begin();
      pending.erase(pending.begin());
      const Load& load = loads[p.frontend];
      const uint64_t id = next_id++;
      RequestResult r;
      r.send_ns = at;
      live[p.frontend].emplace(id, r);
      int32_t output = load.output_tokens;
      if (load.output_min > 0) {
        output = std::uniform_int_distribution<int32_t>(load.output_min, output)(lengths);
      } else if (load.output_max > 0) {
        const double draw = std::exponential_distribution<double>(1.0 / output)(lengths);
        output = std::clamp(static_cast<int32_t>(std::lround(draw)), 1, load.output_max);
      }
      model.frontend(p.frontend).add(id, {load.input_tokens, output}, at);
      continue;
    }
    for (size_t f = 0; f < loads.size(); ++f) {
      out.clear();
      model.frontend(f).pop_due(now, out);
      for (const sim::TokenEvent& e : out) {
        RequestResult& r = live[f].at(e.request_id);
        if (e.token_index == 0) {
          r.first_ns = e.due_ns;
        } else if (e.due_ns != r.last_ns) {
          r.chunk_gaps_ns.push_back(e.due_ns - r.last_ns);
        }
        r.last_ns = e.due_ns;
        ++r.tokens;
        if (!e.last) continue;
        runs[f].completed.push_back(std::move(r));
        runs[f].end_ns = std::max(runs[f].end_ns, e.due_ns);
        live[f].erase(e.request_id);
        const Load& load = loads[f];
        if (load.concurrency > 0 && sent[f] < load.prompts) {
          ++sent[f];
          pending.emplace(e.due_ns, Pending{f});
        }
      }
    }
  }
  for (size_t f = 0; f < loads.size(); ++f) {
    runs[f].incomplete = static_cast<int64_t>(live[f].size());
    if (loads[f].window_ns > 0) runs[f].end_ns = loads[f].window_ns;
  }
  return runs;
}

namespace {

metrics::Distribution guidellm_stat(std::vector<double> values) {
  return metrics::summarize(std::move(values), {99});
}

}  // namespace

// vLLM's figures through servebench's own metrics part (the same code a real run reports with),
// from records shaped as the client would have written them; GuideLLM's variants beside them.
Metrics compute_metrics(const FrontendRun& run, int32_t input_tokens) {
  std::vector<record::RequestRecord> records;
  std::vector<double> g_itl, g_tpot;
  double e2e_s = 0;
  for (const RequestResult& r : run.completed) {
    record::RequestRecord rec;
    rec.index = records.size();
    rec.intended_ns = rec.sent_ns = r.send_ns;
    rec.first_byte_ns = rec.first_token_ns = r.first_ns;
    rec.last_token_ns = rec.done_ns = r.last_ns;
    rec.chunk_ns.push_back(r.first_ns);
    for (int64_t gap : r.chunk_gaps_ns) rec.chunk_ns.push_back(rec.chunk_ns.back() + gap);
    rec.prompt_tokens = rec.server_prompt_tokens = input_tokens;
    rec.expected_output_tokens = rec.server_completion_tokens = r.tokens;
    rec.http_status = 200;
    rec.success = true;
    records.push_back(std::move(rec));
    const double ttft = static_cast<double>(r.first_ns - r.send_ns) / 1e6;
    const double e2e = static_cast<double>(r.last_ns - r.send_ns) / 1e6;
    e2e_s += e2e / 1e3;
    if (r.tokens > 1) g_itl.push_back((e2e - ttft) / (r.tokens - 1));
    g_tpot.push_back((e2e - ttft) / r.tokens);
  }
  Metrics m;
  m.incomplete = run.incomplete;
  const double duration_s = static_cast<double>(run.end_ns) / 1e9;
  m.vllm = metrics::compute(records, duration_s, metrics::Options{}).vllm;
  m.mean_concurrency = duration_s > 0 ? e2e_s / duration_s : 0;
  m.guidellm_itl_ms = guidellm_stat(std::move(g_itl));
  m.guidellm_tpot_ms = guidellm_stat(std::move(g_tpot));
  return m;
}

}  // namespace servebench::calibration

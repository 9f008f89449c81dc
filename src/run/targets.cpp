// Several targets in one run (targets.h). Each target's run is the ordinary sweep (run_sweep)
// on its own spec, in its own thread; a Coordinator orders what they print and
// starts them together: targets set up one after another (model, prompts, ready check, warmups:
// their console lines stay in order), each then waits at the client's t0 gate, and when the last
// is ready all take the same t0. One combined progress bar runs while they send; when every
// run has ended, the targets print their vLLM blocks in order, then the combined block follows.
#include "run/targets.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "run/coordination.h"
#include "run/kind_runs.h"
#include "run/names.h"
#include "run/progress.h"
#include "run/sweep.h"

namespace servebench::run {
namespace {

// "name-target2.json" from "name.json": a file named on the command line, one per target.
std::string with_target_suffix(const std::string& path, size_t index) {
  if (path.empty()) return path;
  const std::filesystem::path p(path);
  std::string stem = p.stem().string(), ext = p.extension().string();
  if (ext == ".jsonl" && stem.ends_with(".records")) {  // keep "x.records.jsonl" together
    stem.resize(stem.size() - 8);
    ext = ".records.jsonl";
  }
  const std::string name = stem + "-target" + std::to_string(index + 1) + ext;
  return (p.parent_path() / name).string();
}

// Every seed the flags copied from --seed into the dataset and simulator options.
void reseed(Spec& c, uint64_t seed) {
  c.seed = seed;
  dataset::DatasetOptions& d = c.dataset;
  d.random.seed = seed;
  d.sharegpt.file.seed = seed;
  d.custom.file.seed = seed;
  d.sonnet.seed = seed;
  d.prefix_repetition.seed = seed;
  d.shared_prefix.seed = seed;
  d.trace.seed = seed;
  c.sim.seed = seed;
}

// Thrown in a target's thread when another target failed before the start.
struct Abandoned {};

class Coordinator {
 public:
  Coordinator(size_t count, bool show_bar)
      : count_(count),
        show_bar_(show_bar),
        arrived_(count, false),
        ended_(count, false),
        printed_(count, false),
        results_(count) {}

  void wait_setup_turn(size_t i) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return setup_turn_ == i || aborted_; });
    if (aborted_) throw Abandoned{};
  }

  int64_t start_gate(size_t i, size_t planned) {
    std::unique_lock lock(mutex_);
    // One benchmark per target: a second would get the first one's t0, long past.
    if (arrived_[i]) {
      throw core::Error(core::ErrorKind::kInternal, "several targets",
                        "a target started a second benchmark");
    }
    planned_ += planned;
    arrive(i);
    changed_.wait(lock, [&] { return started_ || aborted_; });
    if (!started_) throw Abandoned{};
    return t0_;
  }

  void on_record() {
    std::lock_guard lock(mutex_);
    if (bar_) bar_->update();
  }

  void before_report(size_t i, const std::string& url) {
    std::unique_lock lock(mutex_);
    arrive(i);  // a run that never reached the gate must not hold the others there
    end(i);
    changed_.wait(lock, [&] { return ended_count_ == count_ && next_to_print() == i; });
    std::printf("\nTarget %zu of %zu: %s\n", i + 1, count_, url_for_messages(url).c_str());
    std::fflush(stdout);
  }

  void after_report(size_t i, const nlohmann::json& result) {
    std::lock_guard lock(mutex_);
    results_[i] = result;
    printed_[i] = true;
    changed_.notify_all();
  }

  // Target i's run returned: whatever it did not report, it never will.
  void finish(size_t i) {
    std::lock_guard lock(mutex_);
    arrive(i);
    end(i);
    printed_[i] = true;
    changed_.notify_all();
  }

  // Target i's thread ended with an exception.
  void give_up(size_t i) {
    std::lock_guard lock(mutex_);
    if (!started_) {
      aborted_ = true;
    } else {
      end(i);
      printed_[i] = true;
    }
    changed_.notify_all();
  }

  bool started() {
    std::lock_guard lock(mutex_);
    return started_;
  }

  std::vector<nlohmann::json> results() const {
    std::vector<nlohmann::json> out;
    for (const auto& r : results_)
      if (r) out.push_back(*r);
    return out;
  }

 private:
  void arrive(size_t i) {
    if (arrived_[i]) return;
    arrived_[i] = true;
    setup_turn_ = i + 1;
    if (++arrived_count_ == count_) {
      t0_ = core::mono_ns();
      started_ = true;
      bar_ = std::make_unique<ProgressBar>(planned_, show_bar_);
    }
    changed_.notify_all();
  }
  void end(size_t i) {
    if (ended_[i]) return;
    ended_[i] = true;
    if (++ended_count_ == count_ && bar_) bar_->close();
    changed_.notify_all();
  }
  size_t next_to_print() const {
    size_t i = 0;
    while (i < count_ && printed_[i]) ++i;
    return i;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const size_t count_;
  const bool show_bar_;
  size_t setup_turn_ = 0, arrived_count_ = 0, ended_count_ = 0, planned_ = 0;
  bool started_ = false, aborted_ = false;
  int64_t t0_ = 0;
  std::vector<bool> arrived_, ended_, printed_;
  std::unique_ptr<ProgressBar> bar_;
  std::vector<std::optional<nlohmann::json>> results_;
};

// Embedded simulators, a deployment's frontends, or the --base-url list.
size_t target_count(const Spec& c) {
  if (c.deployment) return c.deployment->frontend_urls.size();
  return c.embedded ? static_cast<size_t>(c.sim_instances) : c.target_urls.size();
}

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

bool runs_several_targets(const Spec& c) {
  if (c.coordination) return false;
  return target_count(c) > 1;
}

Spec target_config(const Spec& c, size_t index) {
  Spec t = c;
  t.target_urls.clear();
  t.target_models.clear();
  t.sim_instances = 1;
  if (c.deployment) {
    t.base_url = c.deployment->frontend_urls.at(index);
  } else if (!c.embedded) {
    t.base_url = c.target_urls.at(index);
  }
  if (!c.target_models.empty()) t.model = c.target_models.at(index);
  reseed(t, c.seed + index);
  t.label = (c.label.empty() ? c.backend : c.label) + "-target" + std::to_string(index + 1);
  if (index > 0) t.warn_no_temperature = false;  // the first target says it for the run
  t.result_filename = with_target_suffix(c.result_filename, index);
  // A suite's test name (--metadata test_name=…) names each target's row apart, as its file.
  for (auto& [key, value] : t.metadata) {
    if (key == "test_name") value += "-target" + std::to_string(index + 1);
  }
  t.records_path = with_target_suffix(c.records_path, index);
  t.sim.trace_out = with_target_suffix(c.sim.trace_out, index);
  t.disable_tqdm = true;  // one combined bar instead (Coordinator)
  return t;
}

CombinedFigures combine_results(const std::vector<nlohmann::json>& results) {
  CombinedFigures f;
  f.targets = results.size();
  for (const nlohmann::json& r : results) {
    f.completed += static_cast<int64_t>(number(r, "completed"));
    f.failed += static_cast<int64_t>(number(r, "failed"));
    f.input_tokens += static_cast<int64_t>(number(r, "total_input_tokens"));
    f.output_tokens += static_cast<int64_t>(number(r, "total_output_tokens"));
    f.wall_s = std::max(f.wall_s, number(r, "duration"));
  }
  if (f.wall_s > 0) {
    f.request_throughput = static_cast<double>(f.completed) / f.wall_s;
    f.output_throughput = static_cast<double>(f.output_tokens) / f.wall_s;
    f.total_token_throughput = static_cast<double>(f.input_tokens + f.output_tokens) / f.wall_s;
  }
  return f;
}

std::string combined_console_block(const CombinedFigures& f,
                                   const std::vector<nlohmann::json>& results) {
  std::string out = fmt::format(
      "{:=^50}\n", " Combined Result (" + std::to_string(f.targets) + " targets, one t0) ");
  auto line = [&](const char* label, const std::string& value) {
    out += fmt::format("{:<40} {:<10}\n", label, value);
  };
  line("Targets:", std::to_string(f.targets));
  line("Successful requests:", std::to_string(f.completed));
  line("Failed requests:", std::to_string(f.failed));
  line("Wall time, t0 to last completion (s):", fmt::format("{:.2f}", f.wall_s));
  line("Total input tokens:", std::to_string(f.input_tokens));
  line("Total generated tokens:", std::to_string(f.output_tokens));
  line("Request throughput (req/s):", fmt::format("{:.2f}", f.request_throughput));
  line("Output token throughput (tok/s):", fmt::format("{:.2f}", f.output_throughput));
  line("Total Token throughput (tok/s):", fmt::format("{:.2f}", f.total_token_throughput));
  out += std::string(50, '=') + "\n";

  // Per target, side by side (each duration runs from the common t0).
  std::vector<std::vector<std::string>> rows = {{"target", "url", "completed", "failed",
                                                 "duration (s)", "req/s", "output tok/s",
                                                 "mean TTFT (ms)", "mean TPOT (ms)"}};
  for (const nlohmann::json& r : results) {
    const nlohmann::json target = r.contains("servebench")
                                      ? r["servebench"].value("target", nlohmann::json::object())
                                      : nlohmann::json::object();
    rows.push_back({target.value("name", std::string("?")), target.value("url", std::string("?")),
                    fmt::format("{}", static_cast<int64_t>(number(r, "completed"))),
                    fmt::format("{}", static_cast<int64_t>(number(r, "failed"))),
                    fmt::format("{:.2f}", number(r, "duration")),
                    fmt::format("{:.2f}", number(r, "request_throughput")),
                    fmt::format("{:.2f}", number(r, "output_throughput")),
                    fmt::format("{:.2f}", number(r, "mean_ttft_ms")),
                    fmt::format("{:.2f}", number(r, "mean_tpot_ms"))});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string text = "|";
    for (size_t k = 0; k < rows[i].size(); ++k)
      text += fmt::format(" {:<{}} |", rows[i][k], width[k]);
    out += text + "\n";
    if (i == 0) {
      text = "|";
      for (size_t k = 0; k < width.size(); ++k) text += std::string(width[k] + 2, '-') + "|";
      out += text + "\n";
    }
  }
  return out;
}

int run_targets(const Spec& c) {
  const size_t count = target_count(c);
  if (c.live)
    std::fprintf(stderr,
                 "servebench: --live draws one target's block; with %zu targets the combined "
                 "progress bar is shown instead\n",
                 count);
  Coordinator coordinator(count, !c.disable_tqdm);
  std::vector<int> exit_codes(count, 0);
  std::vector<std::exception_ptr> failures(count);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < count; ++i) {
    Spec t = target_config(c, i);
    auto hooks = std::make_shared<TargetCoordination>();
    hooks->index = i;
    hooks->count = count;
    hooks->url = c.deployment ? "frontend " + t.base_url
                 : c.embedded ? std::string("embedded simulator")
                              : url_for_messages(t.base_url);
    hooks->start_gate = [&coordinator, i](size_t planned) {
      return coordinator.start_gate(i, planned);
    };
    hooks->on_record = [&coordinator] { coordinator.on_record(); };
    hooks->before_report = [&coordinator, i](const std::string& url) {
      coordinator.before_report(i, url);
    };
    hooks->after_report = [&coordinator, i](const nlohmann::json& result) {
      coordinator.after_report(i, result);
    };
    t.coordination = hooks;
    threads.emplace_back([&, i, t = std::move(t)]() mutable {
      try {
        coordinator.wait_setup_turn(i);
        std::printf("\n==> Target %zu of %zu: %s (seed %llu)\n", i + 1, count,
                    t.coordination->url.c_str(), static_cast<unsigned long long>(t.seed));
        std::fflush(stdout);
        exit_codes[i] = run_sweep(std::move(t));
        coordinator.finish(i);
      } catch (const Abandoned&) {
        coordinator.give_up(i);
      } catch (...) {
        failures[i] = std::current_exception();
        coordinator.give_up(i);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  const std::vector<nlohmann::json> results = coordinator.results();
  if (!results.empty()) {
    std::printf("\n");
    const CombinedFigures combined = combine_results(results);
    std::fputs(combined_console_block(combined, results).c_str(), stdout);
    std::fflush(stdout);
    if (c.save_result) {
      // Not a run: `servebench report` skips *.combined.json when it reads a directory.
      // Beside the targets' files: "name.combined.json" for --result-filename name.json.
      const std::string name =
          c.result_filename.empty()
              ? (c.label.empty() ? c.backend : c.label) + "-" + core::wall_timestamp_compact() +
                    ".combined.json"
              : std::filesystem::path(c.result_filename).stem().string() + ".combined.json";
      const std::string path =
          c.result_dir.empty() ? name : (std::filesystem::path(c.result_dir) / name).string();
      write_json(path, combined_json(combined, results), "--result-dir");
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (!failures[i]) continue;
    if (!coordinator.started()) {
      std::fprintf(stderr,
                   "servebench: target %zu of %zu failed before the common start; no target sent "
                   "a request\n",
                   i + 1, count);
    }
    std::rethrow_exception(failures[i]);
  }
  return *std::max_element(exit_codes.begin(), exit_codes.end());
}

}  // namespace servebench::run

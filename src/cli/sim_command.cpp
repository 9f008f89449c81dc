// `servebench sim`: the simulated OpenAI-compatible server, in the foreground until SIGINT or
// SIGTERM (exit 130 or 143).
// Flags are read as text and converted here so that every bad value gives one line naming the
// flag and exit code 2 (core::Error kUsage). docs/simulator.md describes them.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::cli {
namespace {

struct SimFlags {
  std::string host = "127.0.0.1";
  std::string port = "8000";
  std::string served_model_name = "servebench-sim";
  std::string mode;  // "" = fixed unless --engine-profile
  std::string ttft_ms = "50", itl_ms = "10", ttft_jitter_ms = "0", itl_jitter_ms = "0";
  std::string engine_profile;
  std::string output_len_dist = "uniform:1:256";
  std::string max_model_len = "131072";
  std::string seed = "0";
  std::string threads = "1";
  std::vector<std::string> faults;
  std::string trace_out;
  std::string tokenizer;
  std::string deployment;
  bool port_given = false;
};

[[noreturn]] void bad(const std::string& flag, const std::string& value, const std::string& why) {
  throw core::Error(core::ErrorKind::kUsage, flag, "'" + value + "' " + why);
}

double to_ms(const std::string& flag, const std::string& v) {
  double x = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(x) ||
      x < 0 || x > 3'600'000) {
    bad(flag, v, "is not a number of milliseconds in [0, 3600000]");
  }
  return x;
}

template <typename Int>
Int to_int(const std::string& flag, const std::string& v, Int lo, Int hi) {
  Int x = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || x < lo || x > hi) {
    bad(flag, v, "is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

sim::Options to_options(const SimFlags& f) {
  sim::Options o;
  o.host = f.host;
  o.port = to_int<uint16_t>("--port", f.port, 0, 65535);
  if (f.served_model_name.empty()) bad("--served-model-name", "", "must not be empty");
  o.served_model_name = f.served_model_name;
  o.fixed.ttft = {to_ms("--ttft-ms", f.ttft_ms), to_ms("--ttft-jitter-ms", f.ttft_jitter_ms)};
  o.fixed.itl = {to_ms("--itl-ms", f.itl_ms), to_ms("--itl-jitter-ms", f.itl_jitter_ms)};
  if (f.mode == "engine" || (f.mode.empty() && !f.engine_profile.empty())) {
    o.mode = sim::Options::Mode::kEngine;
  } else if (f.mode == "fixed" || f.mode.empty()) {
    o.mode = sim::Options::Mode::kFixed;
    if (!f.engine_profile.empty()) {
      bad("--engine-profile", f.engine_profile, "needs --mode engine (it was --mode fixed)");
    }
  } else {
    bad("--mode", f.mode, "is not one of: fixed, engine");
  }
  if (!f.engine_profile.empty()) o.engine = sim::load_engine_profile(f.engine_profile);
  o.output_length = sim::parse_output_length(f.output_len_dist);
  o.max_model_len = to_int<int32_t>("--max-model-len", f.max_model_len, 2, 1 << 30);
  o.seed = to_int<uint64_t>("--seed", f.seed, 0, UINT64_MAX);
  o.threads = to_int<int>("--threads", f.threads, 1, 256);
  for (const std::string& spec : f.faults) o.faults.push_back(sim::parse_fault_rule(spec));
  o.trace_out = f.trace_out;
  // Prompt tokens are counted and output produced with this tokenizer, so that usage agrees with
  // a client counting with the same one.
  if (!f.tokenizer.empty()) o.tokenizer = tokenizer::load_tokenizer(f.tokenizer);
  return o;
}

std::string describe_timing(const sim::Options& o) {
  char buf[160];
  if (o.mode == sim::Options::Mode::kEngine) {
    std::snprintf(buf, sizeof buf, "engine profile %s", o.engine.name.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "fixed ttft %g ms, itl %g ms", o.fixed.ttft.mean_ms,
                  o.fixed.itl.mean_ms);
  }
  return buf;
}

int serve_deployment(const SimFlags& f) {
  if (!f.mode.empty() || !f.engine_profile.empty()) {
    bad(f.mode.empty() ? "--engine-profile" : "--mode", f.mode.empty() ? f.engine_profile : f.mode,
        "does not go with --deployment");
  }
  sim::Options o = to_options(f);
  std::optional<uint16_t> first_port;
  if (f.port_given) first_port = o.port;
  sim::DeploymentServer server(o, f.deployment, first_port);
  server.start();
  std::printf("servebench sim: deployment %s (%s), tokenizer %s\n",
              server.deployment_name().c_str(), f.deployment.c_str(),
              o.tokenizer ? o.tokenizer->name().c_str() : "builtin-word");
  const std::vector<std::string> urls = server.urls();
  for (size_t i = 0; i < urls.size(); ++i) {
    std::printf("  frontend %s: serving %s on %s (DCGM: %s/dcgm/metrics)\n",
                server.frontend_name(i).c_str(), o.served_model_name.c_str(), urls[i].c_str(),
                urls[i].c_str());
  }
  std::fflush(stdout);
  server.wait();
  return core::interrupt_exit_code();  // 130 after SIGINT, 143 after SIGTERM
}

}  // namespace

Action add_sim_command(CLI::App& app) {
  auto flags = std::make_shared<SimFlags>();
  SimFlags& f = *flags;
  CLI::App* sub =
      app.add_subcommand("sim", "Run the simulated OpenAI-compatible server (vLLM-shaped)");
  sub->add_option("--host", f.host, "Address to bind")->capture_default_str();
  CLI::Option* port =
      sub->add_option("--port", f.port,
                      "Port to bind (0 = any free port); with --deployment the first "
                      "frontend's (then +1, +2, …; default: the file's, else 8000, 8001, …)")
          ->capture_default_str();
  sub->add_option("--served-model-name", f.served_model_name, "Model name requests must use")
      ->capture_default_str();
  sub->add_option("--mode", f.mode, "Timing model: fixed or engine (default fixed)");
  sub->add_option("--ttft-ms", f.ttft_ms, "Fixed mode: time to first token")->capture_default_str();
  sub->add_option("--itl-ms", f.itl_ms, "Fixed mode: inter-token latency")->capture_default_str();
  sub->add_option("--ttft-jitter-ms", f.ttft_jitter_ms, "Fixed mode: TTFT standard deviation")
      ->capture_default_str();
  sub->add_option("--itl-jitter-ms", f.itl_jitter_ms, "Fixed mode: ITL standard deviation")
      ->capture_default_str();
  sub->add_option("--engine-profile", f.engine_profile,
                  "Engine mode: YAML profile (implies --mode engine)");
  sub->add_option("--output-len-dist", f.output_len_dist,
                  "Answer length without ignore_eos: max | uniform:MIN:MAX | "
                  "normal:MEAN:STDDEV | exponential:MEAN (capped by max_tokens)")
      ->capture_default_str();
  sub->add_option("--max-model-len", f.max_model_len, "Context length (prompt + output)")
      ->capture_default_str();
  sub->add_option("--seed", f.seed, "Seed of every random draw")->capture_default_str();
  sub->add_option("--threads", f.threads, "I/O threads")->capture_default_str();
  sub->add_option("--fault", f.faults,
                  "KIND[:PROB[:AFTER_TOKENS[:STALL_S]]], repeatable; KIND: 429 500 503 reset "
                  "stall malformed truncate error-event");
  sub->add_option("--trace-out", f.trace_out, "Write per-request server-side times (JSONL)");
  sub->add_option("--tokenizer", f.tokenizer,
                  "Tokenizer: tokenizer.json / .model file, model directory, Hugging Face model id "
                  "in the local cache, or builtin (default: builtin, the word rule)");

  sub->add_option("--deployment", f.deployment,
                  "Serve every frontend of a deployment file (docs/deployments.md), each at its "
                  "own port; replaces --mode, --engine-profile and the fixed timings");

  return [flags, port]() -> int {
    flags->port_given = port->count() > 0;
    if (!flags->deployment.empty()) return serve_deployment(*flags);
    sim::Options o = to_options(*flags);
    sim::Server server(o);
    server.start();
    std::printf("servebench sim: serving %s on http://%s:%u (%s, tokenizer %s)\n",
                o.served_model_name.c_str(), o.host.c_str(), static_cast<unsigned>(server.port()),
                describe_timing(o).c_str(),
                o.tokenizer ? o.tokenizer->name().c_str() : "builtin-word");
    std::fflush(stdout);
    server.wait();
    return core::interrupt_exit_code();  // 130 after SIGINT, 143 after SIGTERM
  };
}

}  // namespace servebench::cli

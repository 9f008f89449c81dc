// The entry point (run.h): the planning layers in order, each calling only those below it:
// an SLO search (search.h) or several targets (targets.h) run sweeps; a sweep (sweep.h) runs
// points (point.h); a point's result comes from result_json.h. A simulated deployment
// (--sim-deployment) is started here, once, for every target and point.
#include <cstdio>
#include <memory>

#include "core/error.h"
#include "run/output_files.h"
#include "run/point_setup.h"
#include "run/run.h"
#include "run/search.h"
#include "run/shard.h"
#include "run/sweep.h"
#include "run/targets.h"

namespace servebench::run {
namespace {

[[noreturn]] void refuse(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

// Starts the deployment of --sim-deployment with the embedded simulator's options (every
// frontend serves the run's model name and counts with the run's tokenizer); one target per
// frontend. Throws core::Error(kInput) naming file:line and key for a deployment that cannot run.
std::unique_ptr<sim::DeploymentServer> start_deployment(Spec& c) {
  sim::Options options = c.sim;
  options.tokenizer = tokenizer_for(c.tokenizer, c.model).tok;
  const std::string model = c.model.empty() ? "servebench-sim" : c.model;
  options.served_model_name = c.served_model_name.empty() ? model : c.served_model_name;
  auto server = std::make_unique<sim::DeploymentServer>(options, c.sim_deployment, 0);
  server->start();
  auto deployment = std::make_shared<Spec::Deployment>();
  deployment->name = server->deployment_name();
  deployment->file = server->path();
  deployment->content = server->file_text();
  deployment->frontend_urls = server->urls();
  c.deployment = deployment;
  c.base_url = deployment->frontend_urls.front();
  std::fprintf(stderr,
               "servebench: started the deployment '%s' (%s) embedded: %zu frontend(s), model "
               "'%s'\n",
               deployment->name.c_str(), deployment->file.c_str(), deployment->frontend_urls.size(),
               options.served_model_name.c_str());
  for (size_t i = 0; i < deployment->frontend_urls.size(); ++i) {
    std::fprintf(stderr, "servebench:   frontend %s at %s\n", server->frontend_name(i).c_str(),
                 deployment->frontend_urls[i].c_str());
  }
  if (deployment->frontend_urls.size() > 1) {
    // What the command line refuses for several targets, known only now.
    const char* const kSeveral = "with a deployment of several frontends (one target each)";
    if (c.search) refuse("--search-slo", std::string("searches one target, not ") + kSeveral);
    if (c.request_rates.size() > 1)
      refuse("--request-rate", std::string("give one value ") + kSeveral);
    if (c.max_concurrencies.size() > 1)
      refuse("--max-concurrency", std::string("give one value ") + kSeveral);
    if (c.limits.profile != LoadProfile::kNone)
      refuse("--profile", std::string("not supported ") + kSeveral);
    if (c.model.find(',') != std::string::npos)
      refuse("--model", std::string("give one model name ") + kSeveral);
  }
  return server;
}

}  // namespace

int execute(Spec spec) {
  // Before any set-up (tokenizer, dataset, simulator, output files): a refusal costs nothing
  // and leaves no file. A profile or a search chooses its concurrency per point: checked there.
  if (spec.limits.profile == LoadProfile::kNone && !spec.search) warn_if_too_few_files(spec);
  hold_named_outputs(spec);  // another live run's --records/--result-filename: refused now
  check_shardable(spec);     // --shard: the load shapes that cannot be split exactly
  std::unique_ptr<sim::DeploymentServer> deployment;  // serves until every target is done
  if (!spec.sim_deployment.empty()) deployment = start_deployment(spec);
  if (spec.search) return execute_search(std::move(spec));
  if (runs_several_targets(spec)) return run_targets(spec);
  return run_sweep(std::move(spec));
}

}  // namespace servebench::run

// The entry point (run.h): the planning layers in order, each calling only those below it:
// an SLO search (search.h) or several targets (targets.h) run sweeps; a sweep (sweep.h) runs
// points (point.h); a point's result comes from result_json.h.
#include "run/run.h"
#include "run/search.h"
#include "run/shard.h"
#include "run/sweep.h"
#include "run/targets.h"

namespace servebench::run {

int execute(Spec spec) {
  check_shardable(spec);  // --shard: the load shapes that cannot be split exactly
  if (spec.search) return execute_search(std::move(spec));
  if (runs_several_targets(spec)) return run_targets(spec);
  return run_sweep(std::move(spec));
}

}  // namespace servebench::run

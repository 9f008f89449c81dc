// File: sim/deploy/placement.h (internal)
// Puts workers' replicas on the nodes' GPUs and derives what follows from where they are:
// the links of TP all-reduces and PP hops, the KV cache size left by the weights, SM shares.
#pragma once

#include <functional>
#include <string>

#include "sim/deploy/deploy.h"

namespace servebench::sim::deploy {

// Reports a problem with worker `worker` (or, -1, the whole file) at `key`; never returns.
using PlacementFail =
    std::function<void(int worker, const std::string& key, const std::string& message)>;
// Shared-GPU problems: group index, key, message; never returns.
using SharingFail =
    std::function<void(size_t group, const std::string& key, const std::string& message)>;

// Fills each worker's hardware (GPU, links, hops, compute share) and KV blocks; checks that
// TP divides the heads, the weights fit, the GPUs suffice.
void place_workers(Deployment& d, const PlacementFail& fail, const SharingFail& fail_sharing);

}  // namespace servebench::sim::deploy

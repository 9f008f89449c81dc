#include "run/interrupt.h"

namespace servebench::run {

std::atomic<bool> g_stop{false};

}  // namespace servebench::run

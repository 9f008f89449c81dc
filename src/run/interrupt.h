// File: run/interrupt.h
// What stops a point's sending: a stop rule (g_stop; point.cpp clears it again so a sweep goes
// on) or SIGINT/SIGTERM (core/interrupt.h: main installs the one handler; the client's loop
// sees it by itself). A signal ends the command: in-flight requests get the drain time, the
// summary and the partial result are written, and the exit code is 130 or 143.
#pragma once

#include <atomic>

#include "core/interrupt.h"

namespace servebench::run {

// Set by a stop rule (load_rules.h): send no more in this point.
extern std::atomic<bool> g_stop;

// Whether the point in progress sends no more: a stop rule or a signal.
inline bool stopping() {
  return g_stop.load() || core::interrupted();
}

}  // namespace servebench::run

// The request to stop early (Ctrl-C): set from a signal handler, read by the tune and bench loops.
#pragma once

#include <atomic>

namespace ktune {

// Set from a signal handler: the tune stops after the config in flight, as "interrupted".
extern std::atomic<bool> g_stop_requested;

}  // namespace ktune

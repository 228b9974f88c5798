// The request to stop early (Ctrl-C, SIGTERM, SIGHUP), set from the signal handler in main.cpp.
// A command that stops by itself at the request (tune and bench finish the configs in flight
// and record the run as interrupted; db merge rolls back) calls handle_stop_requests() first;
// any other command ends at the first signal. Either way the exit code is 128 + the signal
// (130 for Ctrl-C, 143 for SIGTERM), and a second signal ends ktune at once.
#pragma once

#include <atomic>
#include <string>

#include "tuner/core/errors.hpp"

namespace ktune {

// Set from a signal handler: the tune stops after the config in flight, as "interrupted".
extern std::atomic<bool> g_stop_requested;
// The first stop signal's number; 0 before one came.
extern std::atomic<int> g_stop_signal;
// True once the running command has said it stops by itself (handle_stop_requests()).
extern std::atomic<bool> g_stop_handled;

inline void handle_stop_requests() { g_stop_handled.store(true); }
// 128 + the stop signal (130 when none is recorded: a stop requested by other means).
int stop_exit_code();

// Thrown by a command that stopped at the request before its work was done.
class Interrupted : public KtuneError {
 public:
  explicit Interrupted(const std::string& message) : KtuneError(static_cast<ExitCode>(stop_exit_code()), message) {}
};

}  // namespace ktune

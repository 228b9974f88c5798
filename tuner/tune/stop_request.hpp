// The request to stop early (Ctrl-C, SIGTERM, SIGHUP), set from the signal handler in main.cpp.
// A command that stops by itself at the request (tune and bench finish the configs in flight
// and record the run as interrupted; db merge rolls back) calls handle_stop_requests() first;
// any other command ends at the first signal. Either way the exit code is 128 + the signal
// (130 for Ctrl-C, 143 for SIGTERM), and a second signal ends ktune at once.
//
// A config in flight may take far longer than a second (a second of samples after a compile of
// seconds). So that every command stops within a second, the configs in flight get
// kStopGraceSeconds to finish; then their workers and compile processes are killed
// (abandon_workers()) and what they were doing is dropped, not recorded: a rerun measures it.
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

// Configs in flight after a stop request get this long to finish before they are dropped.
constexpr double kStopGraceSeconds = 0.5;

// Says the running command stops by itself, and starts the watchdog that abandons its workers
// kStopGraceSeconds after the first stop signal.
void handle_stop_requests();
// Wakes that watchdog; called by the signal handler (async-signal-safe).
void notify_stop_watchdog();
// 128 + the stop signal (130 when none is recorded: a stop requested by other means).
int stop_exit_code();

// Thrown by a command that stopped at the request before its work was done.
class Interrupted : public KtuneError {
 public:
  explicit Interrupted(const std::string& message) : KtuneError(static_cast<ExitCode>(stop_exit_code()), message) {}
};

}  // namespace ktune

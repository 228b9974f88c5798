#include "tuner/tune/stop_request.hpp"

#include <semaphore.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>

#include "tuner/worker/worker_client.hpp"

namespace ktune {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_stop_handled{false};

namespace {

// Posted by the signal handler (sem_post is async-signal-safe); the watchdog waits on it.
sem_t g_stop_signalled;
std::atomic<bool> g_watchdog_started{false};
std::atomic<bool> g_watchdog_ready{false};  // the semaphore exists and the watchdog waits on it

}  // namespace

void handle_stop_requests() {
  if (!g_watchdog_started.exchange(true)) {
    sem_init(&g_stop_signalled, 0, 0);
    // Detached: it lives as long as the process, which it never holds up (it only waits).
    std::thread([] {
      while (sem_wait(&g_stop_signalled) != 0 && errno == EINTR) {
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(kStopGraceSeconds));
      abandon_workers();
    }).detach();
    g_watchdog_ready.store(true);
  }
  // Last: until now a signal ends the command at once, so none can come before the watchdog is
  // there to hear it.
  g_stop_handled.store(true);
}

void notify_stop_watchdog() {
  if (g_watchdog_ready.load()) sem_post(&g_stop_signalled);
}

int stop_exit_code() {
  const int signal = g_stop_signal.load();
  return 128 + (signal > 0 ? signal : SIGINT);
}

}  // namespace ktune

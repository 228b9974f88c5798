#include "tuner/tune/stop_request.hpp"

#include <csignal>

namespace ktune {

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_stop_handled{false};

int stop_exit_code() {
  const int signal = g_stop_signal.load();
  return 128 + (signal > 0 ? signal : SIGINT);
}

}  // namespace ktune

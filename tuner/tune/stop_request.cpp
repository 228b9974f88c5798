#include "tuner/tune/stop_request.hpp"

namespace ktune {

std::atomic<bool> g_stop_requested{false};

}  // namespace ktune

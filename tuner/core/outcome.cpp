#include "tuner/core/outcome.hpp"

namespace ktune {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok: return "ok";
    case Outcome::wrong_result: return "wrong_result";
    case Outcome::compile_error: return "compile_error";
    case Outcome::launch_error: return "launch_error";
    case Outcome::timeout: return "timeout";
    case Outcome::crashed: return "crashed";
    case Outcome::unsupported: return "unsupported";
    case Outcome::out_of_memory: return "out_of_memory";
    case Outcome::noisy: return "noisy";
  }
  return "unknown";
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  for (Outcome outcome : kAllOutcomes)
    if (to_string(outcome) == text) return outcome;
  return std::nullopt;
}

}  // namespace ktune

// The outcome of evaluating one config. Every evaluated config is stored with its outcome and a
// message; nothing is dropped silently.
#pragma once

#include <optional>
#include <string_view>

namespace ktune {

enum class Outcome {
  ok,             // ran, verified, timed
  wrong_result,   // ran but the output differs from the reference beyond tolerance (or NaN)
  compile_error,  // the variant did not compile
  launch_error,   // the launch was refused (resources, invalid configuration)
  timeout,        // the worker did not answer within the deadline and was killed
  crashed,        // the worker process died (signal, sticky device error)
  unsupported,    // the backend cannot run this config/problem (skipped with a reason)
  out_of_memory,  // memory the variant needs (its workspace, scratch) could not be allocated
  noisy,          // ran and verified, but its samples never settled under an explicit --max-noise:
                  // its median is not trusted, so it is not ranked
};

inline constexpr Outcome kAllOutcomes[] = {Outcome::ok,           Outcome::wrong_result,
                                           Outcome::compile_error, Outcome::launch_error,
                                           Outcome::timeout,      Outcome::crashed,
                                           Outcome::unsupported,  Outcome::out_of_memory,
                                           Outcome::noisy};

std::string_view to_string(Outcome outcome);
std::optional<Outcome> parse_outcome(std::string_view text);

}  // namespace ktune

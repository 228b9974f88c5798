// Typed errors that map onto ktune's exit-code contract:
//   0 success, 1 a check failed, 2 bad input or usage, 3 requested backend/device absent.
// Code throws one of these; only the CLI's top level turns them into an exit code, so a failed
// tune can never look like an empty one.
#pragma once

#include <stdexcept>
#include <string>

namespace ktune {

enum class ExitCode : int { ok = 0, check_failed = 1, bad_input = 2, backend_absent = 3 };

class KtuneError : public std::runtime_error {
 public:
  KtuneError(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad input: the message names the file, line or value, and lists valid names for unknown ones.
class InputError : public KtuneError {
 public:
  explicit InputError(const std::string& message) : KtuneError(ExitCode::bad_input, message) {}
};

// The requested backend or device is not present; the message says what is missing.
class BackendUnavailable : public KtuneError {
 public:
  explicit BackendUnavailable(const std::string& message)
      : KtuneError(ExitCode::backend_absent, message) {}
};

// A check failed (wrong result, regression).
class CheckFailed : public KtuneError {
 public:
  explicit CheckFailed(const std::string& message) : KtuneError(ExitCode::check_failed, message) {}
};

// Joins names for "valid ones are: a, b, c" messages.
template <typename Range>
std::string join_names(const Range& names, const std::string& separator = ", ") {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

}  // namespace ktune

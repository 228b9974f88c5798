// Expectations on InputError messages shared by the readers' unit tests.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "tuner/core/errors.hpp"

namespace ktune {

// The message of the InputError `action` throws; a test failure when it throws anything else or
// nothing.
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-InputError: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no InputError was thrown";
  return "";
}

}  // namespace ktune

#define EXPECT_MENTIONS(message, fragment) \
  EXPECT_NE(std::string(message).find(fragment), std::string::npos) << "message: " << (message)

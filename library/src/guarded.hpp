// The one place where what ktune's code throws becomes ktune::kernels::Error: every public entry
// point of the library runs its body through guarded(), so no other exception leaves it.
#pragma once

#include <new>
#include <stdexcept>

#include "ktune/kernels.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::library {

// InputError (a bad argument ktune's own checks found) is bad_argument, BackendUnavailable
// no_device, out of memory and driver failures backend_failure.
template <class Body>
auto guarded(Body&& body) -> decltype(body()) {
  using kernels::Error;
  using kernels::ErrorCode;
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const BackendUnavailable& e) {
    throw Error(ErrorCode::no_device, e.what());
  } catch (const InputError& e) {
    throw Error(ErrorCode::bad_argument, e.what());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::backend_failure, "out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::backend_failure, e.what());
  }
}

}  // namespace ktune::library

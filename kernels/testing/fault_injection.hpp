// A test-only family whose CPU variants misbehave on purpose, to prove that ktune records every
// kind of failure and keeps tuning. Enabled with KTUNE_ENABLE_TEST_FAMILIES=1.
// out[i] = x[i] * work, computed `work` times; the `behaviour` parameter selects the fault:
//   ok, crash (SIGSEGV), abort (SIGABRT), hang (never returns), wrong (off by one), nan,
//   unsupported (declines), oom (its scratch cannot be allocated).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& fault_injection_family();

}  // namespace ktune

// Copy: out[i] = x[i] for n elements. Not an operation anyone tunes for its own sake: it is the
// measured ceiling of the memory-bound families. `ktune bench` times it at the same bytes moved
// as each memory-bound problem, so "% of copy" says how close a kernel is to the speed of
// light of this device's memory.
// Tensors: x [n] (input), out [n] (output).
#pragma once

#include "kernels/family.hpp"

namespace ktune {

const KernelFamily& copy_family();
const CpuKernel& copy_cpu_kernel();

}  // namespace ktune

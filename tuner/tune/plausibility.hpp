// A measured time the device could not have delivered: shorter than its memory needs to move the
// family's bytes (each input read once, each output written once, at the peak bandwidth). Such a
// result is a bug until explained (a kernel doing less work than its arguments imply, or a broken
// timer): the tune flags it in the result's environment ("implausible") and on its progress line.
#pragma once

#include <string>

#include "tuner/core/device.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

// Why `result` (ok, measured with the L2 flushed between samples: otherwise a warm cache may
// legitimately beat memory) is faster than `bytes` at the device's peak_memory_bandwidth allows;
// empty when it is not, or when the bound is unknown.
std::string implausibility(const EvaluationResult& result, double bytes, const DeviceInfo& device);

}  // namespace ktune

// How busy this machine is: a tune or bench on a loaded machine times other people's work too,
// so each says so before it starts (nvbench and Google Benchmark warn the same way).
#pragma once

#include <optional>
#include <string>

namespace ktune {

// The load average over the last minute, when the system reports one. KTUNE_LOAD_AVERAGE (a
// number) stands in for it, so that the warning can be tested on an idle machine.
std::optional<double> one_minute_load();

// "" on a machine with a hardware thread free per runnable task; otherwise a sentence saying
// how loaded it is and what that does to timings.
std::string machine_load_warning();

}  // namespace ktune

// Which process owns a run that is still `running`: its pid and the time it started, so that a
// run whose process died (kill -9, a second Ctrl-C, a crash, a power cut) can be told from one
// that is still measuring, even after the pid is reused by another process.
#pragma once

#include <string>

namespace ktune {

// "<pid> <start time in clock ticks since boot>" of this process (Linux /proc).
std::string this_process_owner();
// False when the process `owner` names has ended on this host: no such pid, or the pid now belongs
// to a process that started at another time. True when it cannot tell (no /proc, a malformed
// owner): such a run is left alone.
bool process_owner_alive(const std::string& owner);

}  // namespace ktune

// The name of the machine a run happens on.
#pragma once

#include <string>

namespace ktune {

// This machine's name, recorded with every run.
std::string host_name();

}  // namespace ktune

#include "tuner/tune/host_name.hpp"

#include <unistd.h>

namespace ktune {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace ktune

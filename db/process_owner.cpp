#include "db/process_owner.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

namespace ktune {
namespace {

// Field 22 of /proc/<pid>/stat; empty when the process is gone or the file cannot be read. The
// second field (the command name) may hold spaces and parentheses: fields are counted after its
// closing parenthesis.
std::string start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return {};
  const auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int number = 3; fields >> field; ++number)
    if (number == 22) return field;
  return {};
}

}  // namespace

std::string this_process_owner() {
  const long pid = static_cast<long>(::getpid());
  return std::to_string(pid) + " " + start_time(pid);
}

bool process_owner_alive(const std::string& owner) {
  std::istringstream in(owner);
  long pid = 0;
  std::string started;
  if (!(in >> pid) || pid <= 0) return true;
  in >> started;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  if (started.empty()) return true;
  const std::string now = start_time(pid);
  return now.empty() ? true : now == started;
}

}  // namespace ktune

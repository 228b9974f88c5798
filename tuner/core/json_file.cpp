#include "tuner/core/json_file.hpp"

#include <cerrno>
#include <cstring>

#include "tuner/core/errors.hpp"

namespace ktune {

std::string parse_error_text(const nlohmann::json::parse_error& e) {
  std::string text = e.what();
  if (!text.empty() && text.front() == '[') {
    const auto end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

std::ifstream open_json_file(const std::filesystem::path& file, const std::string& what, const std::string& hint) {
  std::error_code error;
  if (std::filesystem::is_directory(file, error))
    throw InputError(file.string() + ": is a directory, not " + what + "; " + hint);
  std::ifstream in(file);
  if (!in) throw InputError(file.string() + ": cannot open " + what + " (" + std::strerror(errno) + "); " + hint);
  return in;
}

}  // namespace ktune

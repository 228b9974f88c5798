#include "tuner/core/output_file.hpp"

#include <ctime>
#include <fstream>

#include "tuner/core/errors.hpp"

namespace ktune {

void write_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& option) {
  const std::filesystem::path temporary = path.string() + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw InputError(option + ": cannot write " + temporary.string());
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw InputError(option + ": writing " + temporary.string() + " failed (disk full?)");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw InputError(option + ": cannot rename " + temporary.string() + " to " + path.string() + " (" + error.message() + ")");
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  return std::string(text, std::strftime(text, sizeof text, format, &utc));
}

}  // namespace ktune

#include "tuner/core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "tuner/core/errors.hpp"

namespace ktune {

void write_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& option) {
  // A temporary of a name no one can guess, created exclusively (mkstemp: O_EXCL, so never
  // through a symlink planted beside the target), removed on every failure: a full disk leaves
  // neither half a file under the name nor a leftover beside it.
  std::string temporary = path.string() + ".partial-XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  const std::string where = option.empty() ? path.string() : option + ": " + path.string();
  if (fd < 0) throw InputError(where + ": cannot write (" + std::strerror(errno) + ")");
  auto fail = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    throw InputError(where + ": " + what + " (" + reason + ")");
  };
  // Readable as a file the user created would be (mkstemp makes it 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("cannot set the file's mode");
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed");
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("write failed");
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw InputError(where + ": write failed (" + reason + ")");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw InputError(where + ": cannot replace the file (" + reason + ")");
  }
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  return std::string(text, std::strftime(text, sizeof text, format, &utc));
}

}  // namespace ktune

#include "tuner/core/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

std::string system_reason() { return std::strerror(errno); }

}  // namespace

std::string byte_count_text(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string read_file_bytes(const std::filesystem::path& file, std::size_t max_bytes) {
  const std::string where = file.string();
  std::error_code error;
  if (std::filesystem::is_directory(file, error)) throw InputError(where + ": is a directory, not a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(where + ": cannot open (" + system_reason() + ")");
  const auto size = std::filesystem::file_size(file, error);
  if (!error && size > max_bytes)
    throw InputError(where + ": larger than " + byte_count_text(max_bytes) + "; refused");
  // Read in chunks up to the limit whatever the size claims: a device or a pipe (/dev/zero)
  // has no size and no end.
  std::string bytes;
  if (!error) bytes.reserve(size);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    if (bytes.size() + static_cast<std::size_t>(in.gcount()) > max_bytes)
      throw InputError(where + ": larger than " + byte_count_text(max_bytes) + "; refused");
    bytes.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(where + ": read failed (" + system_reason() + ")");
  return bytes;
}

}  // namespace ktune

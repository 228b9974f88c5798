#include "tuner/formats/data_file.hpp"

#include "tuner/core/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

std::string system_reason() { return std::strerror(errno); }

}  // namespace

std::string text_maybe_gzip(std::string_view bytes, const std::string& where, std::size_t max_bytes) {
  if (is_gzip(bytes)) return gunzip(bytes, where, max_bytes);
  if (bytes.size() > max_bytes)
    throw InputError(where + ": larger than " + byte_count_text(max_bytes) + "; refused");
  return std::string(bytes);
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

std::string read_text_maybe_gzip(const std::filesystem::path& file, std::size_t max_bytes) {
  return text_maybe_gzip(read_file_bytes(file, max_bytes), file.string(), max_bytes);
}

void write_text_maybe_gzip(const std::filesystem::path& file, std::string_view text) {
  const bool compress = file.extension() == ".gz";
  const std::string packed = compress ? gzip(text) : std::string();
  const std::string_view content = compress ? std::string_view(packed) : text;

  write_file_atomically(file, content, "");
}

}  // namespace ktune

#include "tuner/formats/data_file.hpp"

#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"

namespace ktune {

std::string text_maybe_gzip(std::string_view bytes, const std::string& where, std::size_t max_bytes) {
  if (is_gzip(bytes)) return gunzip(bytes, where, max_bytes);
  if (bytes.size() > max_bytes)
    throw InputError(where + ": larger than " + byte_count_text(max_bytes) + "; refused");
  return std::string(bytes);
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

// Whole-file reading and writing for exchanged result files that may be gzip-compressed.
//
//   std::string text = read_text_maybe_gzip("caches/conv.json.gz");  // plain or gzip: by content
//   write_text_maybe_gzip("out/conv.json.gz", text);                  // gzip: by the ".gz" suffix
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "tuner/core/input_file.hpp"
#include "tuner/formats/gzip.hpp"

namespace ktune {

// The file's text, inflated when it starts with the gzip magic number (whatever its name).
// Throws InputError naming the file when it cannot be read, is corrupt, or is (or inflates to)
// more than `max_bytes`.
std::string read_text_maybe_gzip(const std::filesystem::path& file, std::size_t max_bytes = kMaxDecompressedBytes);

// read_file_bytes(file, max_bytes): tuner/core/input_file.hpp.

// The text of bytes already in memory, inflated when they start with the gzip magic number;
// `where` names their source in messages.
std::string text_maybe_gzip(std::string_view bytes, const std::string& where, std::size_t max_bytes = kMaxDecompressedBytes);

// Writes `text`, gzip-compressed when the path ends in ".gz". Writes a temporary file beside the
// target and renames it, so an interrupted write never leaves a half-written file under the name.
// Throws InputError naming the file when it cannot be written.
void write_text_maybe_gzip(const std::filesystem::path& file, std::string_view text);

}  // namespace ktune

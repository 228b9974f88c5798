// gzip compression through zlib, for the .json.gz files other tuners exchange (Kernel Tuner
// caches, T4 results). Data is recognised by its magic bytes, never by a file name.
//
//   std::string text = is_gzip(bytes) ? gunzip(bytes, "cache.json.gz", kMaxDecompressedBytes) : bytes;
//   std::string packed = gzip(text);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tuner/core/input_file.hpp"  // byte_count_text

namespace ktune {

// 1 GiB. A tuning cache is tens of MiB at most (the largest shared one decompresses to 12 MiB);
// the cap keeps a decompression bomb (a few MiB that inflate to terabytes) from taking the machine
// down, and it also bounds plain files read whole into memory.
inline constexpr std::size_t kMaxDecompressedBytes = std::size_t{1} << 30;


// True when `bytes` starts with gzip's magic number (1f 8b).
bool is_gzip(std::string_view bytes);

// Inflates every gzip member of `bytes` (gzip allows several, concatenated). Throws InputError
// naming `where` for corrupt or truncated data, for data after the last member, and when the
// output would exceed `max_output` bytes.
std::string gunzip(std::string_view bytes, const std::string& where, std::size_t max_output = kMaxDecompressedBytes);

// One gzip member, default compression level, no file name and a zero timestamp, so the same text
// always compresses to the same bytes.
std::string gzip(std::string_view text);

}  // namespace ktune

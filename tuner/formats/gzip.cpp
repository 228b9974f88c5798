#include "tuner/formats/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

// windowBits 15 (32 KiB window) + 16: read and write the gzip wrapper, not raw zlib.
constexpr int kGzipWindowBits = 15 + 16;
constexpr std::size_t kChunk = 1 << 16;

struct InflateStream {
  z_stream stream{};
  InflateStream() {
    if (inflateInit2(&stream, kGzipWindowBits) != Z_OK) throw std::bad_alloc();
  }
  ~InflateStream() { inflateEnd(&stream); }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
};

struct DeflateStream {
  z_stream stream{};
  DeflateStream() {
    if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::bad_alloc();
  }
  ~DeflateStream() { deflateEnd(&stream); }
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
};

// zlib counts input in uInt; feed at most this much per call.
uInt input_slice(std::size_t left) { return static_cast<uInt>(std::min<std::size_t>(left, UINT_MAX / 2)); }

}  // namespace

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view bytes, const std::string& where, std::size_t max_output) {
  InflateStream inflater;
  z_stream& z = inflater.stream;
  std::string out;
  auto* next = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  char buffer[kChunk];
  for (;;) {
    z.next_in = const_cast<Bytef*>(next);
    z.avail_in = input_slice(left);
    const uInt offered = z.avail_in;
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    const int status = inflate(&z, Z_NO_FLUSH);
    const std::size_t consumed = offered - z.avail_in;
    next += consumed;
    left -= consumed;
    const std::size_t produced = sizeof buffer - z.avail_out;
    if (out.size() + produced > max_output)
      throw InputError(where + ": decompresses to more than " + byte_count_text(max_output) +
                       "; refused (no tuning result file is that large: a decompression bomb?)");
    out.append(buffer, produced);
    if (status == Z_STREAM_END) {
      if (left == 0) return out;
      // Another gzip member may follow (concatenated .gz files are one valid file); zero padding
      // after the last member is tolerated, as gzip(1) does.
      if (std::all_of(next, next + left, [](Bytef b) { return b == 0; })) return out;
      if (!is_gzip(std::string_view(reinterpret_cast<const char*>(next), left)))
        throw InputError(where + ": " + std::to_string(left) + " bytes of non-gzip data after the compressed data");
      inflateReset(&z);
      continue;
    }
    if (status == Z_OK) continue;  // zlib says Z_OK only when it made progress
    if (status == Z_BUF_ERROR && left == 0)
      throw InputError(where + ": the gzip data ends early (the file is truncated)");
    // Any other Z_BUF_ERROR without progress would loop for ever: refuse it as corrupt.
    if (status == Z_BUF_ERROR && (consumed > 0 || produced > 0)) continue;
    const std::string detail = z.msg != nullptr ? z.msg : "zlib error " + std::to_string(status);
    throw InputError(where + ": corrupt gzip data (" + detail + ")");
  }
}

std::string gzip(std::string_view text) {
  DeflateStream deflater;
  z_stream& z = deflater.stream;
  std::string out;
  auto* next = reinterpret_cast<const Bytef*>(text.data());
  std::size_t left = text.size();
  char buffer[kChunk];
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    z.next_in = const_cast<Bytef*>(next);
    z.avail_in = input_slice(left);
    const uInt offered = z.avail_in;
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    const bool last_slice = offered == left;
    status = deflate(&z, last_slice ? Z_FINISH : Z_NO_FLUSH);
    if (status == Z_STREAM_ERROR) throw std::logic_error("gzip: zlib stream error");
    next += offered - z.avail_in;
    left -= offered - z.avail_in;
    out.append(buffer, sizeof buffer - z.avail_out);
  }
  return out;
}

}  // namespace ktune

// A file's bytes, read and written whole: what the store tests compare before and after.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ktune::testing {

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace ktune::testing

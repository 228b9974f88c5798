// Reading a file the user names, whole and bounded: a device or a pipe that never ends
// (/dev/zero) is refused at the limit instead of exhausting the machine's memory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace ktune {

// The file's bytes as they are; InputError naming the file when it cannot be read, is a
// directory, or holds more than `max_bytes`.
std::string read_file_bytes(const std::filesystem::path& file, std::size_t max_bytes);

// "64 MiB" for a whole number of MiB, else "1234 bytes".
std::string byte_count_text(std::size_t bytes);

}  // namespace ktune

// Writing what ktune produces (bench JSON, report files): to a temporary file first, renamed into
// place when complete, so a reader (or a crash half-way) never leaves half a file under the name.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace ktune {

// InputError naming `option` and the file when it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& option);

// The current UTC time formatted by strftime's `format`, e.g. "%Y-%m-%dT%H:%M:%SZ".
std::string utc_now(const char* format);

}  // namespace ktune

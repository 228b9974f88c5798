// Reading user-given JSON files (search spaces, T1 specs) with errors that name the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace ktune {

// "[json.exception.parse_error.101] parse error at line 5, column 1: ..." without the library's tag.
std::string parse_error_text(const nlohmann::json::parse_error& e);

// Opens a JSON file for reading; InputError names the file, says why it cannot be read (`what`
// is the kind of file, e.g. "a T1 file") and ends with `hint`, what to do about it.
std::ifstream open_json_file(const std::filesystem::path& file, const std::string& what, const std::string& hint);

}  // namespace ktune

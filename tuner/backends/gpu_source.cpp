#include "tuner/backends/gpu_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <functional>
#include <thread>

#include "ktune/embedded/cuda_sources.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"

namespace ktune {
namespace {

const EmbeddedFile* find_embedded(std::string_view path) {
  for (const auto& file : embedded::cuda_sources)
    if (file.path == path) return &file;
  return nullptr;
}

}  // namespace

std::string_view embedded_source_text(std::string_view path) {
  const EmbeddedFile* file = find_embedded(path);
  if (!file) throw std::runtime_error("ktune was built without the embedded file " + std::string(path));
  return file->text;
}

namespace {

std::string upper(std::string text) {
  for (auto& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return text;
}

const char* element_type(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "float";
    case Precision::tf32: return "float";  // rounded to tf32 on the host; the tensor cores read it so
    case Precision::fp16: return "kt::half";
    case Precision::bf16: return "kt::bfloat16";
    case Precision::fp8_e4m3: return "kt::fp8_e4m3";
    default: return nullptr;
  }
}

// The targets of the `#include "..."` lines of `text`, whatever the conditionals around them (a
// header a branch may include counts: the hash must change when it does).
std::vector<std::string_view> quoted_includes(std::string_view text) {
  std::vector<std::string_view> paths;
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    const auto skip_blanks = [&line] {
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    };
    skip_blanks();
    if (!line.starts_with('#')) continue;
    line.remove_prefix(1);
    skip_blanks();
    if (!line.starts_with("include")) continue;
    line.remove_prefix(7);
    skip_blanks();
    if (!line.starts_with('"')) continue;
    const std::size_t close = line.find('"', 1);
    if (close != std::string_view::npos) paths.push_back(line.substr(1, close - 1));
  }
  return paths;
}

}  // namespace

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash) {
  for (unsigned char ch : text) hash = (hash ^ ch) * 1099511628211ull;
  return hash;
}

std::string hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string gpu_main_text(const GpuSource& source) {
  if (!source.text.empty()) return std::string(source.text);
  const EmbeddedFile* main = find_embedded(source.file);
  if (!main) throw std::runtime_error("GPU source " + std::string(source.file) + " is not embedded in this build");
  return std::string(main->text);
}

std::set<std::string_view> embedded_includes(std::string_view main) {
  std::set<std::string_view> seen;
  std::vector<std::string_view> pending{main};
  while (!pending.empty()) {
    const EmbeddedFile* file = find_embedded(pending.back());
    pending.pop_back();
    if (!file || !seen.insert(file->path).second) continue;
    for (const std::string_view included : quoted_includes(file->text)) pending.push_back(included);
  }
  return seen;
}

std::string gpu_source_hash(const GpuSource& source) {
  if (!source.text.empty()) return hex16(fnv1a(source.text, fnv1a(source.file)));  // a file from outside ktune
  const std::set<std::string_view> files = embedded_includes(source.file);  // the source itself among them
  if (files.empty()) throw std::runtime_error("GPU source " + std::string(source.file) + " is not embedded in this build");
  std::uint64_t hash = fnv1a(std::string_view{});
  for (const std::string_view path : files) hash = fnv1a(find_embedded(path)->text, fnv1a(path, hash));
  return hex16(hash);
}

std::vector<std::string> compile_time_dims(const KernelFamily& family, const GpuSource& source) {
  std::vector<std::string> texts;
  if (!source.text.empty()) texts.emplace_back(source.text);
  for (const std::string_view path : embedded_includes(source.file)) texts.emplace_back(find_embedded(path)->text);
  std::vector<std::string> dims;
  for (const DimSpec& dim : family.dims()) {
    std::string define = "KT_DIM_";
    for (const char c : dim.name) define += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    // A whole word: KT_DIM_HEAD does not count as KT_DIM_HEAD_DIM.
    const auto reads = [&](const std::string& text) {
      for (std::size_t at = text.find(define); at != std::string::npos; at = text.find(define, at + 1)) {
        const std::size_t end = at + define.size();
        const char next = end < text.size() ? text[end] : ' ';
        if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_')) return true;
      }
      return false;
    };
    if (std::any_of(texts.begin(), texts.end(), reads)) dims.push_back(dim.name);
  }
  return dims;
}

EmbeddedHeaders::EmbeddedHeaders() {
  for (const auto& file : embedded::cuda_sources) {
    name_storage_.emplace_back(file.path);
    text_storage_.emplace_back(file.text);
  }
  for (std::size_t i = 0; i < name_storage_.size(); ++i) {
    names.push_back(name_storage_[i].c_str());
    texts.push_back(text_storage_[i].c_str());
  }
}

std::vector<std::string> variant_defines(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const std::vector<Precision>& supported, const std::string& backend) {
  const char* type = element_type(problem.precision);
  if (!type || std::find(supported.begin(), supported.end(), problem.precision) == supported.end()) {
    std::vector<std::string> names;
    for (Precision precision : supported) names.emplace_back(to_string(precision));
    throw InputError(backend + " kernels take " + join_names(names) + ", not " + std::string(to_string(problem.precision)));
  }
  std::vector<std::string> defines{"-DKT_T=" + std::string(type),
                                   "-DKT_PRECISION_" + upper(std::string(to_string(problem.precision)))};
  for (const auto& [name, value] : problem.dims) defines.push_back("-DKT_DIM_" + upper(name) + "=" + std::to_string(value));
  const GpuSource* source = family.cuda_source();
  if (source && source->raw_defines) {
    // Kernel Tuner's convention: each parameter under its own name, values as they are, after
    // what the family derives (a T1 kernel's launch sizes).
    for (const auto& [name, value] : family.source_defines(problem, config)) defines.push_back("-D" + name + "=" + value);
    return defines;
  }
  for (const auto& [name, value] : config.values) {
    const auto* text = std::get_if<std::string>(&value);
    // String values become identifiers: KT_ORDER=KT_ORDER_row_major lets a kernel test them.
    defines.push_back("-DKT_" + upper(name) + "=" + (text ? "KT_" + upper(name) + "_" + *text : to_string(value)));
  }
  return defines;
}

std::optional<std::string> cached_entry_name(const std::filesystem::path& binary) {
  std::ifstream in(binary.string() + ".entry");
  std::string name;
  if (!in || !std::getline(in, name) || name.empty()) return std::nullopt;
  return name;
}

void keep_entry_name(const std::filesystem::path& binary, const std::string& lowered) {
  write_file_atomically(binary.string() + ".entry", lowered + "\n");
}

std::filesystem::path default_binary_cache_dir() {
  if (const char* dir = std::getenv("KTUNE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::filesystem::path(dir) / "ktune";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "ktune";
  // Without a home: a folder of this user's own in the temporary directory, made private. A
  // shared fixed name would let another local user plant binaries that ktune then loads and runs.
  std::error_code error;
  const auto dir = std::filesystem::temp_directory_path(error) / ("ktune-cache-" + std::to_string(::getuid()));
  ::mkdir(dir.c_str(), 0700);
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid() ||
      (info.st_mode & 022) != 0)
    throw InputError(dir.string() + ": not a private folder of yours (another user's, a link, or writable by others), "
                     "so it cannot hold the compiled kernels ktune runs; set KTUNE_CACHE_DIR or HOME");
  return dir;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  write_file_atomically(path, std::string_view(bytes), "the binary cache");
}

}  // namespace ktune

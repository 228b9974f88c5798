#include "tuner/backends/vulkan/vulkan_shaders.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "ktune/embedded/vulkan_sources.hpp"
#include "ktune/embedded/vulkan_spirv.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/errors.hpp"

namespace ktune {
namespace {

std::string upper(std::string text) {
  for (auto& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return text;
}

std::string_view embedded_text(std::string_view path) {
  for (const auto& file : embedded::vulkan_sources)
    if (file.path == path) return file.text;
  throw std::runtime_error("the Vulkan shader file " + std::string(path) + " is not embedded in this build of ktune");
}

// Appends `text` (the file `path` from line `first_line` on) with its #include lines replaced
// by the included files, and #line directives so that glslang's messages name the right file.
void expand(std::string_view path, std::string_view text, int first_line, std::string& out, int depth) {
  if (depth > 8) throw std::runtime_error("#include nested too deeply at " + std::string(path));
  std::istringstream in{std::string(text)};
  std::string line;
  int number = first_line - 1;
  out += "#line " + std::to_string(first_line) + " \"" + std::string(path) + "\"\n";
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 8, "#include") == 0) {
      const auto open = line.find('"'), close = line.rfind('"');
      if (open == std::string::npos || close <= open)
        throw std::runtime_error(std::string(path) + ":" + std::to_string(number) + ": expected #include \"file\"");
      // Shaders include relative to kernels/, as glslc's -I kernels does at build time.
      const std::string included = "kernels/" + line.substr(open + 1, close - open - 1);
      expand(included, embedded_text(included), 1, out, depth + 1);
      out += "#line " + std::to_string(number + 1) + " \"" + std::string(path) + "\"\n";
      continue;
    }
    out += line;
    out += '\n';
  }
}

}  // namespace

void require_vulkan_precision(Precision precision) {
  if (precision != Precision::fp32 && precision != Precision::fp16 && precision != Precision::bf16)
    throw InputError("vulkan kernels take fp32, fp16 or bf16, not " + std::string(to_string(precision)));
}

const std::vector<std::uint32_t>* prebuilt_spirv(std::string_view shader, Precision precision) {
  for (const auto& module : embedded::vulkan_spirv())
    if (module.shader == shader && module.precision == to_string(precision)) return &module.words;
  return nullptr;
}

std::string vulkan_shader_text(std::string_view file) {
  // #version must come before anything but comments, so it leads the text; the comments above
  // it are dropped and the #line directives keep the numbering of the file.
  const std::string_view body = embedded_text(file);
  std::size_t version = body.rfind("#version", 0) == 0 ? 0 : body.find("\n#version");
  if (version == std::string_view::npos) throw std::runtime_error(std::string(file) + ": a shader has a #version line");
  if (body[version] == '\n') ++version;
  const auto version_end = body.find('\n', version);
  std::string text(body.substr(version, version_end - version + 1));
  if (version_end == std::string_view::npos) text += '\n';
  text += "#extension GL_GOOGLE_cpp_style_line_directive : require\n";  // #line with file names
  const int version_line = 1 + static_cast<int>(std::count(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(version), '\n'));
  if (version_end != std::string_view::npos) expand(file, body.substr(version_end + 1), version_line + 1, text, 0);
  return text;
}

std::string vulkan_source_hash(const KernelFamily& family) {
  const VulkanShader* shader = family.vulkan_shader();
  if (!shader) throw InputError("kernel '" + family.name() + "' has no vulkan implementation");
  std::uint64_t hash = fnv1a(embedded_text(shader->file), fnv1a(shader->file));
  for (const auto& file : embedded::vulkan_sources)
    if (file.path.rfind("kernels/common/", 0) == 0) hash = fnv1a(file.text, fnv1a(file.path, hash));
  return hex16(hash);
}

std::vector<std::string> vulkan_defines(const Problem& problem, const Config& compile_time_config) {
  require_vulkan_precision(problem.precision);
  std::vector<std::string> defines{"KT_PRECISION_" + upper(std::string(to_string(problem.precision))) + "=1"};
  for (const auto& [name, value] : compile_time_config.values) {
    if (const auto* text = std::get_if<std::string>(&value))
      defines.push_back("KT_" + upper(name) + "_" + upper(*text) + "=1");
    else
      defines.push_back("KT_" + upper(name) + "=" + to_string(value));
  }
  return defines;
}

}  // namespace ktune

// GLSL to SPIR-V at tune time through glslang's C API, for Vulkan variants whose parameters
// change the shader's structure (libshaderc, the usual wrapper, crashes on Debian 12: its ABI
// does not match the packaged glslang). Targets Vulkan 1.2 / SPIR-V 1.5, as glslc does at build
// time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ktune {

struct GlslCompileResult {
  bool ok = false;
  std::vector<std::uint32_t> words;
  std::string log;  // glslang's messages (the errors when !ok)
};

// `defines` as "NAME=VALUE". Thread-safe (compiles are serialized: each takes milliseconds).
GlslCompileResult compile_glsl(const std::string& text, const std::vector<std::string>& defines);

}  // namespace ktune

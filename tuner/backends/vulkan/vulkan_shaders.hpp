// The Vulkan shaders as ktune carries them: each family's GLSL (for glslang at tune time) and
// its SPIR-V compiled by glslc at build time for each precision, both embedded in the binary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

// The precisions Vulkan shaders store (vulkan_common.glsl); InputError for any other.
void require_vulkan_precision(Precision precision);

// The build-time SPIR-V of `shader` for `precision`; nullptr when this build has none.
const std::vector<std::uint32_t>* prebuilt_spirv(std::string_view shader, Precision precision);

// The shader's GLSL with its `#include "..."` lines (relative to kernels/) replaced by the
// embedded files. std::runtime_error when a file is not embedded in this build.
std::string vulkan_shader_text(std::string_view file);

// Hash of the shader and the shared GLSL headers: keys measurements and cached modules.
std::string vulkan_source_hash(const KernelFamily& family);

// The #defines of a variant: KT_PRECISION_<P>=1, and for each compile-time parameter
// KT_<NAME>=<value> (a string value: KT_<NAME>_<VALUE>=1), as "NAME=VALUE" strings.
std::vector<std::string> vulkan_defines(const Problem& problem, const Config& compile_time_config);

}  // namespace ktune

// What the Vulkan backend reads from a SPIR-V module: its specialization constants by name, so
// that a shader's `layout(constant_id = N) const uint KT_BLOCK_ROWS` receives the config's
// block_rows whatever N the shader picked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ktune {

struct SpecializationConstant {
  std::uint32_t id;
  bool is_bool = false;  // a `const bool` (VkBool32) rather than a 32-bit number
};

// Named specialization constants by name. std::runtime_error for words that are not SPIR-V.
std::map<std::string, SpecializationConstant> specialization_constants(const std::vector<std::uint32_t>& words);

}  // namespace ktune

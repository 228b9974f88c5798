#include "tuner/backends/vulkan/spirv_reflection.hpp"

#include <stdexcept>

namespace ktune {
namespace {

// The opcodes and decoration involved (SPIR-V specification, section 3).
constexpr std::uint32_t kMagic = 0x07230203;
constexpr std::uint32_t kOpName = 5;
constexpr std::uint32_t kOpDecorate = 71;
constexpr std::uint32_t kOpSpecConstantTrue = 48;
constexpr std::uint32_t kOpSpecConstantFalse = 49;
constexpr std::uint32_t kDecorationSpecId = 1;

// A literal string: UTF-8 bytes packed little-endian into words, nul-terminated.
std::string literal_string(const std::uint32_t* words, std::size_t count) {
  std::string text;
  for (std::size_t w = 0; w < count; ++w)
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((words[w] >> (8 * b)) & 0xff);
      if (c == '\0') return text;
      text.push_back(c);
    }
  return text;
}

}  // namespace

std::map<std::string, SpecializationConstant> specialization_constants(const std::vector<std::uint32_t>& words) {
  if (words.size() < 5 || words[0] != kMagic) throw std::runtime_error("not a SPIR-V module (bad magic number)");
  std::map<std::uint32_t, std::string> names;
  std::map<std::uint32_t, std::uint32_t> spec_ids;  // result id -> SpecId
  std::map<std::uint32_t, bool> booleans;
  for (std::size_t at = 5; at < words.size();) {
    const std::uint32_t count = words[at] >> 16, opcode = words[at] & 0xffff;
    if (count == 0 || at + count > words.size()) throw std::runtime_error("truncated SPIR-V instruction");
    if (opcode == kOpName && count >= 3) {
      // A GLSL alias (`const uint T = KT_THREADS;`) can give the same constant a second name:
      // the KT_ name is the one the backend matches, so it is never replaced by another.
      std::string name = literal_string(&words[at + 2], count - 2);
      std::string& kept = names[words[at + 1]];
      if (kept.rfind("KT_", 0) != 0) kept = std::move(name);
    }
    if (opcode == kOpDecorate && count >= 4 && words[at + 2] == kDecorationSpecId) spec_ids[words[at + 1]] = words[at + 3];
    if ((opcode == kOpSpecConstantTrue || opcode == kOpSpecConstantFalse) && count >= 3) booleans[words[at + 2]] = true;
    at += count;
  }
  std::map<std::string, SpecializationConstant> constants;
  for (const auto& [id, spec_id] : spec_ids) {
    const auto name = names.find(id);
    if (name == names.end() || name->second.empty()) continue;  // the workgroup size: set by id
    constants[name->second] = {spec_id, booleans.count(id) > 0};
  }
  return constants;
}

}  // namespace ktune

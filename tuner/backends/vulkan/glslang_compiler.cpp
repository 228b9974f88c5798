#include "tuner/backends/vulkan/glslang_compiler.hpp"

#include <memory>
#include <mutex>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

namespace ktune {
namespace {

std::mutex& glslang_mutex() {
  static std::mutex mutex;
  return mutex;
}

// glslang's process-wide state, set up once and kept for the life of ktune.
void initialize_glslang() {
  static const bool initialized = [] { return glslang_initialize_process() != 0; }();
  (void)initialized;
}

}  // namespace

GlslCompileResult compile_glsl(const std::string& text, const std::vector<std::string>& defines) {
  std::lock_guard lock(glslang_mutex());
  initialize_glslang();
  std::string preamble;
  for (const auto& define : defines) {
    const auto equals = define.find('=');
    preamble += "#define " + define.substr(0, equals) + " " + (equals == std::string::npos ? "1" : define.substr(equals + 1)) + "\n";
  }

  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_2;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_5;
  input.code = text.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.force_default_version_and_profile = false;
  input.forward_compatible = false;
  input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();

  GlslCompileResult result;
  const std::unique_ptr<glslang_shader_t, void (*)(glslang_shader_t*)> shader(glslang_shader_create(&input),
                                                                              glslang_shader_delete);
  glslang_shader_set_preamble(shader.get(), preamble.c_str());
  auto shader_log = [&] {
    return std::string(glslang_shader_get_info_log(shader.get())) + glslang_shader_get_info_debug_log(shader.get());
  };
  if (!glslang_shader_preprocess(shader.get(), &input) || !glslang_shader_parse(shader.get(), &input)) {
    result.log = shader_log();
    return result;
  }
  const std::unique_ptr<glslang_program_t, void (*)(glslang_program_t*)> program(glslang_program_create(),
                                                                                 glslang_program_delete);
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
    result.log = std::string(glslang_program_get_info_log(program.get())) + glslang_program_get_info_debug_log(program.get());
    return result;
  }
  glslang_spv_options_t options{};
  options.validate = true;
  // No SPIR-V optimizer: it strips the names by which the backend finds specialization
  // constants, and the driver optimizes anyway (glslc runs without -O at build time too).
  options.disable_optimizer = true;
  glslang_program_SPIRV_generate_with_options(program.get(), GLSLANG_STAGE_COMPUTE, &options);
  const std::size_t size = glslang_program_SPIRV_get_size(program.get());
  result.words.resize(size);
  glslang_program_SPIRV_get(program.get(), result.words.data());
  if (const char* messages = glslang_program_SPIRV_get_messages(program.get())) result.log = messages;
  result.ok = size > 0;
  if (!result.ok && result.log.empty()) result.log = "glslang produced no SPIR-V";
  return result;
}

}  // namespace ktune

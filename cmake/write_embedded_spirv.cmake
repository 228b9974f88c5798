# Script mode: OUTPUT, NAME, ENTRIES ("|"-separated "shader-path=precision=spv-file" triples).
# Writes a header holding each SPIR-V module as 32-bit words, keyed by shader path and precision.
string(REPLACE "|" ";" entry_list "${ENTRIES}")
set(body "")
foreach(entry ${entry_list})
  string(REPLACE "=" ";" parts "${entry}")
  list(GET parts 0 shader)
  list(GET parts 1 precision)
  list(GET parts 2 spv)
  file(READ ${spv} hex HEX)
  # SPIR-V is little-endian 32-bit words: regroup each 4 bytes, least significant first.
  string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
  string(APPEND body "    {\"${shader}\", \"${precision}\", std::initializer_list<std::uint32_t>{${words}}},\n")
endforeach()
file(WRITE ${OUTPUT} "// Generated at build time by glslc from the shaders named below. Do not edit.\n#pragma once\n#include <cstdint>\n#include <initializer_list>\n#include <string_view>\n#include <vector>\nnamespace ktune::embedded {\nstruct SpirvModule {\n  std::string_view shader;\n  std::string_view precision;\n  std::vector<std::uint32_t> words;\n};\ninline const std::vector<SpirvModule>& ${NAME}() {\n  static const std::vector<SpirvModule> modules = {\n${body}  };\n  return modules;\n}\n}\n")

// A source file compiled into the binary (see cmake/embed_sources.cmake).
#pragma once

#include <string_view>

namespace ktune {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree, e.g. "kernels/rmsnorm/rmsnorm.cu"
  std::string_view text;
};

}  // namespace ktune

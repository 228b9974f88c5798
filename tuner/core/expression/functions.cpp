#include "tuner/core/expression/functions.hpp"

namespace ktune::expression_detail {

const FuncInfo* find_function(const std::string& name) {
  for (const auto& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

const char* function_name(std::uint8_t id) {
  for (const auto& f : kFunctions)
    if (f.id == id) return f.name;
  return "?";
}

}  // namespace ktune::expression_detail

// A problem's tensors read by name instead of by position. A family names its tensors in
// KernelFamily::tensors(), and every list of them (the float64 host copies a reference reads, the
// buffers a CPU kernel receives) follows that order. A name is turned into its position once,
// when a reference or a CPU variant starts, never per element.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/core/errors.hpp"

namespace ktune {

// The element of `list` (indexed like `names`) named `name`. An unknown name, or a list and
// names of different lengths, is a mistake in kernel code: std::logic_error names the family and
// its tensors.
template <typename Tensor>
Tensor& tensor_named(std::string_view family, std::span<const std::string> names, std::span<Tensor> list,
                     std::string_view name) {
  if (names.size() != list.size())
    throw std::logic_error(std::string(family) + ": " + std::to_string(list.size()) + " tensors for the " +
                           std::to_string(names.size()) + " names " + join_names(names));
  for (std::size_t position = 0; position < names.size(); ++position)
    if (names[position] == name) return list[position];
  throw std::logic_error(std::string(family) + " has no tensor '" + std::string(name) +
                         "'; its tensors are: " + join_names(names));
}

// A family's tensors with their names: named.at("x").
template <typename Tensor>
class NamedTensors {
 public:
  NamedTensors(std::string family, std::vector<std::string> names, std::span<Tensor> list)
      : family_(std::move(family)), names_(std::move(names)), list_(list) {}

  Tensor& at(std::string_view name) const { return tensor_named(family_, names_, list_, name); }

 private:
  std::string family_;
  std::vector<std::string> names_;
  std::span<Tensor> list_;
};

}  // namespace ktune

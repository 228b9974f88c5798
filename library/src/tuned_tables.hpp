// The tables of tuned configs compiled into the library: the headers `ktune export` wrote into
// the folder KTUNE_TUNED_DIR names (<dir>/<backend>/<family>.hpp), one lookup per header, made
// at build time by cmake/tuned_tables.cmake. A family without a header has no table and runs
// its default.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"

namespace ktune::library {

struct TunedAnswer {
  Config config;
  std::string level;  // device, architecture, vendor or default_config
  std::int64_t measurement_id = 0;
  std::string tuned_shape;  // "rows=4096 cols=4096" of the answering entry; empty for the default
};

struct TunedTable {
  std::string_view backend;
  std::string_view family;
  std::function<TunedAnswer(const DeviceInfo&, const Problem&)> lookup;
};

// Every table of this build (generated: tuned_tables.cpp).
const std::vector<TunedTable>& tuned_tables();

// The table's answer for a problem on a device, or nothing when the build has no table of this
// backend and family.
std::optional<TunedAnswer> tuned_lookup(std::string_view backend, const DeviceInfo& device, const Problem& problem);

// Turns one generated header's lookup_entry() result into a TunedAnswer (the header's Config
// read through its for_each_parameter).
template <class Result, class ForEachParameter, class ForEachDim>
TunedAnswer to_answer(const Result& result, ForEachParameter for_each_parameter, ForEachDim for_each_dim) {
  TunedAnswer answer;
  for_each_parameter(result.config, [&](std::string_view name, const auto& value) {
    using V = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<V, std::string_view>)
      answer.config.values.emplace_back(std::string(name), Value{std::string(value)});
    else if constexpr (std::is_same_v<V, double>)
      answer.config.values.emplace_back(std::string(name), Value{value});
    else
      answer.config.values.emplace_back(std::string(name), Value{static_cast<std::int64_t>(value)});
  });
  answer.level = std::string(to_string(result.level));
  if (result.entry) {
    answer.measurement_id = result.entry->measurement_id;
    for_each_dim(result.entry->shape, [&](std::string_view name, std::int64_t value) {
      answer.tuned_shape += (answer.tuned_shape.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
    });
  }
  return answer;
}

}  // namespace ktune::library

// A search space: named parameters with value lists, named constraints (expressions over
// parameters, problem dims and device limits) and launch geometry derived from parameters.
// Read from search_spaces/<family>.<backend>.json:
//
//   {
//     "family": "rmsnorm", "backend": "cpu",
//     "parameters": [ {"name": "threads", "values": [1, 2, 4], "help": "..."}, ... ],
//     "constraints": [ {"name": "fits_in_registers", "expr": "vector_width * unroll <= 32"},
//                      "threads <= hardware_threads" ],
//     "derived": { "rows_per_thread": "rows_per_task // threads" },
//     "launch": { "tasks": "ceil_div(rows, rows_per_task)" },
//     "default": { "threads": 1, ... }
//   }
//
// "derived" names expressions that later derived values, launch expressions and constraints may
// read; constraints may also read the launch values by name, so a resource is written once (the
// launch's shared_bytes is both what a variant is launched with and what its limit checks).
// Enumeration walks the parameters depth first and checks each constraint as soon as the last
// parameter it reads is bound, so a constraint prunes whole subtrees and the Cartesian product
// is never built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/config.hpp"
#include "tuner/core/expression.hpp"
#include "tuner/core/value.hpp"

namespace ktune {

struct Parameter {
  std::string name;
  std::vector<Value> values;
  std::string help;
  // Read by the launch geometry only, never by the kernel ("launch_only": true): configs that
  // differ only in such parameters share one compiled binary.
  bool launch_only = false;
  // A Vulkan parameter compiled into the shader as a #define ("compile_time": true); every other
  // Vulkan parameter is a specialization constant and so counts as launch_only.
  bool compile_time = false;
  // For a compile-time parameter: the value the shader takes when its #define is absent
  // ("build_time_value"), so the value of the SPIR-V glslc compiled at build time. A config whose
  // compile-time parameters all hold these values runs without glslang (the kernel library runs
  // only such configs).
  std::optional<Value> build_time_value;
};

struct Constraint {
  std::string name;  // given in the file, or the expression text
  Expression expression;
};

// Names and values that constraints and launch expressions may read besides the parameters:
// problem dims (rows, cols, ...) and device limits (hardware_threads, ...).
using SpaceContext = std::map<std::string, Value>;

// The valid configs of a space for one context, stored compactly as value indices.
// The memory a space's valid configs may take (4 bytes a parameter a config): 2 GiB unless
// KTUNE_MAX_SPACE_MIB says otherwise. A larger space is refused as bad input (exit 2) before it
// exhausts the machine's memory. InputError for a malformed KTUNE_MAX_SPACE_MIB.
inline constexpr std::size_t kDefaultMaxSpaceMiB = 2048;
std::size_t max_space_bytes();

class ValidConfigs {
 public:
  ValidConfigs(std::vector<Parameter> parameters, std::vector<std::uint32_t> indices,
               std::uint64_t total, double seconds);
  std::size_t size() const { return parameters_.empty() ? 0 : indices_.size() / parameters_.size(); }
  std::uint64_t total() const { return total_; }   // size of the Cartesian product
  double seconds() const { return seconds_; }      // time to enumerate
  Config config(std::size_t i) const;
  std::optional<std::size_t> find(const Config& config) const;  // a linear search
  // The structure search strategies move through: config i has, for parameter p, the value
  // parameters()[p].values[value_index(i, p)].
  const std::vector<Parameter>& parameters() const { return parameters_; }
  std::uint32_t value_index(std::size_t i, std::size_t p) const { return indices_[i * parameters_.size() + p]; }

 private:
  std::vector<Parameter> parameters_;  // a copy, so the result outlives its space
  std::vector<std::uint32_t> indices_;
  std::uint64_t total_;
  double seconds_;
};

class SearchSpace {
 public:
  static SearchSpace load(const std::filesystem::path& file);  // InputError names file and key
  static SearchSpace from_json(const nlohmann::json& json, const std::string& where);

  const std::string& family() const { return family_; }
  const std::string& backend() const { return backend_; }
  const std::string& source() const { return source_; }  // file it came from
  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  std::vector<std::string> parameter_names() const;
  std::vector<std::string> launch_only_names() const;  // see Parameter::launch_only
  std::uint64_t total() const;  // Cartesian product size, saturating at UINT64_MAX

  // Every config that satisfies all constraints in `context`. Throws InputError when a
  // constraint reads a name that is neither a parameter nor in the context.
  ValidConfigs enumerate(const SpaceContext& context) const;
  // Checks one config against the constraints; returns the names of those it violates.
  std::vector<std::string> violated(const Config& config, const SpaceContext& context) const;

  // The untuned default config from the file ("default"), if it has one.
  const std::optional<Config>& default_config() const { return default_config_; }
  // Configs that were fast on the spaces recorded so far ("starting_points", best first; derived
  // by ci/choose_starting_points.py). ktune tune offers them to the strategy after the database's
  // prior (tuner/strategies/prior_configs.hpp), so with an empty database they are the prior;
  // tpe and forest use it, the other strategies ignore it. Those not valid for a problem are
  // skipped there.
  const std::vector<Config>& starting_points() const { return starting_points_; }
  // Launch geometry evaluated for one config, e.g. {"tasks": 64}.
  std::map<std::string, Value> launch(const Config& config, const SpaceContext& context) const;

 private:
  std::string family_;
  std::string backend_;
  std::string source_;
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
  std::vector<std::pair<std::string, Expression>> launch_;
  std::optional<Config> default_config_;
  std::vector<Config> starting_points_;
};

}  // namespace ktune

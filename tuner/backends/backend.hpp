// A backend runs kernel variants on one device. It lives in the worker process, so a variant
// that crashes or hangs takes down only the worker, never the tuner.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/measure/evaluation.hpp"
#include "tuner/measure/stopping_rule.hpp"

namespace ktune {

struct MeasureSettings {
  std::uint64_t seed = 0;          // inputs are drawn from this seed (a fresh one per problem)
  int warmup_runs = 2;             // untimed runs after the verification run
  StoppingCriteria stopping;
  // The variant is the family's trusted reference (KernelFamily::reference_from_config): its
  // outputs go to keep_reference instead of being checked.
  bool capture_reference = false;

  nlohmann::json to_json() const;
  static MeasureSettings from_json(const nlohmann::json& json);
};

// What the tuner prepared for one variant: the compiled module of GPU backends (CPU variants are
// compiled into ktune) and the launch geometry the search space derives from the parameters.
struct VariantBuild {
  std::string binary;  // path of the compiled module (a CUBIN); empty: the backend builds it
  std::string entry;   // the kernel's name in it
  double compile_ms = 0;
  std::map<std::string, std::int64_t> launch;  // grid_x, block_x, shared_bytes, ...

  // The launch value `name`, or `fallback` when the space gives none.
  std::int64_t launch_or(const std::string& name, std::int64_t fallback) const {
    const auto it = launch.find(name);
    return it == launch.end() ? fallback : it->second;
  }

  nlohmann::json to_json() const;
  static VariantBuild from_json(const nlohmann::json& json);
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& device() const = 0;
  // Verifies and times one config. A failing variant is reported as an outcome in the result;
  // only a failure of the harness itself throws.
  virtual EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                                    const VariantBuild& build, const MeasureSettings& settings) = 0;
  EvaluationResult evaluate(const KernelFamily& family, const Problem& problem, const Config& config,
                            const MeasureSettings& settings) {
    return evaluate(family, problem, config, VariantBuild{}, settings);
  }
  // Makes the problem's inputs and float64 reference ready (a backend keeps one problem loaded).
  // Evaluate does this itself when needed; the worker calls it first, under a timeout of its
  // own, so a large problem's set-up is never charged to (or killed as) the first config.
  virtual void prepare(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
    (void)family;
    (void)problem;
    (void)seed;
  }
  // False while the problem's float64 reference is still being computed (a backend may compute it
  // while it measures the first configs, whose outputs are then checked after their timing): an
  // evaluation may then wait for it, and the worker's client allows it the set-up's time.
  virtual bool reference_ready() const { return true; }
  // False once the device is unusable (a sticky GPU error): the worker must be replaced.
  virtual bool healthy() const { return true; }
};

}  // namespace ktune

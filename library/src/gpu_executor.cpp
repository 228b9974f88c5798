#include "library/src/gpu_executor.hpp"

namespace ktune::library {

const GpuImage& GpuExecutor::choose_image(const KernelFamily& family, const Problem& problem, const Config& config,
                                          const SearchSpace& space, Binary binary, Problem& compiled) {
  const VariantImages carried = images();
  if (binary != Binary::exact_or_compiled)
    return carried.choose(family, problem, config, space, binary == Binary::run_time_dims, compiled);
  compiled = problem;
  const std::string key = gpu_variant_key(family, problem, config, space);
  if (const GpuImage* image = carried.exact(key)) return *image;
  try {
    return run_time_.image(family, problem, config, key);
  } catch (const ConfigCannotRun& e) {
    throw ConfigCannotRun(carried.missing(family, problem, key) + "; " + e.what());
  }
}

}  // namespace ktune::library

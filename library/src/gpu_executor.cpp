#include "library/src/gpu_executor.hpp"

namespace ktune::library {

const GpuImage& GpuExecutor::choose_image(const KernelFamily& family, const Problem& problem, const Config& config,
                                          const SearchSpace& space, Binary binary, Problem& compiled) {
  try {
    return images().choose(family, problem, config, space, binary == Binary::run_time_dims, compiled);
  } catch (const ConfigCannotRun& not_carried) {
    if (binary != Binary::exact_or_compiled) throw;
    try {
      return run_time_.image(family, problem, config, gpu_variant_key(family, problem, config, space));
    } catch (const ConfigCannotRun& not_compiled) {
      throw ConfigCannotRun(std::string(not_carried.what()) + "; " + not_compiled.what());
    }
  }
}

}  // namespace ktune::library

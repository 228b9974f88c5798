// The NVRTC build pool behind VariantBuilder for the CUDA backend.
#include <memory>

#include "tuner/backends/compile_pool.hpp"
#include "tuner/backends/cuda/cuda_backend.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"

namespace ktune {

std::unique_ptr<VariantBuilder> make_cuda_variant_builder(const KernelFamily& family, const Problem& problem,
                                                          const std::string& arch, int threads, BuildEffort effort,
                                                          const std::vector<std::string>& launch_only) {
  auto compiler = std::make_shared<const NvrtcCompiler>(arch, NvrtcCompiler::default_cache_dir(),
                                                        effort == BuildEffort::fast_check);
  compiler->options(family, problem, Config{});  // InputError now for a precision the kernels cannot store
  return make_compile_pool(
      [&family, problem, compiler](const Config& config) {
        const CompiledVariant compiled = compiler->compile(family, problem, config);
        BuiltVariant built;
        built.ok = compiled.ok;
        built.log = compiled.log;
        built.build.binary = compiled.cubin_path.string();
        built.build.entry = compiled.entry;
        built.build.compile_ms = compiled.compile_ms;
        return built;
      },
      arch, threads, launch_only);
}

}  // namespace ktune

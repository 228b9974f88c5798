// The run-time compilers of the GPU backends (NVRTC for CUDA, hiprtc for HIP) as one: the options
// a variant is compiled with (the target's, then its defines, then a raw source's own), its cache
// key and binary in the cache, what the cache serves, timing and the log. A compiler adds only
// what is its own (tuner/backends/cuda/nvrtc_compiler.cpp, tuner/backends/hip/hiprtc_compiler.cpp):
// its target (architecture, options, the element types its kernels store) and the calls that turn
// one program into a binary. Needs no GPU, so every variant can be compile-checked on any machine.
//
//   const NvrtcCompiler compiler("sm_90a", default_binary_cache_dir());   // or HiprtcCompiler("gfx90a", ...)
//   CompiledVariant v = compiler.compile(family, problem, config);        // v.ok, v.binary_path, v.entry, v.log
//   auto builder = make_runtime_variant_builder(std::make_shared<const NvrtcCompiler>(...), family, problem,
//                                               threads, launch_only);   // the tuner's build pool
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/backends/gpu_source.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/core/config.hpp"
#include "tuner/measure/evaluation.hpp"

namespace ktune {

// The runtime API a GPU source is compiled for.
enum class GpuApi { cuda, hip };
const char* gpu_api_name(GpuApi api);  // "CUDA", "HIP"

struct CompiledVariant {
  bool ok = false;
  std::filesystem::path binary_path;  // in the cache directory
  std::string entry;                  // kernel name to look up in the module
  std::string log;                    // the compiler's log (the error text when !ok)
  double compile_ms = 0;              // 0 when served from the cache
  bool cached = false;                // served from the cache
};

// What sets one compiler apart, fixed when it is made.
struct CompilerTarget {
  GpuApi api = GpuApi::cuda;
  std::string arch;
  std::string identity;              // the compiler and its version, in every cache key
  std::vector<std::string> options;  // ahead of each variant's defines: architecture, optimization, standard
  std::vector<Precision> precisions; // the element types its kernels store
  std::string extension;             // of its binaries: ".cubin", ".ptx", ".hsaco"
  std::string binary_kind;           // what its binaries are called in messages: "CUBIN", "code object"
  // Held around every compile when the compiler fails with two compiles in flight; null otherwise.
  std::mutex* one_at_a_time = nullptr;
};

// One program, as a compiler's API takes it.
struct RuntimeProgram {
  const char* text;                  // the main file's
  const char* file;                  // its name, for the log
  std::vector<const char*> options;
  EmbeddedHeaders& headers;          // non-const: hiprtc takes the arrays as such
  const std::string& entry;          // the kernel's name, or a name expression to resolve
  bool name_expression;
};

// What the compiler made of a program.
struct ProgramOutput {
  std::string error;   // empty when it compiled; else what failed, in the compiler's words
  std::string log;     // the compiler's log, as it gave it
  std::string binary;  // the code, when it compiled
  std::string entry;   // the symbol a name expression resolved to
};

class RuntimeCompiler {
 public:
  virtual ~RuntimeCompiler() = default;

  // Thread-safe: a pool of threads may compile different variants at once.
  CompiledVariant compile(const KernelFamily& family, const Problem& problem, const Config& config) const;
  // The options a variant is compiled with: the target's, its defines (variant_defines), then,
  // for a source with raw_defines, the family's own options for this API. InputError for a
  // precision the kernels cannot store.
  std::vector<std::string> options(const KernelFamily& family, const Problem& problem, const Config& config) const;
  // Where the variant's binary lies in the cache: <family>-<hash>.<extension>, the hash over the
  // source hash, the compiler's identity, the entry and every option. InputError when the family
  // has no source for this API.
  std::filesystem::path binary_path(const KernelFamily& family, const Problem& problem, const Config& config) const;
  const std::string& arch() const { return target_.arch; }
  GpuApi api() const { return target_.api; }

  // The family's source for `api`; InputError when it has none.
  static const GpuSource& source(const KernelFamily& family, GpuApi api);
  // Hash of that source and the embedded headers it includes: the kernel source hash stored with
  // measurements.
  static std::string source_hash(const KernelFamily& family, GpuApi api);

 protected:
  // Creates the cache directory; InputError when it cannot.
  RuntimeCompiler(CompilerTarget target, std::filesystem::path cache_dir);

 private:
  // Compiles one program with the compiler's API: thread-safe, unless target.one_at_a_time is set.
  virtual ProgramOutput translate(const RuntimeProgram& program) const = 0;
  std::filesystem::path binary_path(const KernelFamily& family, const GpuSource& source,
                                    const std::vector<std::string>& options) const;

  CompilerTarget target_;
  std::filesystem::path cache_dir_;
};

// The tuner's pool of `threads` threads compiling with `compiler` (tuner/backends/compile_pool.hpp);
// InputError now for a precision the kernels cannot store.
std::unique_ptr<VariantBuilder> make_runtime_variant_builder(std::shared_ptr<const RuntimeCompiler> compiler,
                                                             const KernelFamily& family, const Problem& problem,
                                                             int threads, const std::vector<std::string>& launch_only);

// For a config the tuner did not build (its `build` names no binary): compiles it with `compiler`
// into `build` (binary and entry) and result.compile_ms. False, with result's outcome
// compile_error and the log as its message, when it does not compile.
bool compile_into(const RuntimeCompiler& compiler, const KernelFamily& family, const Problem& problem,
                  const Config& config, VariantBuild& build, EvaluationResult& result);

// The bytes of a compiled variant, for the module loader; std::runtime_error when it cannot be read.
std::string read_compiled_variant(const std::string& path);

}  // namespace ktune

// The kernel family contract. Everything about one operation lives in kernels/<family>/:
// its problem (named dims, tensors, FLOP and byte formulas, tolerance per precision), a float64
// CPU reference, and one implementation per backend. Backends and the tuner read a family only
// through this interface, by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/named_tensors.hpp"
#include "tuner/core/architecture_default.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"

namespace ktune {

class CpuKernel;

// A GPU kernel compiled at tune time (NVRTC for CUDA). The contract every such source follows:
//   - tunable parameters arrive as preprocessor defines KT_<PARAMETER NAME IN UPPER CASE>;
//   - the element type of the problem's precision is KT_T (float, __half, __nv_bfloat16);
//   - the kernel `entry` is extern "C" and takes the problem's tensors (pointers, in tensors()
//     order) followed by its dims (long long, in dims() order), then the config's tensor_maps()
//     (by value, 64-byte CUtensorMap each), then the workspace when the space declares one;
//   - launch geometry comes from the search space's "launch" expressions: grid_x/y/z,
//     block_x/y/z and shared_bytes.
//
// A kernel from outside ktune (a T1 spec's KernelFile, tuner/formats/t1/) gives its own `text` and asks
// for `raw_defines`: its parameters arrive as `-Dname=value` under their own names, the way
// Kernel Tuner passes them (after the family's source_defines()), its arguments follow
// kernel_arguments(), and its `entry` is a name expression (a plain __global__ function or a
// template instance such as "f<float>"), which the compiler resolves to the symbol it emits.
struct GpuSource {
  std::string_view file;   // the main file, e.g. "kernels/rmsnorm/rmsnorm.cu"
  std::string_view entry;  // the kernel's extern "C" name
  std::string_view text = {};  // the source itself when it is not embedded in ktune
  bool raw_defines = false;
  // The source compiles for AMD GPUs through hiprtc too: it uses only what
  // kernels/common/gpu_portable.cuh makes portable on the paths its HIP search space selects.
  bool portable = false;
};

// A Vulkan compute shader in GLSL, compiled to SPIR-V with glslc at build time (for every
// precision) and through glslang at tune time for configs with "compile_time" parameters. Its
// contract with the backend (bindings, push constants, specialization constants) is written at
// the top of kernels/common/vulkan_common.glsl.
struct VulkanShader {
  std::string_view file;  // e.g. "kernels/rmsnorm/rmsnorm.comp"
};

// One kernel argument in launch order, for kernels that do not take "tensors, then dims".
struct KernelArgument {
  int tensor = -1;                   // index into tensors(), or -1 for a scalar
  std::vector<unsigned char> bytes;  // a scalar's value as the kernel's parameter type holds it
};

// A tensor-memory-accelerator descriptor (CUtensorMap, Hopper's bulk tensor copies) that a
// kernel takes by value after its dims: a row-major 2-D view of one tensor, copied to shared
// memory in boxes of box_rows x box_cols elements, swizzled in 16-byte units within
// swizzle_bytes (0, 32, 64 or 128). Out-of-bounds elements of a box read as zero.
// The view may also be of the variant's workspace (launch.workspace_bytes), from byte
// workspace_offset (a multiple of 16): an operand the kernel itself writes first, such as ffn's
// hidden activation.
struct TensorMapSpec {
  static constexpr int kWorkspace = -1;
  int tensor;  // an index into tensors(), or kWorkspace
  std::int64_t rows, cols;
  int box_rows, box_cols;
  int swizzle_bytes;
  std::int64_t workspace_offset = 0;
};

struct DimSpec {
  std::string name;
  std::int64_t default_value;
  std::string help;
  std::int64_t min_value = 1;  // 0 for a dim that picks an option (a layout, an epilogue)
  // A config tuned at one value of this dim may be invalid at another (it is compiled into the
  // kernel: attention's head size and mask). Generated headers match such dims, and every dim
  // with min_value 0, exactly instead of taking the nearest tuned shape.
  bool exact = false;
};

// One tensor of a problem, in the order kernels receive them. Inputs come first.
struct TensorSpec {
  std::string name;
  std::int64_t elements;
  bool is_output;
  // Random inputs are drawn uniformly from [low, high] (never all zeros).
  double low = -1.0;
  double high = 1.0;
  // Stored in this precision instead of the problem's: statistics such as attention's
  // log-sum-exp stay fp32 whatever the precision of the data.
  std::optional<Precision> storage = std::nullopt;
  // An output whose initial contents the kernel reads (updated in place): uploaded like an input,
  // never poisoned, checked like an output, and restored before every launch so that every
  // sample computes the same thing.
  bool read_write = false;
  // Also copied into the module's __constant__ symbol of this name before the variant runs (a
  // T1 spec's MemType Constant, Kernel Tuner's cmem_args); empty for none.
  std::string constant_symbol = {};

  Precision precision(const Problem& problem) const { return storage.value_or(problem.precision); }
  std::int64_t bytes(const Problem& problem) const { return elements * element_bytes(precision(problem)); }
};

// A family whose work is other families' kernels run one after another (attention_block: a GEMM,
// split_heads, flash attention, merge_heads, a GEMM): each stage is a call of its family at its
// own problem, with the config the library chooses (tuned) for that problem. Its tensors are
// tensors of the composed family or intermediates the stages pass between them.
struct Composition {
  // Device memory of the stages' own: `elements` in the problem's precision unless `storage`;
  // `fill`, when not empty, its fixed contents (a GEMM's alpha and beta, attention's scale),
  // written once when the composition is prepared.
  struct Intermediate {
    std::string name;
    std::int64_t elements;
    std::optional<Precision> storage = std::nullopt;
    std::vector<double> fill = {};
  };
  struct Stage {
    std::string family;
    std::map<std::string, std::int64_t> dims;  // at the composed problem's precision
    // Each tensor of the stage's family: the composed family's tensor or an intermediate's name.
    std::vector<std::pair<std::string, std::string>> tensors;
  };
  std::vector<Intermediate> intermediates;
  std::vector<Stage> stages;
};

// Host copies of a problem's tensors in float64, indexed like tensors().
using HostTensors = std::vector<std::vector<double>>;

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;

  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<DimSpec> dims() const = 0;
  virtual std::vector<Precision> precisions() const = 0;
  virtual std::vector<TensorSpec> tensors(const Problem& problem) const = 0;
  virtual double flop_count(const Problem& problem) const = 0;
  // Each input read once plus each output written once, at the problem's precision.
  virtual double byte_count(const Problem& problem) const;
  // What a tune on a GPU takes when the command line names no precision or no shape: what GPUs
  // run this family in and at (an LLM's layers), where the family's own defaults suit the CPU.
  // nullopt / empty: the family's own on every backend.
  virtual std::optional<Precision> gpu_default_precision() const { return std::nullopt; }
  virtual std::map<std::string, std::int64_t> gpu_default_shape() const { return {}; }
  // True when speed is limited by memory bandwidth (decides L2 flushing and the roofline).
  virtual bool memory_bound() const { return true; }
  virtual double tolerance(Precision precision) const;

  // The names of tensors(problem), in order.
  std::vector<std::string> tensor_names(const Problem& problem) const;
  // `host` (indexed like tensors(problem)) read by name: named_tensors(problem, host).at("x").
  NamedTensors<std::vector<double>> named_tensors(const Problem& problem, HostTensors& host) const;

  // Reads the input tensors and writes the outputs, all in float64. An output element left NaN
  // is not checked (a reference too costly to compute in full checks a sample).
  virtual void reference(const Problem& problem, HostTensors& tensors) const = 0;
  // False when the family has no reference for the outputs of `problem` (a T1 spec with
  // verification off, or whose reference is not captured yet): variants then run unverified,
  // with error -1.
  virtual bool verifies(const Problem&) const { return true; }
  // What the outputs are checked against, in words, for the tune's output.
  virtual std::string verification(const Problem& problem) const {
    return verifies(problem) ? "the float64 CPU reference" : "none";
  }
  // Element-wise closeness instead of the relative L2 error: an output passes when every element
  // has |got - expected| <= atol + rtol * |expected| (numpy.allclose); the error recorded is the
  // largest |got - expected| / (atol + rtol * |expected|), passing at 1 or below.
  struct Closeness {
    double atol;
    double rtol;
  };
  virtual std::optional<Closeness> closeness() const { return std::nullopt; }
  // True when the reference of `problem` is the output of a trusted config of the space that is
  // still to be captured (a T1 spec without ReferenceArguments): the tune session first runs the
  // default config (else the first that runs) with MeasureSettings::capture_reference, the backend
  // hands its outputs to keep_reference, and from then on verifies(problem) holds.
  virtual bool reference_from_config(const Problem&) const { return false; }
  // The raw outputs (device storage, tensors() order) of the config trusted as the reference.
  virtual void keep_reference(const Problem&, const std::vector<std::string_view>&) const {}
  // Forgets a kept reference (its config did not finish its measurement).
  virtual void drop_reference(const Problem&) const {}
  // Changes when the reference of `problem` changes (captured): a backend keeping a problem
  // loaded prepares it again.
  virtual std::string reference_revision(const Problem&) const { return {}; }
  // For a source with raw_defines: the defines (name, value) it is compiled with ahead of the
  // config's own; by default the config's parameters.
  virtual std::vector<std::pair<std::string, std::string>> source_defines(const Problem& problem,
                                                                          const Config& config) const;
  // How the launch geometry is derived, in words, when it is not the search space's own
  // expressions (a T1 spec: Kernel Tuner's GridDiv rule or GlobalSize); empty otherwise.
  virtual std::string launch_rule() const { return {}; }
  // Options given to NVRTC after ktune's own, for a source with raw_defines.
  virtual std::vector<std::string> cuda_compiler_options() const { return {}; }
  // Options given to hiprtc after ktune's own, likewise.
  virtual std::vector<std::string> hip_compiler_options() const { return {}; }
  // The kernel's arguments in order; empty (the default) for the contract above.
  virtual std::vector<KernelArgument> kernel_arguments(const Problem&) const { return {}; }

  // Untuned starting points per kind of GPU, for the generated header; none by default.
  virtual std::vector<ArchitectureDefault> architecture_defaults() const { return {}; }

  // TMA descriptors the CUDA kernel of `config` takes after its dims; none by default.
  virtual std::vector<TensorMapSpec> tensor_maps(const Problem&, const Config&) const { return {}; }

  // The stages of a family composed of others' kernels (struct Composition); nullopt for a family
  // with kernels of its own.
  virtual std::optional<Composition> composition(const Problem&) const { return std::nullopt; }
  // Whether composition() has a value (at every problem): the library asks at every call, and
  // building the stages only to see that they exist would cost each call microseconds.
  virtual bool composed() const { return false; }

  // The CPU implementation, or nullptr when the family has none.
  virtual const CpuKernel* cpu_kernel() const { return nullptr; }
  // The CUDA source, or nullptr when the family has none.
  virtual const GpuSource* cuda_source() const { return nullptr; }
  // The Vulkan shader, or nullptr when the family has none.
  virtual const VulkanShader* vulkan_shader() const { return nullptr; }
  // The HIP source: the CUDA source when it is portable (one source for both), else nullptr.
  const GpuSource* hip_source() const {
    const GpuSource* source = cuda_source();
    return source && source->portable ? source : nullptr;
  }

  // Builds a problem from "dim=value" overrides on top of the defaults; InputError names an
  // unknown dim (listing the valid ones) or a value below 1.
  Problem make_problem(const std::map<std::string, std::int64_t>& overrides, Precision precision) const;
  // Random inputs from `seed`, outputs zeroed.
  virtual HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const;
};

// The families of kernels/CMakeLists.txt, in its order (generated: ktune/families.cpp); the
// test-only ones (kernels/testing/) when `with_test_families`.
std::vector<const KernelFamily*> compiled_families(bool with_test_families);
// All families compiled into this binary, then those registered at run time. Test-only families
// (kernels/testing/) are included only when the environment variable KTUNE_ENABLE_TEST_FAMILIES=1
// is set.
std::vector<const KernelFamily*> all_families();
// Makes a family defined at run time (a T1 spec's kernel: tuner/formats/t1/) known to
// all_families() and find_family(), after the built-in ones. The caller keeps it alive until it
// unregisters it.
void register_runtime_family(const KernelFamily* family);
void unregister_runtime_family(const KernelFamily* family);
// InputError listing the valid names when `name` is unknown.
const KernelFamily& find_family(std::string_view name);
// The families `ktune tune` tunes when no --kernel is given.
std::vector<std::string> default_family_names();
// The families whose tables a call of `family` reads: its own name, or for a composed family
// (KernelFamily::composition) its stages' families at its default dims, each once, in order.
std::vector<std::string> table_families(const KernelFamily& family);

}  // namespace ktune

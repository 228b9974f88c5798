// ktune::kernels: the kernels ktune tunes, as a library a project links and calls.
//
//   #include <ktune/kernels.hpp>
//   namespace kk = ktune::kernels;
//
//   kk::Context context;                        // CUDA, else HIP, else Vulkan, else the CPU
//   void* x = context.allocate(bytes);          // device memory (host memory on the CPU)
//   ...
//   context.run("rmsnorm", {{"x", x}, {"weight", w}, {"y", y}},
//               {{"rows", 4096}, {"cols", 4096}}, kk::Precision::bf16, stream);
//
// Each call takes the family's tensors by name (device pointers; on the CPU host pointers; on
// Vulkan what Context::allocate returned), its dims by name, a precision and, on CUDA and HIP,
// a stream (nullptr: the default stream). Its config comes from the tables ktune exported for
// this kind of device, compiled into the library (device -> architecture -> vendor -> the
// family's default, nearest tuned shape); a tuned config that cannot run this shape or device
// falls back to one that can, so a call never fails because of tuning. On CUDA and HIP a shape
// no compiled-in binary covers runs a binary compiled at its first call (NVRTC or hiprtc, where
// the machine has them; KTUNE_LIBRARY_COMPILE=0: never). families() lists every
// family with its tensors, dims and precisions.
//
// Errors are ktune::kernels::Error: its code says what kind (a bad argument, no device, a
// shape the family cannot take, a failure of the backend) and its message names the argument.
// ktune/kernels.h is the same library as a plain C interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::kernels {

enum class Backend { cpu, cuda, hip, vulkan };
// Element types of a call's tensors (statistics such as attention's log-sum-exp stay fp32).
enum class Precision { fp32, tf32, fp16, bf16, fp8_e4m3 };

std::string_view to_string(Backend backend);
std::string_view to_string(Precision precision);

enum class ErrorCode {
  bad_argument = 2,     // an unknown family, tensor, dim or precision; a null or missing buffer
  no_device = 3,        // the backend asked for is not built or has no device
  unsupported = 4,      // a shape, precision or backend the family cannot run
  backend_failure = 5,  // the driver failed (out of memory, a lost device, ...)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// One tensor of a call: the family's name for it and its memory.
struct TensorArgument {
  std::string_view name;
  const void* data;
};

// One dim of a call, e.g. {"rows", 4096}.
struct DimArgument {
  std::string_view name;
  std::int64_t value;
};

struct TensorInfo {
  std::string name;
  bool is_output;
  bool fp32_storage;  // stored as fp32 whatever the call's precision (a statistic)
};

struct DimInfo {
  std::string name;
  std::int64_t default_value;
  std::int64_t min_value;  // 0 for a dim that picks an option (a layout, an epilogue)
  std::string help;
};

struct FamilyInfo {
  std::string name;
  std::string summary;
  std::vector<TensorInfo> tensors;  // inputs first, then outputs
  std::vector<DimInfo> dims;
  std::vector<Precision> precisions;
  std::vector<Backend> backends;  // those this build of the library runs it on
};

// Every family of this library.
std::vector<FamilyInfo> families();

// One stage of a composed family's call (attention_block runs gemm, split_heads, flash_attention,
// merge_heads, gemm): the family it calls and that call's dims, at the composed call's precision.
struct StageInfo {
  std::string family;
  std::vector<std::pair<std::string, std::int64_t>> dims;
};
// The stages a call of `family` at these dims runs, in order; empty for a family with kernels of
// its own. A composed call takes each stage's config as a call of that stage would (tables, or
// Context::use_config on the stage's family and dims).
std::vector<StageInfo> stages(std::string_view family, const std::vector<DimArgument>& dims, Precision precision);

// The config a call runs with, and where it came from.
struct ConfigChoice {
  std::string source;         // "tuned", "default" (untuned: the space's first starting point that runs
                              // here, else its default) or "fallback" (the tuned config could not run)
  std::string level;          // which table level answered: device, architecture, vendor, default_config
  std::string config;         // "block_threads=256 vector_bytes=16 ..."
  std::string config_json;    // the same as a JSON object, the form use_config() takes
  std::int64_t measurement_id;  // of the tuned entry in its database; 0 for none
  std::string tuned_shape;    // "rows=4096 cols=4096" of that entry; empty for none
};

// One device of one backend. A context may be used from several threads: CPU and Vulkan calls
// take turns, CUDA calls go to the streams they name.
class Context {
 public:
  // The first backend with a device: CUDA, then HIP, then Vulkan on a GPU, then the CPU
  // (lavapipe, Mesa's CPU Vulkan driver, only when asked for by Context(Backend::vulkan)).
  Context();
  // That backend's device `device`; Error(no_device) when it is not built or has none.
  explicit Context(Backend backend, int device = 0);
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The backends this build can use on this machine, in the order Context() tries them (Vulkan
  // on lavapipe included, which Context() passes by).
  static std::vector<Backend> available();

  Backend backend() const;
  std::string device_name() const;
  std::string architecture() const;  // "sm_90", "x86_64-avx512", "lavapipe", ...

  // Memory for a call's tensors. On Vulkan the pointer is a handle to pass to run() and the
  // copies, not an address (host-visible memory, so the copies are plain memory copies); run()
  // and the copies refuse a pointer that is not such a handle or is too small
  // (Error(bad_argument) naming the tensor). Freed by release() or when the context goes.
  void* allocate(std::size_t bytes);
  void release(void* memory);
  void copy_to_device(void* device, const void* host, std::size_t bytes);
  void copy_to_host(void* host, const void* device, std::size_t bytes);
  // Waits for every call issued so far.
  void synchronize();

  // Bytes of one tensor of `family` at these dims and precision.
  std::size_t tensor_bytes(std::string_view family, std::string_view tensor, std::initializer_list<DimArgument> dims,
                           Precision precision) const;
  std::size_t tensor_bytes(std::string_view family, std::string_view tensor, const std::vector<DimArgument>& dims,
                           Precision precision) const;

  // Runs `family` (see the header comment). Every size dim must be given; an option dim left out
  // (min_value 0: a layout, an epilogue) takes the family's default. On CUDA the call is
  // asynchronous on `stream`; on Vulkan and the CPU it has finished when it
  // returns (Vulkan submits the dispatch and waits for it; `stream` is ignored). Vulkan runs the
  // SPIR-V compiled when the library was built: configs that need a shader compiled for them
  // (GEMM's cooperative-matrix path) fall back to one that does not. On Vulkan each tensor of a
  // call is its own allocation (no tensor may share another's).
  void run(std::string_view family, std::initializer_list<TensorArgument> tensors,
           std::initializer_list<DimArgument> dims, Precision precision, void* stream = nullptr);
  void run(std::string_view family, const std::vector<TensorArgument>& tensors, const std::vector<DimArgument>& dims,
           Precision precision, void* stream = nullptr);

  // The config run() takes for these dims and precision on this device.
  ConfigChoice choose(std::string_view family, const std::vector<DimArgument>& dims, Precision precision);

  // From now on run() takes `config` for these dims and precision on this context, in place of
  // the compiled tables' choice: a JSON object of the family's parameters for this backend, as
  // `ktune export` writes an entry's "config" (e.g. a config tuned at run time into a user's
  // database). Checked now: Error(bad_argument) names a parameter that is missing, unknown or
  // not one of its values; Error(unsupported) says which constraint fails for this shape or why
  // the backend refuses it. On CUDA and HIP a config the library carries no binary of is compiled
  // now, with NVRTC or hiprtc, into the binary cache a tune uses (a later process loads it from
  // there; KTUNE_LIBRARY_COMPILE=0 turns this off, and then such a config is refused as
  // unsupported). Returns the choice, with source "given".
  ConfigChoice use_config(std::string_view family, const std::vector<DimArgument>& dims, Precision precision,
                          std::string_view config);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune::kernels

// A kernel family made from a T1 spec (the auto-tuning community's JSON input, as Kernel Tuner,
// KTT and BAT read it): `ktune tune --t1 SPEC` tunes the spec's KernelFile with its arguments,
// fill types, launch sizes and reference outputs, through the same tune loop, worker process,
// database and strategies as ktune's own families.
//
// What is read from KernelSpecification:
//   Language        CUDA or HIP: the backend a tune uses unless --backend says otherwise (the
//                   source is compiled by NVRTC or hiprtc, which both take CUDA-style kernels)
//   KernelFile      the source, relative to the spec
//   KernelName      the entry point as a name expression, as Kernel Tuner 1.4+ compiles it: a
//                   plain __global__ function (C++ linkage), an extern "C" one, or a template
//                   instance such as "transpose<float, 32>" (NVRTC's and hiprtc's
//                   AddNameExpression and GetLoweredName find its symbol)
//   CompilerOptions passed to NVRTC or hiprtc after ktune's own
//   ProblemSize     a number or a list; dims problem_size_0, problem_size_1, ... of the problem
//   GridDivX/Y/Z, LocalSize, GlobalSize, GlobalSizeType, SharedMemory: the launch, derived as
//                   Kernel Tuner derives it (t1_geometry in t1_space.hpp)
//   Arguments       in the kernel's order:
//     MemoryType Vector: Type int8..uint64, bool, half, float or double, each vector its own;
//       Size an expression over ProblemSize[i] and the parameters (a parameter reads as its
//       largest value, max(p) and min(p) as its largest and smallest); FillType Constant
//       (FillValue), Random (uniform in [0, FillValue], whole numbers for integer types, from
//       RandomSeed or the argument's position: never from the tune's seed) or BinaryRaw
//       (DataSource, raw little-endian elements of Type); AccessType ReadOnly is an input,
//       WriteOnly (or "Output": 1) an output, ReadWrite both: filled like an input, checked like
//       an output, and restored to its initial data before every launch so every sample computes
//       the same thing. "MemType": "Constant" also copies the vector into the module's
//       __constant__ symbol of the argument's Name before the variant runs (Kernel Tuner's
//       cmem_args); the kernel still receives it as a pointer in its position.
//     MemoryType Scalar: Type int8..uint64, bool, half, float or double; FillValue is the value.
//   ReferenceArguments: per output (TargetName), its expected values: FillType Constant or
//     BinaryRaw. With none, the output of the spec's default config (else of the first config
//     that runs) is kept as the reference of the others: the tune session captures it first
//     (KernelFamily::reference_from_config). Outputs match when, element by element,
//     |got - expected| <= atol + rtol * |expected| (numpy.allclose, Kernel Tuner's check;
//     T1Options). A reference for some outputs but not others is refused.
//
// Parameters reach the kernel as `-Dname=value` under their own names, after grid_size_x/y/z,
// block_size_x/y/z (the launch) and kernel_tuner=1, as Kernel Tuner defines them.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "tuner/formats/t1/t1_space.hpp"

namespace ktune {

// How a T1 kernel's outputs are verified (ktune tune --no-verify, --atol, --rtol).
struct T1Options {
  bool verify = true;
  double atol = 1e-6;  // Kernel Tuner's default atol
  double rtol = 1e-5;  // numpy.allclose's default rtol, which Kernel Tuner's check uses
};

// Reads the spec and its kernel file. InputError naming the file and member for anything
// malformed or unsupported.
std::unique_ptr<KernelFamily> load_t1_kernel(const std::filesystem::path& spec, const T1Options& options = {});

// Makes the spec's kernel a family that find_family() and all_families() know
// (register_runtime_family), in this process and, through the environment variable
// KTUNE_T1_SPEC, in the worker processes it starts. One T1 family at a time: it replaces the one
// registered before. Returns the family.
const KernelFamily& register_t1_kernel(const std::filesystem::path& spec, const T1Options& options = {});
// The launch geometry rule of a T1 family; nullptr for any other family.
const T1Geometry* t1_geometry_of(const KernelFamily& family);
// "hip" for a spec whose Language is HIP, else "cuda".
std::string t1_default_backend(const KernelFamily& family);
// In a worker process: registers the family of the spec named by KTUNE_T1_SPEC, once. Returns
// the registered T1 family, or nullptr when there is none.
const KernelFamily* register_t1_kernel_from_environment();

}  // namespace ktune

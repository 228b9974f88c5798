// A kernel family made from a T1 spec (the auto-tuning community's JSON input, as Kernel Tuner,
// KTT and BAT read it): `ktune tune --t1 SPEC` tunes the spec's KernelFile with its arguments,
// fill types, launch sizes and reference outputs, through the same tune loop, worker process,
// database and strategies as ktune's own families.
//
// What is read from KernelSpecification:
//   Language        CUDA or HIP: the backend a tune uses unless --backend says otherwise (the
//                   source is compiled by NVRTC or hiprtc, which both take CUDA-style kernels)
//   KernelFile      the source, relative to the spec; the kernel must be extern "C"
//   KernelName      the entry point
//   CompilerOptions passed to NVRTC or hiprtc after ktune's own
//   ProblemSize     a number or a list; dims problem_size_0, problem_size_1, ... of the problem
//   LocalSize, GlobalSize, GlobalSizeType, SharedMemory: the launch (t1_space.hpp)
//   Arguments       in the kernel's order:
//     MemoryType Vector: Type float (fp32) or half (fp16), every vector the same; Size an
//       expression over ProblemSize[i] and the parameters (a parameter reads as its largest
//       value, max(p) and min(p) as its largest and smallest); FillType Constant (FillValue),
//       Random (uniform in [0, FillValue], RandomSeed or the tune's seed) or BinaryRaw
//       (DataSource, raw little-endian elements of Type); AccessType ReadOnly is an input,
//       WriteOnly (or "Output": 1) an output. ReadWrite vectors are refused: the verification
//       poisons outputs before each run, so a kernel may not read them.
//     MemoryType Scalar: Type int8..uint64, float or double; FillValue is the value.
//   ReferenceArguments: per output (TargetName), its expected values: FillType Constant or
//     BinaryRaw. With none, variants run unverified (error -1); a reference for some outputs
//     but not others is refused.
//
// Parameters reach the kernel as `-Dname=value` under their own names (Kernel Tuner's way).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"

namespace ktune {

// Reads the spec and its kernel file. InputError naming the file and member for anything
// malformed or unsupported.
std::unique_ptr<KernelFamily> load_t1_kernel(const std::filesystem::path& spec);

// Makes the spec's kernel a family that find_family() and all_families() know
// (register_runtime_family), in this process and, through the environment variable
// KTUNE_T1_SPEC, in the worker processes it starts. One T1 family at a time: it replaces the one
// registered before. Returns the family.
const KernelFamily& register_t1_kernel(const std::filesystem::path& spec);
// "hip" for a spec whose Language is HIP, else "cuda".
std::string t1_default_backend(const KernelFamily& family);
// In a worker process: registers the family of the spec named by KTUNE_T1_SPEC, once. Returns
// the registered T1 family, or nullptr when there is none.
const KernelFamily* register_t1_kernel_from_environment();

}  // namespace ktune

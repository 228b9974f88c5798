// What the run-time compilers of the GPU backends (NVRTC for CUDA, hiprtc for HIP) share: the
// kernel sources embedded in ktune, the defines a variant is compiled with, the hash that keys
// measurements and cached binaries, and the cache directory. One kernel source serves both
// vendors (kernels/common/gpu_portable.cuh), so both compilers see the same files and defines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/family.hpp"
#include "tuner/core/config.hpp"

namespace ktune {

// FNV-1a 64: stable across platforms and builds, for cache keys and source hashes.
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull);
std::string hex16(std::uint64_t value);

// An embedded file's text by its path in the source tree ("kernels/common/output_check.cuh");
// std::runtime_error when this build lacks it.
std::string_view embedded_source_text(std::string_view path);
// The main file's text: embedded in ktune, or carried by the source (a T1 spec's kernel).
// std::runtime_error when an embedded file is missing from this build.
std::string gpu_main_text(const GpuSource& source);
// The embedded files `main` reads: itself and, transitively, every embedded file named by one of
// its `#include "..."` lines (conditional ones too), in path order.
std::set<std::string_view> embedded_includes(std::string_view main);
// Hash of the source and every embedded header it includes, directly or not (an edited header
// must never let an old binary or measurement be reused; a header it does not include, such as
// another family's, leaves the hash alone).
std::string gpu_source_hash(const GpuSource& source);

// The dims of `family` that its GPU source (or an embedded file it includes) reads as
// KT_DIM_<NAME>: compiled into each variant, so a binary runs only problems with these values
// (the row families' cols, GEMM's epilogue and layout, attention's head size and mask).
std::vector<std::string> compile_time_dims(const KernelFamily& family, const GpuSource& source);

// Every embedded file as a (name, text) header, so `#include "kernels/common/..."` resolves
// inside the run-time compilers.
struct EmbeddedHeaders {
  std::vector<const char*> names;
  std::vector<const char*> texts;
  EmbeddedHeaders();

 private:
  std::vector<std::string> name_storage_, text_storage_;  // null-terminated copies
};

// The defines of a variant: -DKT_T=<element type>, -DKT_PRECISION_<P>, -DKT_DIM_<DIM>=<value>
// and -DKT_<PARAM>=<value> (string values become KT_<PARAM>_<value>); a source with
// raw_defines gets each parameter under its own name instead. InputError for a precision the
// kernels cannot store (`supported` lists those of the backend).
std::vector<std::string> variant_defines(const KernelFamily& family, const Problem& problem, const Config& config,
                                         const std::vector<Precision>& supported, const std::string& backend);

// A source with raw_defines names its entry by a name expression ("f", "f<float, 4>"): the
// compiler resolves it to the symbol it emits (NVRTC's and hiprtc's GetLoweredName), which is
// kept beside the cached binary in <binary>.entry. These read and write that file; the name is
// written before the binary, so a binary in the cache always has its name beside it.
std::optional<std::string> cached_entry_name(const std::filesystem::path& binary);
void keep_entry_name(const std::filesystem::path& binary, const std::string& lowered);

// $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else ~/.cache/ktune, else a private
// ktune-cache-<uid> folder in the temporary directory (InputError when that is not private).
std::filesystem::path default_binary_cache_dir();
// Writes `bytes` under a unique temporary name and renames it into place, so concurrent
// compiles never see half a file.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace ktune

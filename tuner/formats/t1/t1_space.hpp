// Reads the search space of a T1 spec (the auto-tuning community's JSON input format used by
// Kernel Tuner, KTT and BAT): ConfigurationSpace.TuningParameters and Conditions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tuner/core/search_space.hpp"

namespace ktune {

// Parameter `Values` may be a JSON array or a string holding a Python list expression
// ("[1, 2, 4]", "list(range(1, 11))", "[2**i for i in range(0, 6)]", sums of lists; see
// value_list.hpp). Conditions are parsed with the expression language as they are.
//
// When the spec has a KernelSpecification, the space also gets its launch geometry (t1_geometry):
// Kernel Tuner's GridDiv rule when the spec gives GridDivX/Y/Z, else GlobalSize and LocalSize.
// The family is the benchmark's name and the backend the Language in lower case ("cuda").
SearchSpace load_t1_space(const std::filesystem::path& file);
// The spec's JSON; InputError naming the file when it cannot be read or is not JSON.
nlohmann::json read_t1_json(const std::filesystem::path& file);
// The same from parsed JSON; `where` names the source in messages.
SearchSpace t1_space_from_json(const nlohmann::json& t1, const std::string& where);

// How a spec's launch geometry is derived.
enum class T1GeometryRule {
  none,         // no GridDiv and no LocalSize: a space without a launch
  grid_div,     // Kernel Tuner's tune_kernel_T1: grid from ProblemSize / GridDiv, block from block_size_x/y/z
  global_size,  // GlobalSize and LocalSize as written (GlobalSizeType CUDA: blocks; OpenCL: threads)
};
std::string_view to_string(T1GeometryRule rule);  // "GridDiv", "GlobalSize", "none"

struct T1Geometry {
  T1GeometryRule rule = T1GeometryRule::none;
  std::string description;  // the rule in words, for the tune's output
  // Launch expressions (grid_x/y/z, block_x/y/z, shared_bytes) over the parameters and the dims
  // problem_size_0, problem_size_1, ...
  nlohmann::json launch = nlohmann::json::object();
};

// The launch geometry of a spec. With GridDivX/Y/Z (any of them non-empty), as Kernel Tuner's
// tune_kernel_T1 launches: block = the parameters block_size_x/y/z (256, 1, 1 for those the space
// lacks); grid axis i = ceil(ProblemSize[i] / product of GridDiv<axis>), a missing GridDiv
// dividing by that axis's block size parameter (or 1); GlobalSize and LocalSize are not read.
// Without GridDiv: block = LocalSize, grid = GlobalSize, in blocks when GlobalSizeType is "CUDA",
// else in threads (OpenCL's NDRange: divided by the block, rounded up). shared_bytes from
// SharedMemory. InputError naming the member for a malformed one.
T1Geometry t1_geometry(const nlohmann::json& t1, const std::string& where);

// General.BenchmarkName, else KernelSpecification.KernelName, else "t1".
std::string t1_benchmark_name(const nlohmann::json& t1);
// KernelSpecification.ProblemSize as a list (a single number is a list of one; none is empty).
std::vector<std::int64_t> t1_problem_size(const nlohmann::json& t1, const std::string& where);
// `text` with every ProblemSize[i] replaced by its value; InputError for an index past the list.
std::string substitute_problem_size(const std::string& text, const std::vector<std::int64_t>& sizes,
                                    const std::string& where);
// `text` with every ProblemSize[i] replaced by the dim name problem_size_i; InputError for an index
// of `count` or more.
std::string problem_size_names(const std::string& text, std::size_t count, const std::string& where);

}  // namespace ktune

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
// When the spec has a KernelSpecification, the space also gets its launch geometry: block_x/y/z
// from LocalSize; grid_x/y/z from GlobalSize, which counts blocks when GlobalSizeType is "CUDA"
// and threads otherwise (OpenCL's NDRange, divided by the block and rounded up); shared_bytes
// from SharedMemory. ProblemSize[i] in these expressions reads the spec's ProblemSize. The
// family is the benchmark's name and the backend the Language in lower case ("cuda").
SearchSpace load_t1_space(const std::filesystem::path& file);
// The spec's JSON; InputError naming the file when it cannot be read or is not JSON.
nlohmann::json read_t1_json(const std::filesystem::path& file);
// The same from parsed JSON; `where` names the source in messages.
SearchSpace t1_space_from_json(const nlohmann::json& t1, const std::string& where);

// General.BenchmarkName, else KernelSpecification.KernelName, else "t1".
std::string t1_benchmark_name(const nlohmann::json& t1);
// KernelSpecification.ProblemSize as a list (a single number is a list of one; none is empty).
std::vector<std::int64_t> t1_problem_size(const nlohmann::json& t1, const std::string& where);
// `text` with every ProblemSize[i] replaced by its value; InputError for an index past the list.
std::string substitute_problem_size(const std::string& text, const std::vector<std::int64_t>& sizes,
                                    const std::string& where);

}  // namespace ktune

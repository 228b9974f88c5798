// Reads the search space of a T1 spec (the auto-tuning community's JSON input format used by
// Kernel Tuner, KTT and BAT): ConfigurationSpace.TuningParameters and Conditions.
#pragma once

#include <filesystem>

#include "tuner/core/search_space.hpp"

namespace ktune {

// Parameter `Values` may be a JSON array or a string holding a Python list expression
// ("[1, 2, 4]", "list(range(1, 11))", "[2**i for i in range(0, 6)]", sums of lists; see
// value_list.hpp). Conditions are parsed with the expression language as they are.
SearchSpace load_t1_space(const std::filesystem::path& file);
// The same from parsed JSON; `where` names the source in messages.
SearchSpace t1_space_from_json(const nlohmann::json& t1, const std::string& where);

}  // namespace ktune

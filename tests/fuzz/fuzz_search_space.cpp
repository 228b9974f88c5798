// libFuzzer target: the search-space reader (search_spaces/*.json) and enumeration.
// Input: a JSON document. Bad input must end in InputError; anything else that escapes, and
// every sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;  // not JSON: the file reader reports that before this point
  try {
    const ktune::SearchSpace space = ktune::SearchSpace::from_json(json, "fuzz.json");
    // Enumerate small spaces only: the fuzzer looks for crashes, not for slow products.
    double product = 1;
    for (const auto& parameter : space.parameters()) product *= static_cast<double>(parameter.values.size());
    if (product > 20000) return 0;
    const ktune::SpaceContext context{{"rows", ktune::Value{std::int64_t{7}}},
                                      {"cols", ktune::Value{std::int64_t{1001}}},
                                      {"element_bytes", ktune::Value{std::int64_t{2}}},
                                      {"max_threads_per_block", ktune::Value{std::int64_t{1024}}},
                                      {"sm_count", ktune::Value{std::int64_t{132}}}};
    const ktune::ValidConfigs valid = space.enumerate(context);
    for (std::size_t i = 0; i < valid.size() && i < 64; ++i) (void)space.launch(valid.config(i), context);
  } catch (const ktune::KtuneError&) {
    // bad input, reported as such
  }
  return 0;
}

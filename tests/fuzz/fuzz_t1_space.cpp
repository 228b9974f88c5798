// libFuzzer target: the T1 reader (Kernel Tuner / KTT / BAT specs) and enumeration.
// Input: a JSON document. Bad input must end in InputError; anything else that escapes, and
// every sanitizer report, is a bug.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/t1_space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;  // not JSON: load_t1_space reports that before this point
  try {
    const ktune::SearchSpace space = ktune::t1_space_from_json(json, "fuzz.json");
    double product = 1;
    for (const auto& parameter : space.parameters()) product *= static_cast<double>(parameter.values.size());
    if (product > 20000) return 0;
    (void)space.enumerate({});
  } catch (const ktune::KtuneError&) {
    // bad input, reported as such
  }
  return 0;
}

// libFuzzer target: the readers of Kernel Tuner's files, the cache and T4 results (both JSON,
// plain or gzip-compressed), and their writers.
// Input: any bytes. Bad input must end in InputError; anything else that escapes, and every
// sanitizer report, is a bug. What was read must write out as text that reads back to the same
// text (the writer's output is a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tuner/core/errors.hpp"
#include "tuner/formats/kernel_tuner_cache.hpp"
#include "tuner/formats/t4_results.hpp"

namespace {

// Far below the library's 1 GiB: enough for any input libFuzzer makes, and an inflated input
// stays inside the fuzzer's memory limit.
constexpr std::size_t kFuzzMaxBytes = std::size_t{64} << 20;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_kernel_tuner_cache: %s\n", what);
    std::abort();
  }
}

void check_cache(std::string_view bytes) {
  ktune::KernelTunerCache cache;
  try {
    cache = ktune::read_kernel_tuner_cache(bytes, "fuzz.json", kFuzzMaxBytes);
  } catch (const ktune::InputError&) {
    return;  // bad input, reported as such
  }
  const std::string text = ktune::kernel_tuner_cache_text(cache);
  const ktune::KernelTunerCache again = ktune::read_kernel_tuner_cache(text, "written.json", kFuzzMaxBytes);
  require(!again.recovery, "a written cache reads back as an interrupted one");
  require(again.records.size() == cache.records.size(), "a written cache reads back with a different record count");
  require(ktune::kernel_tuner_cache_text(again) == text, "a written cache does not read back to the same text");
  try {
    const std::string t4_text = ktune::t4_results_text(ktune::t4_from_kernel_tuner_cache(cache));
    (void)ktune::read_t4_results(t4_text, "converted_T4.json", kFuzzMaxBytes);
  } catch (const ktune::InputError&) {
    // a cache value T4 cannot hold (an integer beyond int64 among the timings)
  }
}

void check_t4(std::string_view bytes) {
  ktune::T4Results results;
  try {
    results = ktune::read_t4_results(bytes, "fuzz_T4.json", kFuzzMaxBytes);
  } catch (const ktune::InputError&) {
    return;
  }
  const std::string text = ktune::t4_results_text(results);
  const ktune::T4Results again = ktune::read_t4_results(text, "written_T4.json", kFuzzMaxBytes);
  require(ktune::t4_results_text(again) == text, "written T4 results do not read back to the same text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_cache(bytes);
  check_t4(bytes);
  return 0;
}

// libFuzzer target: the Google Benchmark JSON reader of `ktune compare`, and the comparison of
// what it read. Input: any bytes, taken as the file's text. Bad input must end in InputError
// with a message that is valid UTF-8 (it may be printed inside a JSON error document);
// anything else that escapes, a broken invariant, and every sanitizer report, is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tuner/bench/benchmark_json.hpp"
#include "tuner/bench/compare.hpp"
#include "tuner/bench/mann_whitney.hpp"
#include "tuner/core/errors.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

void check_invariants(const ktune::BenchmarkFile& file) {
  std::set<std::string> names;
  for (const ktune::BenchmarkSamples& b : file.benchmarks) {
    require(!b.name.empty() && names.insert(b.name).second);
    require(!b.real_time_ns.empty() || !b.error_message.empty());
    for (double ns : b.real_time_ns) require(std::isfinite(ns) && ns >= 0);
  }
  // A file compared with itself has no regression and no improvement.
  const ktune::ComparisonReport report = ktune::compare_benchmarks(file, file, {});
  require(report.count(ktune::Verdict::same) == report.pairs.size());
  require(report.only_in_new.empty() && report.only_in_base.empty());
  // The test between neighbouring benchmarks gives a probability.
  for (std::size_t i = 1; i < file.benchmarks.size(); ++i) {
    const double p = ktune::mann_whitney_u(file.benchmarks[i - 1].real_time_ns, file.benchmarks[i].real_time_ns).p_value;
    require(p >= 0 && p <= 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_invariants(ktune::parse_benchmark_json(text, "fuzz.json"));
  } catch (const ktune::InputError& e) {
    (void)nlohmann::json(e.what()).dump();  // throws (and so fails) on invalid UTF-8
  }
  return 0;
}

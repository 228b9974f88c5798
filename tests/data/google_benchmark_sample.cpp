// The program that wrote google_benchmark_1.7.1.json, the sample of real Google Benchmark output
// read by tests/unit/test_benchmark_json.cpp. It is not built with ktune; regenerate with
//   g++ -O2 google_benchmark_sample.cpp -lbenchmark -lpthread -o sample
//   ./sample --benchmark_repetitions=3 --benchmark_min_time=0.01 --benchmark_out=google_benchmark_1.7.1.json
// (Debian 12, libbenchmark-dev 1.7.1). It covers repetitions with their aggregates, a
// benchmark that reports an error, and a complexity fit (BigO and RMS entries).
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

static void BM_Accumulate(benchmark::State& state) {
  std::vector<float> data(static_cast<std::size_t>(state.range(0)), 1.0f);
  for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(data.begin(), data.end(), 0.0f));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_Accumulate)->Arg(256)->Arg(4096)->Complexity(benchmark::oN);

static void BM_Copy(benchmark::State& state) {
  std::vector<char> from(static_cast<std::size_t>(state.range(0)), 'x'), to(from.size());
  for (auto _ : state) {
    std::copy(from.begin(), from.end(), to.begin());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Copy)->Arg(1 << 16)->Unit(benchmark::kMicrosecond);

static void BM_NeedsADevice(benchmark::State& state) {
  state.SkipWithError("no device");
  for (auto _ : state) {
  }
}
BENCHMARK(BM_NeedsADevice);

BENCHMARK_MAIN();

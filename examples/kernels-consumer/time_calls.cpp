// Times calls of ktune::kernels on CUDA the way `ktune tune` times a config: before each call
// the L2 cache is flushed (a memset of twice its size), then CUDA events around the call alone;
// the median over the samples. Reads the plan format of check_calls (a line: family, precision,
// dims) and prints, per line, the config the call ran and its median in microseconds.
//
//   time_calls PLAN [--samples N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <ktune/kernels.hpp>
#include <ktune/kernels_reference.hpp>

namespace kk = ktune::kernels;

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

kk::Precision precision_named(const std::string& name) {
  for (kk::Precision p : {kk::Precision::fp32, kk::Precision::tf32, kk::Precision::fp16, kk::Precision::bf16,
                          kk::Precision::fp8_e4m3})
    if (kk::to_string(p) == name) return p;
  std::fprintf(stderr, "unknown precision %s\n", name.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: time_calls PLAN [--samples N]\n");
    return 2;
  }
  const int samples = argc >= 4 && std::string(argv[2]) == "--samples" ? std::stoi(argv[3]) : 50;
  kk::Context context(kk::Backend::cuda);
  std::printf("context backend=cuda device=\"%s\"\n", context.device_name().c_str());
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  void* flush = nullptr;
  check(cudaMalloc(&flush, static_cast<std::size_t>(l2) * 2), "flush buffer");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::ifstream plan(argv[1]);
  for (std::string line; std::getline(plan, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string family, precision_text, dims_text;
    words >> family >> precision_text >> dims_text;
    const kk::Precision precision = precision_named(precision_text);
    std::vector<kk::DimArgument> dims;
    std::vector<std::string> names;  // DimArgument holds views
    std::istringstream items(dims_text);
    for (std::string item; std::getline(items, item, ',');) names.push_back(item);
    for (const std::string& item : names) {
      const auto equals = item.find('=');
      dims.push_back({std::string_view(item).substr(0, equals), std::stoll(item.substr(equals + 1))});
    }
    try {
      // Inputs as a check would give them (random, in range), so the kernel does real work.
      kk::ReferenceProblem reference(family, dims, precision, 1);
      std::vector<void*> memory;
      std::vector<kk::TensorArgument> tensors;
      const auto tensor_names = reference.tensor_names();
      for (const std::string& name : tensor_names) {
        memory.push_back(context.allocate(reference.bytes(name)));
        context.copy_to_device(memory.back(), reference.data(name), reference.bytes(name));
      }
      for (std::size_t t = 0; t < tensor_names.size(); ++t) tensors.push_back({tensor_names[t], memory[t]});
      const kk::ConfigChoice choice = context.choose(family, dims, precision);
      for (int w = 0; w < 3; ++w) context.run(family, tensors, dims, precision);
      std::vector<float> times;
      for (int s = 0; s < samples; ++s) {
        check(cudaMemsetAsync(flush, s & 0xff, static_cast<std::size_t>(l2) * 2), "flush");
        check(cudaEventRecord(start), "record");
        context.run(family, tensors, dims, precision);
        check(cudaEventRecord(stop), "record");
        check(cudaEventSynchronize(stop), "synchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
        times.push_back(ms * 1000.0f);
      }
      std::sort(times.begin(), times.end());
      std::printf("%s %s %s source=%s entry=%lld config=[%s] median_us=%.3f\n", family.c_str(), precision_text.c_str(),
                  dims_text.c_str(), choice.source.c_str(), static_cast<long long>(choice.measurement_id),
                  choice.config.c_str(), times[times.size() / 2]);
      for (void* m : memory) context.release(m);
    } catch (const kk::Error& e) {
      std::printf("%s ERROR %s\n", family.c_str(), e.what());
    }
  }
  return 0;
}

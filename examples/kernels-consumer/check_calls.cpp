// Calls ktune::kernels as a project would and checks every result against ktune's float64
// reference. Reads a plan, one call per line:
//
//   <family> <precision> <dim>=<value>,<dim>=<value>... [tuned=<measurement id>]
//
// and prints one line per call: the backend, the config and where it came from, the error and
// the verdict. `tuned=ID` also checks that the call ran the tuned entry ID of the compiled-in
// table. Exit status: 0 when every call passed, 1 when one failed, 2 on a bad plan.
//
//   check_calls PLAN [--backend cpu|cuda|hip|vulkan] [--time RUNS]
//   check_calls --families     one line per family: its name, then the precisions it takes
//
// --time also times RUNS calls of each line after the check (CUDA events would be the
// backend's own clock; here a host clock around synchronize(), reported in microseconds).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <ktune/kernels.hpp>
#include <ktune/kernels_reference.hpp>

namespace kk = ktune::kernels;

namespace {

struct PlannedCall {
  std::string family;
  kk::Precision precision;
  std::vector<std::pair<std::string, std::int64_t>> dims;
  long long tuned_id = -1;  // -1: any config will do
};

bool parse_precision(const std::string& text, kk::Precision& out) {
  for (kk::Precision p : {kk::Precision::fp32, kk::Precision::tf32, kk::Precision::fp16, kk::Precision::bf16,
                          kk::Precision::fp8_e4m3})
    if (kk::to_string(p) == text) {
      out = p;
      return true;
    }
  return false;
}

std::vector<PlannedCall> read_plan(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string(path) + ": cannot be read");
  std::vector<PlannedCall> plan;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    PlannedCall call;
    std::string precision, dims, extra;
    words >> call.family >> precision >> dims;
    const std::string where = std::string(path) + ":" + std::to_string(number) + ": ";
    if (!parse_precision(precision, call.precision)) throw std::runtime_error(where + "unknown precision " + precision);
    std::istringstream items(dims);
    for (std::string item; std::getline(items, item, ',');) {
      const auto equals = item.find('=');
      if (equals == std::string::npos) throw std::runtime_error(where + "not dim=value: " + item);
      call.dims.emplace_back(item.substr(0, equals), std::stoll(item.substr(equals + 1)));
    }
    while (words >> extra) {
      if (extra.rfind("tuned=", 0) != 0) throw std::runtime_error(where + "unknown word " + extra);
      call.tuned_id = std::stoll(extra.substr(6));
    }
    plan.push_back(std::move(call));
  }
  return plan;
}

// Runs one call on fresh device copies of the reference inputs; returns true when it passed.
bool check(kk::Context& context, const PlannedCall& call, int timed_runs) {
  std::vector<kk::DimArgument> dims;
  std::string shape;
  for (const auto& [name, value] : call.dims) {
    dims.push_back({name, value});
    shape += (shape.empty() ? "" : ",") + name + "=" + std::to_string(value);
  }
  kk::ReferenceProblem reference(call.family, dims, call.precision, 20261126);
  std::vector<void*> memory;
  std::vector<kk::TensorArgument> tensors;
  for (const std::string& name : reference.tensor_names()) {
    memory.push_back(context.allocate(reference.bytes(name)));
    context.copy_to_device(memory.back(), reference.data(name), reference.bytes(name));
  }
  const auto names = reference.tensor_names();
  for (std::size_t t = 0; t < names.size(); ++t) tensors.push_back({names[t], memory[t]});
  const kk::ConfigChoice choice = context.choose(call.family, dims, call.precision);
  context.run(call.family, tensors, dims, call.precision);
  context.synchronize();

  bool passed = true;
  double worst = 0;
  for (const auto& info : kk::families()) {
    if (info.name != call.family) continue;
    for (std::size_t t = 0; t < info.tensors.size(); ++t) {
      if (!info.tensors[t].is_output) continue;
      std::vector<unsigned char> written(reference.bytes(names[t]));
      context.copy_to_host(written.data(), memory[t], written.size());
      const double error = reference.error(names[t], written.data());
      worst = error > worst || error != error ? error : worst;
      passed = passed && error <= reference.tolerance();
    }
  }
  std::string verdict = passed ? "ok" : "WRONG";
  if (call.tuned_id >= 0 && (choice.source != "tuned" || choice.measurement_id != call.tuned_id)) {
    passed = false;
    verdict = "NOT-TUNED (expected entry " + std::to_string(call.tuned_id) + ")";
  }
  std::string timing;
  if (timed_runs > 0) {
    context.run(call.family, tensors, dims, call.precision);  // warm
    context.synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < timed_runs; ++r) context.run(call.family, tensors, dims, call.precision);
    context.synchronize();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    timing = " us_per_call=" + std::to_string(us / timed_runs);
  }
  std::printf("%s %s %s backend=%s source=%s level=%s entry=%lld config=[%s] error=%.3g tolerance=%.3g%s %s\n",
              call.family.c_str(), std::string(kk::to_string(call.precision)).c_str(), shape.c_str(),
              std::string(kk::to_string(context.backend())).c_str(), choice.source.c_str(), choice.level.c_str(),
              static_cast<long long>(choice.measurement_id), choice.config.c_str(), worst, reference.tolerance(),
              timing.c_str(), verdict.c_str());
  for (void* m : memory) context.release(m);
  return passed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: check_calls PLAN [--backend cpu|cuda|hip|vulkan] [--time RUNS] | check_calls --families\n";
    return 2;
  }
  if (std::string(argv[1]) == "--families") {
    for (const kk::FamilyInfo& family : kk::families()) {
      std::printf("%s", family.name.c_str());
      for (kk::Precision precision : family.precisions) std::printf(" %s", std::string(kk::to_string(precision)).c_str());
      std::printf("\n");
    }
    return 0;
  }
  std::string backend;
  int timed_runs = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--backend") backend = argv[i + 1];
    else if (flag == "--time") timed_runs = std::stoi(argv[i + 1]);
    else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  std::vector<PlannedCall> plan;
  try {
    plan = read_plan(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  try {
    kk::Context context = [&] {
      for (kk::Backend b : {kk::Backend::cuda, kk::Backend::hip, kk::Backend::vulkan, kk::Backend::cpu})
        if (kk::to_string(b) == backend) return kk::Context(b);
      return kk::Context();
    }();
    std::printf("context backend=%s device=\"%s\" architecture=%s\n",
                std::string(kk::to_string(context.backend())).c_str(), context.device_name().c_str(),
                context.architecture().c_str());
    int failed = 0;
    for (const PlannedCall& call : plan) {
      try {
        failed += check(context, call, timed_runs) ? 0 : 1;
      } catch (const kk::Error& e) {
        std::printf("%s ERROR code=%d %s\n", call.family.c_str(), static_cast<int>(e.code()), e.what());
        ++failed;
      }
    }
    std::printf("calls=%zu failed=%d\n", plan.size(), failed);
    return failed == 0 ? 0 : 1;
  } catch (const kk::Error& e) {
    std::printf("ERROR code=%d %s\n", static_cast<int>(e.code()), e.what());
    return 3;
  }
}

// ktune_gpu_aot: compiles, at the library's build time, the CUDA (NVRTC) or HIP (hiprtc) variants
// ktune::kernels carries and writes them as a C++ source (cuda_images.cpp or hip_images.cpp,
// library/src/gpu_variants.hpp). For each family with a GPU source and a space of the backend,
// and each architecture:
//   - the config of every entry of the exported table (<tuned>/<backend>/<family>.json) at its shape
//     and precision: the very variant the tune measured;
//   - for each precision the family takes, at each shape of the tables and (with --defaults) of
//     the family's descriptor (its odd and bench shapes, each with every value of the dims its
//     descriptor lists under library.compiled_values), the config a call falls back to there
//     (library/src/fallback_order.hpp), else the space's first valid config;
//   - with --defaults, for each precision, the run-time-dims variants of the dims the descriptor
//     lists under library.runtime_dims (KT_RUNTIME_DIMS=1): one per bound, at the fallback config
//     of the bench shape with those dims at their bounds. They serve every shape no exact variant
//     was compiled for.
// A call at a shape that neither an exact nor a run-time-dims variant covers cannot run on CUDA
// from this library; it says so. Variants that do not compile for an architecture (wgmma code
// for sm_80) are left out for it.
//
//   ktune_gpu_aot --backend cuda --out FILE --source-dir DIR --cache DIR [--tuned DIR] [--defaults]
//                 --arch sm_80 --arch sm_90a
//   ktune_gpu_aot --backend hip ... [--fast] --arch gfx90a --arch gfx1030
// --fast: the compilers' quick modes (a compile check, not the code to ship).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "library/src/gpu_variants.hpp"
#include "library/src/fallback_order.hpp"
#include "tuner/backends/runtime_compiler.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"
#if KTUNE_HAVE_CUDA
#include "tuner/backends/cuda/cuda_device.hpp"
#include "tuner/backends/cuda/nvrtc_compiler.hpp"
#endif
#if KTUNE_HAVE_HIP
#include "tuner/backends/hip/hip_device.hpp"
#include "tuner/backends/hip/hiprtc_compiler.hpp"
#endif

namespace ktune {
namespace {

struct Options {
  std::string backend;  // "cuda" or "hip"
  bool fast = false;
  std::string out;
  std::string source_dir;
  std::string tuned;
  std::string cache;
  bool defaults = false;
  std::vector<std::string> archs;
};

struct Job {
  const KernelFamily* family;
  Problem problem;
  Config config;  // with runtime_dims=1 for a run-time-dims variant (-DKT_RUNTIME_DIMS=1)
  std::string key;
  std::string arch;
  std::string config_json;  // the config a call launches it with
};

struct Image {
  std::string key, arch, entry, config, bytes;
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  return nlohmann::json::parse(in);
}

std::map<std::string, std::int64_t> dims_of(const nlohmann::json& shape) {
  std::map<std::string, std::int64_t> dims;
  for (const auto& [name, value] : shape.items()) dims[name] = value.get<std::int64_t>();
  return dims;
}

DeviceInfo nominal_device(const std::string& backend, const std::string& arch) {
#if KTUNE_HAVE_CUDA
  if (backend == "cuda") return nominal_cuda_device(arch);
#endif
#if KTUNE_HAVE_HIP
  if (backend == "hip") return nominal_hip_device(arch);
#endif
  throw std::runtime_error("this build of ktune_gpu_aot has no " + backend + " compiler");
}

// Every combination of the bounds of library.runtime_dims ({"cols": [1024, 4096]}: one
// variant per bound; [] for a dim the kernel needs no bound for).
std::vector<std::vector<library::DimBound>> bound_combinations(const nlohmann::json& runtime_dims) {
  std::vector<std::vector<library::DimBound>> combinations;
  if (runtime_dims.empty()) return combinations;
  combinations.emplace_back();
  for (const auto& [dim, bounds] : runtime_dims.items()) {
    std::vector<std::vector<library::DimBound>> next;
    for (const auto& partial : combinations) {
      if (bounds.empty()) {
        next.push_back(partial);
        next.back().push_back({dim, std::nullopt});
      }
      for (const auto& bound : bounds) {
        next.push_back(partial);
        next.back().push_back({dim, bound.get<std::int64_t>()});
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

// The first config of the fallback chain (library/src/fallback_order.hpp) valid here.
std::optional<Config> fallback_config(const SearchSpace& space, const KernelFamily& family,
                                     const SpaceContext& context) {
  for (const Config& config : library::untuned_configs(space, family)) {
    try {
      if (space.violated(config, context).empty()) return config;
    } catch (const std::exception&) {
    }
  }
  const ValidConfigs valid = space.enumerate(context);
  if (valid.size() > 0) return valid.config(0);
  return std::nullopt;
}

std::vector<Job> plan(const Options& options) {
  std::vector<Job> jobs;
  std::set<std::string> planned;
  for (const KernelFamily* family : compiled_families(false)) {
    if (!family->cuda_source()) continue;
    const std::string space_path = options.source_dir + "/search_spaces/" + family->name() + "." + options.backend + ".json";
    if (!std::ifstream(space_path)) continue;
    const SearchSpace space = SearchSpace::load(space_path);
    std::vector<std::pair<std::map<std::string, std::int64_t>, std::optional<Precision>>> shapes;
    std::vector<std::tuple<std::map<std::string, std::int64_t>, Precision, Config>> tuned;
    if (!options.tuned.empty()) {
      const nlohmann::json table = read_json(options.tuned + "/" + options.backend + "/" + family->name() + ".json");
      if (table.is_object())
        for (const auto& entry : table.at("entries")) {
          const auto precision = parse_precision(entry.at("precision").get<std::string>());
          if (!precision) continue;
          tuned.emplace_back(dims_of(entry.at("shape")), *precision, Config::from_json(entry.at("config"), "table"));
          shapes.emplace_back(dims_of(entry.at("shape")), std::nullopt);
        }
    }
    std::vector<std::vector<library::DimBound>> runtime_bounds;
    std::map<std::string, std::int64_t> bench, smallest;
    if (options.defaults) {
      const nlohmann::json descriptor = read_json(options.source_dir + "/kernels/" + family->name() + "/family.json");
      for (const auto& shape : descriptor.at("shapes").value("odd", nlohmann::json::array())) shapes.emplace_back(dims_of(shape), std::nullopt);
      if (!descriptor["shapes"].value("odd", nlohmann::json::array()).empty()) smallest = dims_of(descriptor["shapes"]["odd"][0]);
      if (descriptor.at("shapes").contains("bench")) {
        bench = dims_of(descriptor["shapes"]["bench"]);
        shapes.emplace_back(bench, std::nullopt);
      }
      const nlohmann::json library = descriptor.value("library", nlohmann::json::object());
      const nlohmann::json compiled_values = library.value("compiled_values", nlohmann::json::object());
      for (const auto& [dim, values] : compiled_values.items()) {
        // Every shape again with each listed value of the dim.
        const auto base = shapes;
        shapes.clear();
        for (const auto& [dims, only] : base)
          for (const auto& value : values) {
            auto copy = dims;
            copy[dim] = value.get<std::int64_t>();
            shapes.emplace_back(copy, only);
          }
      }
      runtime_bounds = bound_combinations(library.value("runtime_dims", nlohmann::json::object()));
    }
    for (const std::string& arch : options.archs) {
      const DeviceInfo device = nominal_device(options.backend, arch);
      auto add = [&](const Problem& problem, const Config& config) {
        const std::string key = library::gpu_variant_key(*family, problem, config, space);
        if (planned.insert(key + "@" + arch).second)
          jobs.push_back({family, problem, config, key, arch, config.to_json().dump()});
      };
      for (const auto& [dims, precision, config] : tuned) {
        try {
          const Problem problem = family->make_problem(dims, precision);
          if (space.violated(config, make_context(problem, device)).empty()) add(problem, config);
        } catch (const std::exception&) {
        }
      }
      for (const auto& [dims, only] : shapes)
        for (const Precision precision : family->precisions()) {
          try {
            const Problem problem = family->make_problem(dims, precision);
            if (const auto config = fallback_config(space, *family, make_context(problem, device))) add(problem, *config);
          } catch (const std::exception&) {
            // A shape or precision this family cannot take: nothing to compile.
          }
        }
      for (const auto& bounds : runtime_bounds)
        for (const Precision precision : family->precisions()) {
          // At the bench shape with the bounds, else at the smallest odd shape with them (a
          // wide row may take only a cluster split, which the space allows for few rows only:
          // a constraint on speed, while the binary runs any number of rows).
          for (const auto& base : {bench, smallest}) {
            auto dims = base;
            for (const library::DimBound& b : bounds)
              if (b.bound) dims[b.dim] = *b.bound;
            try {
              const Problem problem = family->make_problem(dims, precision);
              const auto config = fallback_config(space, *family, make_context(problem, device));
              if (!config) continue;
              const std::string key = library::gpu_variant_key(*family, problem, *config, space, bounds);
              Config compiled = *config;
              compiled.values.emplace_back("runtime_dims", std::int64_t{1});
              if (planned.insert(key + "@" + arch).second)
                jobs.push_back({family, problem, compiled, key, arch, config->to_json().dump()});
              break;
            } catch (const std::exception&) {
            }
          }
        }
    }
  }
  return jobs;
}

// The binary of one job (its bytes and kernel name), or the compiler's log in `failure`.
Image compile(const Options& options, const Job& job, std::string& failure) {
  std::unique_ptr<const RuntimeCompiler> compiler;
#if KTUNE_HAVE_CUDA
  if (options.backend == "cuda") compiler = std::make_unique<const NvrtcCompiler>(job.arch, options.cache, options.fast);
#endif
#if KTUNE_HAVE_HIP
  if (options.backend == "hip") compiler = std::make_unique<const HiprtcCompiler>(job.arch, options.cache, options.fast);
#endif
  if (!compiler) {
    failure = "this build has no " + options.backend + " compiler";
    return {};
  }
  const CompiledVariant compiled = compiler->compile(*job.family, job.problem, job.config);
  if (!compiled.ok) {
    failure = compiled.log.empty() ? "failed" : compiled.log;
    return {};
  }
  std::ifstream in(compiled.binary_path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return {job.key, job.arch, compiled.entry, job.config_json, bytes.str()};
}

std::string hex_array(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 5);
  static const char* digits = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    out += "0x";
    out += digits[byte >> 4];
    out += digits[byte & 15];
    out += (i % 24 == 23) ? ",\n" : ",";
  }
  return out;
}

std::string cpp_text(const std::string& text) { return nlohmann::json(text).dump(); }

int run(const Options& options) {
  const std::vector<Job> jobs = plan(options);
  std::vector<Image> images(jobs.size());
  std::vector<std::string> failures(jobs.size());
  std::vector<char> refused(jobs.size(), 0);
  std::mutex mutex;
  std::size_t next = 0;
  auto worker = [&] {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard lock(mutex);
        if (next == jobs.size()) return;
        i = next++;
      }
      try {
        images[i] = compile(options, jobs[i], failures[i]);
      } catch (const InputError&) {
        refused[i] = true;  // a precision the backend's kernels do not take (HIP: no tf32, fp8)
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(worker);
  for (auto& thread : threads) thread.join();

  std::ofstream out(options.out);
  out << "// Generated by ktune_gpu_aot (library/aot/gpu_aot_main.cpp). Do not edit.\n"
      << "#include \"library/src/gpu_variants.hpp\"\n\nnamespace ktune::library {\nnamespace {\n\n";
  std::size_t kept = 0, skipped = 0, bytes = 0;
  std::string failed_list;
  std::string index;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (refused[i]) continue;
    if (!failures[i].empty()) {
      // e.g. wgmma code for sm_80: that architecture runs another config
      if (++skipped <= 8) failed_list += "  " + jobs[i].key + " @" + jobs[i].arch + ": " + failures[i].substr(0, failures[i].find('\n')) + "\n";
      continue;
    }
    out << "const unsigned char image" << i << "[] = {\n" << hex_array(images[i].bytes) << "};\n";
    index += "    {" + cpp_text(images[i].key) + ", " + cpp_text(images[i].arch) + ", " + cpp_text(images[i].entry) +
             ", " + cpp_text(images[i].config) + ", image" + std::to_string(i) + ", sizeof image" + std::to_string(i) +
             "},\n";
    ++kept;
    bytes += images[i].bytes.size();
  }
  out << "\nconst GpuImage images[] = {\n" << index << "    {\"\", \"\", \"\", \"\", nullptr, 0}};\n\n}  // namespace\n\n"
      << "std::span<const GpuImage> " << options.backend << "_images() { return {images, " << kept << "}; }\n\n"
      << "}  // namespace ktune::library\n";
  std::cout << "ktune_gpu_aot: " << kept << " " << options.backend << " variants (" << bytes / 1024 << " KiB) for "
            << options.archs.size() << " architectures; " << skipped << " that do not compile for theirs left out\n"
            << failed_list;
  return out ? 0 : 1;
}

}  // namespace
}  // namespace ktune

int main(int argc, char** argv) {
  ktune::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--defaults" || flag == "--fast") {
      (flag == "--defaults" ? options.defaults : options.fast) = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "ktune_gpu_aot: " << flag << " needs a value\n";
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--backend") options.backend = value;
    else if (flag == "--out") options.out = value;
    else if (flag == "--source-dir") options.source_dir = value;
    else if (flag == "--tuned") options.tuned = value;
    else if (flag == "--cache") options.cache = value;
    else if (flag == "--arch") options.archs.push_back(value);
    else {
      std::cerr << "ktune_gpu_aot: unknown flag " << flag << "\n";
      return 2;
    }
  }
  if ((options.backend != "cuda" && options.backend != "hip") || options.out.empty() || options.source_dir.empty() ||
      options.cache.empty() || options.archs.empty()) {
    std::cerr << "usage: ktune_gpu_aot --backend cuda|hip --out FILE --source-dir DIR --cache DIR [--tuned DIR] "
                 "[--defaults] [--fast] --arch A...\n";
    return 2;
  }
  try {
    return ktune::run(options);
  } catch (const std::exception& e) {
    std::cerr << "ktune_gpu_aot: " << e.what() << "\n";
    return 1;
  }
}

// `ktune space`: builds a constrained search space and reports its size and build time.
#include <iostream>
#include <memory>
#include <optional>

#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/formats/t1/t1_space.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/space_files.hpp"
#include "tuner/worker/worker_client.hpp"

namespace ktune::cli {
namespace {

struct SpaceOptions {
  std::string kernel;
  std::string backend = "cpu";
  std::string shape;
  std::string precision = "fp32";
  std::string t1;
  std::string space_file;
  std::string arch;
};

int run_space(const SpaceOptions& options, const CommonOptions& common) {
  std::optional<SearchSpace> space;
  SpaceContext context;
  std::optional<Problem> problem_built;  // a family's problem (not a T1 spec's): its bytes and FLOPs are reported
  const KernelFamily* family_used = nullptr;
  if (!options.t1.empty()) {
    std::vector<std::string> ignored;
    if (!options.kernel.empty()) ignored.push_back("--kernel");
    if (!options.space_file.empty()) ignored.push_back("--space");
    if (!options.shape.empty()) ignored.push_back("--shape");
    if (!options.arch.empty()) ignored.push_back("--arch");
    if (!ignored.empty())
      throw InputError("--t1 " + options.t1 + " builds the space the T1 file describes, which " +
                       join_names(ignored, " and ") + " would not change; leave out " + join_names(ignored, " and ") +
                       ", or leave out --t1");
    space = load_t1_space(options.t1);
  } else {
    if (options.kernel.empty()) throw InputError("ktune space needs --kernel K (with --backend B) or --t1 FILE");
    const KernelFamily& family = find_family(options.kernel);
    require_backend_built(options.backend);
    const auto precision = parse_precision(options.precision);
    if (!precision)
      throw InputError("--precision: unknown precision '" + options.precision + "'; valid: " +
                       join_names(all_precision_names()));
    if (!options.arch.empty()) check_arch(options.backend, options.arch);
    const Problem problem = family.make_problem(options.shape.empty() ? std::map<std::string, std::int64_t>{}
                                                                      : parse_shape(options.shape),
                                                *precision);
    const auto space_file = options.space_file.empty() ? default_space_file(family.name(), options.backend)
                                                       : std::filesystem::path(options.space_file);
    space = SearchSpace::load(space_file);
    if (space->family() != family.name() || space->backend() != options.backend)
      throw InputError(space_file.string() + ": describes " + space->family() + " on " + space->backend() +
                       ", not " + family.name() + " on " + options.backend +
                       "; pass the matching --kernel and --backend, or another --space");
    // Constraints read device limits: those of a nominal device of --arch, or of the real one,
    // asked in a worker as for a tune.
    DeviceInfo device;
    if (!options.arch.empty()) {
      device = nominal_device(options.backend, options.arch);
    } else {
      WorkerClient worker(options.backend, 0);
      device = worker.hello(60.0);
    }
    context = make_context(problem, device);
    problem_built = problem;
    family_used = &family;
  }
  const ValidConfigs valid = space->enumerate(context);
  if (common.json) {
    nlohmann::json summary = {{"total", valid.total()}, {"valid", valid.size()}, {"seconds", valid.seconds()},
                              {"parameters", space->parameter_names()}, {"constraints", space->constraints().size()}};
    if (family_used) {  // the problem's size as a tune counts it (ci/gpu's suite plans its time from bytes)
      summary["bytes"] = family_used->byte_count(*problem_built);
      summary["flops"] = family_used->flop_count(*problem_built);
    }
    print_json(summary);
    return 0;
  }
  std::cout << space->source() << "\n  parameters:  " << space->parameters().size() << "\n  constraints: "
            << space->constraints().size() << "\n  total:       " << valid.total() << "\n  valid:       "
            << valid.size() << "\n  built in:    " << format_duration_ns(valid.seconds() * 1e9) << "\n";
  return 0;
}

}  // namespace

void register_space(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<SpaceOptions>();
  auto* command = app.add_subcommand("space", "Build a constrained search space and print its size (total, valid, seconds)");
  command->add_option("--kernel,-k", options->kernel, "Kernel family (see ktune list)");
  command->add_option("--backend,-b", options->backend, "Backend whose space to build")->capture_default_str();
  command->add_option("--shape", options->shape, "Problem dims, e.g. rows=256,cols=1024 (constraints may read them)")
      ->check(non_empty("give dim=value pairs such as rows=256,cols=1024, or leave out --shape for the family's "
                        "default (see ktune list)"));
  command->add_option("--precision", options->precision, "Problem precision")->capture_default_str();
  command->add_option("--space", options->space_file, "Search-space JSON file instead of search_spaces/<kernel>.<backend>.json")
      ->check(non_empty("give the path of a search-space JSON file, or leave out --space for the kernel's own"));
  command->add_option("--arch", options->arch,
                      "Build the space for a nominal device of this architecture (e.g. sm_90a) instead of the one present")
      ->check(non_empty("give a CUDA architecture such as sm_90a, or leave out --arch for the device present"));
  command->add_option("--t1", options->t1, "A T1 spec (Kernel Tuner / KTT / BAT) whose space to build")
      ->check(non_empty("give the path of a T1 JSON file"));
  add_common_options(*command, common);
  command->callback([options, &common, &action] { action = [options, &common] { return run_space(*options, common); }; });
}

}  // namespace ktune::cli

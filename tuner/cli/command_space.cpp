// `ktune space`: builds a constrained search space and reports its size and build time, or with
// --list prints its valid configs (space_listing.hpp).
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/cli/space_listing.hpp"
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
  bool list = false;
  std::string where;
  std::string format;               // empty: table, or json with --json
  std::optional<std::size_t> limit;  // absent: the format's default
};

// A space built for one problem on one device (or from a T1 spec), with what it was built from.
struct BuiltSpace {
  std::optional<SearchSpace> space;
  SpaceContext context;
  std::optional<Problem> problem;  // a family's problem (not a T1 spec's): its bytes and FLOPs are reported
  const KernelFamily* family = nullptr;
};

BuiltSpace build_t1_space(const SpaceOptions& options) {
  std::vector<std::string> ignored;
  if (!options.kernel.empty()) ignored.push_back("--kernel");
  if (!options.space_file.empty()) ignored.push_back("--space");
  if (!options.shape.empty()) ignored.push_back("--shape");
  if (!options.arch.empty()) ignored.push_back("--arch");
  if (!ignored.empty())
    throw InputError("--t1 " + options.t1 + " builds the space the T1 file describes, which " +
                     join_names(ignored, " and ") + " would not change; leave out " + join_names(ignored, " and ") +
                     ", or leave out --t1");
  BuiltSpace built;
  built.space = load_t1_space(options.t1);
  return built;
}

BuiltSpace build_family_space(const SpaceOptions& options) {
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
  BuiltSpace built;
  built.space = SearchSpace::load(space_file);
  if (built.space->family() != family.name() || built.space->backend() != options.backend)
    throw InputError(space_file.string() + ": describes " + built.space->family() + " on " + built.space->backend() +
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
  built.context = make_context(problem, device);
  built.problem = problem;
  built.family = &family;
  return built;
}

int print_summary(const BuiltSpace& built, const ValidConfigs& valid, const CommonOptions& common) {
  const SearchSpace& space = *built.space;
  if (common.json) {
    nlohmann::json summary = {{"total", valid.total()}, {"valid", valid.size()}, {"seconds", valid.seconds()},
                              {"parameters", space.parameter_names()}, {"constraints", space.constraints().size()}};
    if (built.family) {  // the problem's size as a tune counts it (ci/gpu's suite plans its time from bytes)
      summary["bytes"] = built.family->byte_count(*built.problem);
      summary["flops"] = built.family->flop_count(*built.problem);
    }
    print_json(summary);
    return 0;
  }
  std::cout << space.source() << "\n  parameters:  " << space.parameters().size() << "\n  constraints: "
            << space.constraints().size() << "\n  total:       " << valid.total() << "\n  valid:       "
            << valid.size() << "\n  built in:    " << format_duration_ns(valid.seconds() * 1e9) << "\n";
  return 0;
}

// --json asks for one JSON document, so with --list it means --format json; with another
// --format the two ask for different outputs.
ListFormat chosen_format(const SpaceOptions& options, const CommonOptions& common) {
  if (options.format.empty()) return common.json ? ListFormat::json : ListFormat::table;
  const ListFormat format = *parse_list_format(options.format);  // the option's check admits only these
  if (common.json && format != ListFormat::json)
    throw InputError("--json prints one JSON document, which --format " + options.format +
                     " is not; leave out --json, or give --format json");
  return format;
}

ListedSpace describe_listed(const BuiltSpace& built, const SpaceOptions& options) {
  ListedSpace listed;
  listed.kernel = built.space->family();
  listed.backend = built.space->backend();
  if (built.problem) {
    std::string shape;
    for (const auto& [name, value] : built.problem->dims)
      shape += (shape.empty() ? "" : ",") + name + "=" + std::to_string(value);
    listed.shape = shape;
    listed.precision = std::string(to_string(built.problem->precision));
  } else {
    listed.t1 = options.t1;
  }
  return listed;
}

int print_list(const BuiltSpace& built, const ValidConfigs& valid, const SpaceOptions& options,
               const CommonOptions& common) {
  ListRequest request;
  request.format = chosen_format(options, common);
  request.where = options.where;
  request.limit = options.limit.value_or(default_list_limit(request.format));
  print_listing(std::cout, describe_listed(built, options), valid, built.context, request);
  return 0;
}

int run_space(const SpaceOptions& options, const CommonOptions& common) {
  if (options.list) chosen_format(options, common);  // a contradiction is reported before the space is built
  const BuiltSpace built = options.t1.empty() ? build_family_space(options) : build_t1_space(options);
  const ValidConfigs valid = built.space->enumerate(built.context);
  return options.list ? print_list(built, valid, options, common) : print_summary(built, valid, common);
}

// A --format check whose message names the value and lists the formats.
CLI::Validator list_format_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return parse_list_format(text) ? "" : "'" + text + "' is not a listing format; valid: " +
                                                  join_names(list_format_names());
      },
      "");
}

}  // namespace

void register_space(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<SpaceOptions>();
  auto* command = app.add_subcommand(
      "space", "Build a constrained search space and print its size (total, valid, seconds), or list its configs");
  command->footer(
      "Without --list: the space's size and how long it took to build (--json: total, valid,\n"
      "seconds, parameters, constraints, and for a kernel family the problem's bytes and FLOPs).\n"
      "--list prints every valid config of the constrained space, one a row, a column for each\n"
      "parameter in the space's order. --where keeps the configs for which an expression is true,\n"
      "written in the language of the spaces' constraints and T1 Conditions (Python-like: == != <\n"
      "<= > >=, and or not, x in [1, 2], + - * / // % **, a if c else b, min max abs ceil_div\n"
      "round_up log2 is_pow2, strings in quotes); it reads the parameters, the problem's dims (rows,\n"
      "cols, ...) and the device's limits (hardware_threads, ...). A malformed expression or an\n"
      "unknown name exits 2. E.g.\n"
      "  ktune space -k softmax -b cpu --list --where \"rows_per_task >= 16 and exp == 'poly'\"\n"
      "  ktune space -k gemm -b cuda --arch sm_90a --precision bf16 --list --format csv \\\n"
      "              --where \"path == 'wgmma' and block_m in [64, 128]\"\n"
      "Formats: table (aligned columns, then a line saying how many were listed of how many), md (a\n"
      "GitHub Markdown table), csv (RFC 4180: a header row, CRLF line ends), json (one document:\n"
      "kernel, backend, shape, precision, parameters, where, total, valid, count, listed, configs;\n"
      "--json with --list means --format json, and with another --format is refused). table and md\n"
      "list the first 1000 rows unless --limit says otherwise; csv and json list every row. count is\n"
      "how many configs --where keeps (all the valid ones without it), listed how many were printed.\n"
      "ktune space reads no results database, so it refuses --db.");
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
  auto* list = command->add_flag("--list", options->list, "Print every valid config, one a row (see below)");
  command->add_option("--where", options->where,
                      "Only the configs for which this expression is true, e.g. \"threads >= 4\"")
      ->type_name("EXPR")
      ->needs(list)
      ->check(non_empty("give an expression such as \"threads >= 4\", or leave out --where to list every config"));
  command->add_option("--format", options->format, "table (default), md, csv or json")
      ->type_name("FORMAT")
      ->needs(list)
      ->check(list_format_check());
  command->add_option("--limit", options->limit,
                      "Print at most N configs, 0 for all (default: 1000 for table and md, all for csv and json)")
      ->type_name("N")
      ->needs(list)
      ->check(whole_number(0, std::numeric_limits<std::size_t>::max(), "a whole number of configs, 0 for all (e.g. 50)"));
  // Not add_common_options: space takes --json but reads no database, and a --db given to it is
  // refused as every command that reads none refuses it (describe_usage_error says why).
  command->add_flag("--json", common.json, "Print one machine-readable JSON document on stdout (with --list: the configs)");
  command->callback([options, &common, &action] {
    action = [options, &common] { return run_space(*options, common); };
  });
}

}  // namespace ktune::cli

// `ktune export`: write tuned/<kernel>.hpp and .json from the database.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/t1_kernel.hpp"
#include "tuner/formats/t1/t1_space.hpp"
#include "tuner/tune/export_tuned.hpp"
#include "tuner/tune/space_files.hpp"

namespace ktune::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> kernels;
  std::string backend = "cpu";
  std::string out = "tuned";
  std::string t1_spec;  // export the kernel of this T1 spec, with the spec's parameters
};

// The header's fallback config comes from the kernel's search space for the backend.
void require_space_file(const std::string& kernel, const std::string& backend) {
  const auto space = default_space_file(kernel, backend);
  if (!std::filesystem::exists(space))
    throw InputError("kernel '" + kernel + "' has no search space for the " + backend + " backend (" + space.string() +
                     "), so it has no " + backend + " results to export; `ktune list` shows the backends of each "
                     "kernel");
}

// What the database can export: per backend, the tuned entries (best ok measurement of a
// device and problem) of each family.
using TunedEntryCounts = std::map<std::string, std::map<std::string, std::size_t>>;

TunedEntryCounts count_tuned_entries(Store& store) {
  TunedEntryCounts counts;
  for (const BestMeasurement& best : store.best_measurements()) ++counts[best.backend][best.family];
  return counts;
}

// "cpu (3 entries: rmsnorm, softmax), vulkan (1 entry: rmsnorm)"; "none" for an empty database.
std::string describe_tuned_entries(const TunedEntryCounts& counts) {
  std::vector<std::string> backends;
  for (const auto& [backend, families] : counts) {
    std::size_t entries = 0;
    std::vector<std::string> names;
    for (const auto& [family, count] : families) {
      entries += count;
      names.push_back(family);
    }
    backends.push_back(backend + " (" + std::to_string(entries) + (entries == 1 ? " entry: " : " entries: ") +
                       join_names(names) + ")");
  }
  return backends.empty() ? "none (no config was measured ok)" : join_names(backends);
}

// The kernels to export: those asked for, each of which must have results for the backend, or
// else every kernel that has some. Refused before anything is written, so that no empty header
// replaces a tuned one. Exit 2 (bad input), not 1: nothing was checked and found failing; the
// database, backend or kernel named selects nothing, as a database without measurements does.
std::vector<std::string> kernels_with_results(Store& store, const std::string& db, const std::string& backend,
                                              const std::vector<std::string>& asked) {
  const TunedEntryCounts counts = count_tuned_entries(store);
  const auto here = counts.find(backend);
  const std::string elsewhere = "; it has results for: " + describe_tuned_entries(counts);
  if (here == counts.end())
    throw InputError("the database " + db + " holds no results for backend " + backend + elsewhere +
                     ". Pass the --backend those were tuned on, or tune first (ktune tune -b " + backend + ")");
  for (const std::string& kernel : asked)
    if (!here->second.count(kernel))
      throw InputError("the database " + db + " holds no results for kernel " + kernel + " on backend " + backend +
                       elsewhere + ". Tune it first (ktune tune -k " + kernel + " -b " + backend + ")");
  if (!asked.empty()) return asked;
  std::vector<std::string> kernels;
  for (const auto& [family, count] : here->second) kernels.push_back(family);
  return kernels;
}

int run_export(const ExportOptions& given, const CommonOptions& common) {
  ExportOptions options = given;
  std::optional<SearchSpace> t1_space;
  if (!options.t1_spec.empty()) {
    if (!options.kernels.empty()) throw InputError("--t1 exports the spec's own kernel; leave out --kernel");
    const KernelFamily& family = register_t1_kernel(options.t1_spec);
    options.kernels = {family.name()};
    if (options.backend == "cpu") options.backend = t1_default_backend(family);
    t1_space = load_t1_space(options.t1_spec);
  }
  // Names first: they need no database. A backend need not be built here to export its results.
  // A composed family (attention_block) has no table of its own: its calls read its stages'.
  std::vector<std::string> asked;
  for (const auto& kernel : options.kernels)
    for (const std::string& name : table_families(find_family(kernel)))
      if (std::find(asked.begin(), asked.end(), name) == asked.end()) asked.push_back(name);
  options.kernels = asked;
  const auto backends = known_backend_names();
  if (std::find(backends.begin(), backends.end(), options.backend) == backends.end())
    throw InputError("unknown backend '" + options.backend + "'; valid backends: " + join_names(backends));
  if (!t1_space)
    for (const auto& kernel : options.kernels) require_space_file(kernel, options.backend);
  if (!std::filesystem::exists(common.db))
    throw InputError(common.db + ": no such database; run `ktune tune` first or pass --db PATH");
  check_output_dir(options.out, "--out", "or leave out --out for ./tuned");
  // An empty file would be made a new database by opening it: it holds nothing to export anyway.
  std::error_code error;
  if (std::filesystem::is_regular_file(common.db, error) && std::filesystem::file_size(common.db, error) == 0 && !error)
    throw InputError(common.db + ": is empty and holds no measurements; run `ktune tune --db " + common.db +
                     "` first or pass another --db");
  Store store = Store::open_as_permitted(common.db);  // read without writing where the user may not write
  if (store.measured_families().empty())
    throw InputError(common.db + ": holds no measurements yet; run `ktune tune` first");
  const std::vector<std::string> kernels = kernels_with_results(store, common.db, options.backend, options.kernels);
  if (!t1_space)
    for (const auto& kernel : kernels) require_space_file(kernel, options.backend);
  nlohmann::json written = nlohmann::json::array();
  for (const auto& kernel : kernels) {
    const auto exported =
        export_tuned_family(store, kernel, options.backend, options.out, t1_space ? &*t1_space : nullptr);
    written.push_back({{"kernel", kernel}, {"header", exported.header.string()}, {"entries", exported.entries}});
    if (!common.json)
      std::cout << exported.header.string() << ": " << exported.entries << " tuned "
                << (exported.entries == 1 ? "entry" : "entries") << " for " << kernel << "\n";
  }
  if (common.json) print_json({{"database", common.db}, {"exported", written}});
  return 0;
}

}  // namespace

void register_export(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<ExportOptions>();
  auto* command = app.add_subcommand("export", "Write the tuned configs as generated C++ headers and JSON");
  command->footer(
      "Writes <out>/<backend>/<kernel>.hpp and .json holding the best config per device, precision and\n"
      "shape, in namespace ktune::tuned::<backend>::<kernel>.\n"
      "Lookup in the header falls back device -> architecture -> vendor -> default, nearest shape first.\n"
      "A database read-only to you (the file or its folder) is read without writing to it.\n"
      "Exits 2, writing nothing, when the database holds no results for the backend (or for a\n"
      "--kernel asked for), and says what it does hold.");
  command->add_option("--kernel,-k", options->kernels, "Kernel to export; repeat for several (default: all measured)");
  command->add_option("--backend,-b", options->backend,
                      "Backend whose results to export (with --t1: the spec's Language unless given)")
      ->capture_default_str();
  command->add_option("--t1", options->t1_spec,
                      "Export the kernel of this T1 spec (tuned with ktune tune --t1): a header with the spec's\n"
                      "parameters, its default config as the fallback")
      ->check(CLI::ExistingFile);
  command->add_option("--out,-o", options->out, "Output directory")
      ->capture_default_str()
      ->check(non_empty("give a directory, or leave out --out for ./tuned"));
  add_common_options(*command, common);
  command->callback([options, &common, &action] { action = [options, &common] { return run_export(*options, common); }; });
}

}  // namespace ktune::cli

// `ktune export`: write tuned/<kernel>.hpp and .json from the database.
#include <filesystem>
#include <iostream>
#include <memory>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/tune/export_tuned.hpp"

namespace ktune::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> kernels;
  std::string backend = "cpu";
  std::string out = "tuned";
};

int run_export(const ExportOptions& options, const CommonOptions& common) {
  if (!std::filesystem::exists(common.db))
    throw InputError(common.db + ": no such database; run `ktune tune` first or pass --db PATH");
  for (const auto& kernel : options.kernels) find_family(kernel);
  Store store = Store::open(common.db);
  std::vector<std::string> kernels = options.kernels;
  if (kernels.empty()) kernels = store.measured_families();
  if (kernels.empty()) throw InputError(common.db + ": holds no measurements yet; run `ktune tune` first");
  nlohmann::json written = nlohmann::json::array();
  for (const auto& kernel : kernels) {
    const auto exported = export_tuned_family(store, kernel, options.backend, options.out);
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
      "Writes <out>/<kernel>.hpp and .json holding the best config per device, precision and shape.\n"
      "Lookup in the header falls back device -> architecture -> vendor -> default, nearest shape first.");
  command->add_option("--kernel,-k", options->kernels, "Kernel to export; repeat for several (default: all measured)");
  command->add_option("--backend,-b", options->backend, "Backend whose results to export")->capture_default_str();
  command->add_option("--out,-o", options->out, "Output directory")->capture_default_str();
  add_common_options(*command, common);
  command->callback([options, &common, &action] { action = [options, &common] { return run_export(*options, common); }; });
}

}  // namespace ktune::cli

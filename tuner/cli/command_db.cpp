// `ktune db merge A.db B.db ... --into C.db`: results gathered apart (offline clusters, machines
// without a shared file system) folded into one database that export, bench and report read.
#include <iostream>
#include <memory>

#include "db/store.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/tune/stop_request.hpp"

namespace ktune::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> sources;
  std::string into;
};

int run_merge(const MergeOptions& options, const CommonOptions& common) {
  handle_stop_requests();  // a merge in progress rolls back, and its snapshot is removed
  Store store = Store::open(options.into);
  nlohmann::json merged = nlohmann::json::array();
  for (const auto& source : options.sources) {
    MergeCounts counts;
    try {
      counts = store.merge_from(source, [] { return g_stop_requested.load(); });
    } catch (const std::exception&) {
      if (!g_stop_requested.load()) throw;
      throw Interrupted("db merge stopped at the signal: nothing of " + source + " was merged into " + options.into +
                        (merged.empty() ? "" : " (the sources before it were)"));
    }
    merged.push_back({{"source", source},
                      {"devices", counts.devices},
                      {"runs", counts.runs},
                      {"measurements", counts.measurements},
                      {"measurements_already_present", counts.measurements_already_present},
                      {"bench_runs", counts.bench_runs},
                      {"bench_results", counts.bench_results}});
    if (!common.json)
      std::cout << source << ": " << counts.measurements << " measurements added ("
                << counts.measurements_already_present << " already present), " << counts.runs << " runs, "
                << counts.devices << " new devices, " << counts.bench_results << " bench results\n";
  }
  if (common.json) print_json({{"database", options.into}, {"merged", merged}});
  return 0;
}

}  // namespace

void register_db(CLI::App& app, CommonOptions& common, Action& action) {
  auto* db = app.add_subcommand("db", "Work on results databases (merge)");
  db->require_subcommand(1);
  auto options = std::make_shared<MergeOptions>();
  auto* merge = db->add_subcommand("merge", "Fold databases gathered apart into one");
  merge->footer(
      "Devices, kernels and problems are matched by fingerprint, source hash and shape, not by id.\n"
      "A config the target already measured on the same device keeps the target's result, so\n"
      "merging the same database twice adds nothing. The sources are only read.");
  merge->add_option("sources", options->sources, "Databases to merge (ktune.db files)")->required();
  merge->add_option("--into", options->into, "Database to merge into (created when missing)")
      ->required()
      ->check(non_empty("name the database to merge into, e.g. --into all.db"));
  merge->add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  merge->callback([options, &common, &action] { action = [options, &common] { return run_merge(*options, common); }; });
}

}  // namespace ktune::cli

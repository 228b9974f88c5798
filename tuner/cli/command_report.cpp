// `ktune report`: the HTML dashboard of the database's bench history and tuning data.
#include <filesystem>
#include <iostream>
#include <memory>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/report/report_data.hpp"
#include "tuner/report/report_writer.hpp"

namespace ktune::cli {
namespace {

struct ReportCommandOptions {
  std::string out;
  std::vector<std::string> kernels;
  double alpha = 0.05;
  double min_change_percent = 2;
  std::size_t max_evaluations = 3000;
};

int run_report_command(const ReportCommandOptions& options, const CommonOptions& common) {
  // Reading must not create a database: a mistyped --db is an error, not an empty report.
  if (!std::filesystem::exists(common.db))
    throw InputError("--db " + common.db + ": no such database; run ktune tune or ktune bench first, or pass --db PATH");
  if (std::filesystem::exists(options.out) && !std::filesystem::is_directory(options.out))
    throw InputError("--out " + options.out + " is a file; give a directory for the report");
  Store store = Store::open_as_permitted(common.db);  // read without writing where the user may not write
  ReportOptions report;
  report.change_points.alpha = options.alpha;
  report.change_points.min_relative_change = options.min_change_percent / 100.0;
  report.max_evaluations = options.max_evaluations;
  for (const auto& kernel : options.kernels) find_family(kernel);  // unknown names list the valid ones
  report.families = options.kernels;
  const nlohmann::json data = build_report_data(store, std::filesystem::path(common.db).filename().string(), report);
  const auto written = write_report(options.out, data);
  std::size_t change_points = 0, series = 0;
  for (const auto& group : data["groups"])
    for (const auto& history : group["history"]) ++series, change_points += history["change_points"].size();
  if (common.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& path : written) files.push_back(path.string());
    print_json({{"out", options.out},
                {"index", (std::filesystem::path(options.out) / "index.html").string()},
                {"groups", data["groups"].size()},
                {"series", series},
                {"change_points", change_points},
                {"files", files}});
  } else {
    std::cout << "wrote " << (std::filesystem::path(options.out) / "index.html").string() << ": "
              << data["groups"].size() << " kernel/device groups, " << series << " bench histories, "
              << change_points << " change points\n";
  }
  return 0;
}

}  // namespace

void register_report(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<ReportCommandOptions>();
  auto* command = app.add_subcommand("report", "Write the HTML dashboard of bench history and tuning data");
  command->footer(
      "Writes DIR/index.html and its assets (Chart.js from Debian's libjs-chart.js): opens offline.\n"
      "Per kernel and device: each benchmark's median time over the bench runs (ktune bench) with\n"
      "change points found by E-divisive means (a permutation test over the whole history, not a\n"
      "threshold on the last point), tuned vs default vs the copy baseline and % of that ceiling,\n"
      "search convergence (best so far vs evaluations) and each parameter's effect on time.\n"
      "A database read-only to you (the file or its folder) is read without writing to it.");
  command->add_option("--out", options->out, "Directory to write the report into (created if missing)")
      ->required()
      ->check(non_empty("give a directory, e.g. report"));
  command->add_option("--kernel,-k", options->kernels, "Only this kernel family; repeat for several (default: all)");
  command->add_option("--alpha", options->alpha, "Significance of each change point's permutation test")
      ->capture_default_str()
      ->check(real_number(0, 1, true, "a probability above 0 and below 1 (e.g. 0.05)", "0<A<1"));
  command->add_option("--min-change", options->min_change_percent, "Ignore level changes smaller than PCT percent")
      ->capture_default_str()
      ->check(real_number(0, 1e6, false, "a percentage >= 0 (e.g. 2)", "PCT>=0"));
  command->add_option("--max-evaluations", options->max_evaluations,
                      "Evaluations shown per tuned problem (thinned beyond; improvements kept)")
      ->capture_default_str()
      ->check(whole_number(10, 1000000, "a whole number from 10 to 1000000 (e.g. 3000)", "10..1000000"));
  add_common_options(*command, common);
  command->callback([options, &common, &action] {
    action = [options, &common] { return run_report_command(*options, common); };
  });
}

}  // namespace ktune::cli

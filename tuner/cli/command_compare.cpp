// `ktune compare BASE.json NEW.json`: a regression check on two Google Benchmark JSON files
// (ktune's own or any other program's). Exit 1 when a benchmark got slower, for CI gates.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include "tuner/bench/benchmark_json.hpp"
#include "tuner/bench/compare.hpp"
#include "tuner/bench/mann_whitney.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::cli {
namespace {

struct CompareOptions {
  std::string base_file;
  std::string new_file;
  double threshold_percent = 5;
  double alpha = 0.05;
};

const CLI::Validator kThresholdPercent =
    real_number(0, std::numeric_limits<double>::max(), false, "a percentage >= 0 (e.g. 5)", "PCT>=0");

const CLI::Validator kAlpha =
    real_number(0, 1, true, "a probability above 0 and at most 1 (e.g. 0.05)", "0<A<=1");

// Times with four significant digits: benchmarks of a few nanoseconds differ in the decimals.
// The unit is chosen after rounding, so 999.99 ns reads "1.000 us", not "1000. ns".
std::string format_time(double ns) {
  struct Unit {
    const char* name;
    double ns;
  };
  static constexpr Unit kUnits[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
  constexpr double kRoundsUpToOne = 0.99995;  // the smallest value "%.4g" prints as 1.000
  Unit unit = kUnits[3];
  for (const Unit& candidate : kUnits) {
    if (ns >= candidate.ns * kRoundsUpToOne) {
      unit = candidate;
      break;
    }
  }
  const double value = ns / unit.ns;
  char text[48];
  std::snprintf(text, sizeof text, value < 999.95 ? "%#.4g %s" : "%.0f %s", value, unit.name);
  return text;
}

std::string format_change(double change) {
  if (std::isinf(change)) return change > 0 ? "+inf%" : "-inf%";
  char text[48];
  std::snprintf(text, sizeof text, "%+.1f%%", change * 100);
  return text;
}

std::string format_p(double p) {
  char text[32];
  std::snprintf(text, sizeof text, p >= 0.001 ? "%.3f" : "%.1e", p);
  return text;
}

std::string plural(std::size_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

std::string untested_note(const BenchmarkComparison& pair) {
  return "too few repetitions: " + std::to_string(pair.base_samples) + " vs " + std::to_string(pair.new_samples) +
         ", judged by the threshold alone";
}

// "base.json (host, date)" from the context Google Benchmark records, when it is there.
std::string describe_file(const BenchmarkFile& file) {
  std::vector<std::string> parts;
  for (const char* key : {"executable", "host_name", "date"}) {
    const auto value = file.context.find(key);
    if (value != file.context.end() && value->is_string()) parts.push_back(value->get<std::string>());
  }
  return parts.empty() ? file.source : file.source + " (" + join_names(parts) + ")";
}

void print_table(const ComparisonReport& report, const BenchmarkFile& base, const BenchmarkFile& current,
                 const CompareOptions& options) {
  std::cout << "base: " << describe_file(base) << "\nnew:  " << describe_file(current) << "\n\n";
  if (!report.pairs.empty()) {
    struct Row {
      std::string name, old_time, new_time, change, p, verdict;
    };
    std::vector<Row> rows{{"benchmark", "old", "new", "change", "p", "verdict"}};
    for (const BenchmarkComparison& pair : report.pairs) {
      std::string verdict = to_string(pair.verdict);
      if (!pair.significance_tested) verdict += " (" + untested_note(pair) + ")";
      rows.push_back({pair.name, format_time(pair.base_median_ns), format_time(pair.new_median_ns),
                      format_change(pair.change), format_p(pair.p_value), verdict});
    }
    std::size_t name_width = 0, old_width = 0, new_width = 0, change_width = 0, p_width = 0;
    for (const Row& row : rows) {
      name_width = std::max(name_width, row.name.size());
      old_width = std::max(old_width, row.old_time.size());
      new_width = std::max(new_width, row.new_time.size());
      change_width = std::max(change_width, row.change.size());
      p_width = std::max(p_width, row.p.size());
    }
    const auto pad_right = [](const std::string& text, std::size_t width) {
      return text + std::string(width - text.size(), ' ');
    };
    const auto pad_left = [](const std::string& text, std::size_t width) {
      return std::string(width - text.size(), ' ') + text;
    };
    for (const Row& row : rows)
      std::cout << pad_right(row.name, name_width) << "  " << pad_left(row.old_time, old_width) << "  "
                << pad_left(row.new_time, new_width) << "  " << pad_left(row.change, change_width) << "  "
                << pad_left(row.p, p_width) << "  " << row.verdict << "\n";
  }
  const auto print_list = [](const std::string& title, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::cout << "\n" << title << ":\n";
    for (const std::string& name : names) std::cout << "  " << name << "\n";
  };
  print_list("new benchmarks (only in " + current.source + ")", report.only_in_new);
  print_list("missing benchmarks (only in " + base.source + ")", report.only_in_base);
  if (!report.unmeasured.empty()) {
    std::cout << "\nnot measured (the run reported an error or a skip):\n";
    for (const UnmeasuredBenchmark& b : report.unmeasured) {
      std::cout << "  " << b.name << ":";
      if (!b.base_error.empty()) std::cout << " base: " << b.base_error << ";";
      if (!b.new_error.empty()) std::cout << " new: " << b.new_error;
      std::cout << "\n";
    }
  }

  const std::size_t regressions = report.count(Verdict::regression);
  std::cout << "\n" << plural(regressions, "regression", "regressions") << ", "
            << plural(report.count(Verdict::improvement), "improvement", "improvements") << ", "
            << report.count(Verdict::same) << " same";
  if (report.untested_count() > 0)
    std::cout << " (" << report.untested_count() << " judged by the threshold alone: too few repetitions)";
  std::cout << "; " << report.only_in_new.size() << " new, " << report.only_in_base.size() << " missing";
  if (!report.unmeasured.empty()) std::cout << ", " << report.unmeasured.size() << " not measured";
  std::cout << " (threshold " << options.threshold_percent << "%, alpha " << options.alpha << ")\n";
}

nlohmann::json report_json(const ComparisonReport& report, const BenchmarkFile& base, const BenchmarkFile& current,
                           const CompareOptions& options, int exit_code) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const BenchmarkComparison& pair : report.pairs) {
    pairs.push_back({{"name", pair.name},
                     {"base_median_ns", pair.base_median_ns},
                     {"new_median_ns", pair.new_median_ns},
                     {"base_samples", pair.base_samples},
                     {"new_samples", pair.new_samples},
                     // JSON has no infinity: a change from 0 ns is null (the medians tell the story).
                     {"change", std::isfinite(pair.change) ? nlohmann::json(pair.change) : nlohmann::json()},
                     {"p_value", pair.p_value},
                     {"exact_p", pair.exact_p},
                     {"significance_tested", pair.significance_tested},
                     {"verdict", to_string(pair.verdict)}});
  }
  nlohmann::json unmeasured = nlohmann::json::array();
  const auto error_or_null = [](const std::string& error) { return error.empty() ? nlohmann::json() : nlohmann::json(error); };
  for (const UnmeasuredBenchmark& b : report.unmeasured)
    unmeasured.push_back({{"name", b.name}, {"base_error", error_or_null(b.base_error)}, {"new_error", error_or_null(b.new_error)}});
  return {{"base", {{"file", base.source}, {"context", base.context}}},
          {"new", {{"file", current.source}, {"context", current.context}}},
          {"threshold_percent", options.threshold_percent},  // as given: 7 / 100 * 100 is not 7
          {"alpha", options.alpha},
          {"benchmarks", pairs},
          {"new_benchmarks", report.only_in_new},
          {"missing_benchmarks", report.only_in_base},
          {"not_measured", unmeasured},
          {"summary",
           {{"regressions", report.count(Verdict::regression)},
            {"improvements", report.count(Verdict::improvement)},
            {"same", report.count(Verdict::same)},
            {"judged_by_threshold_alone", report.untested_count()}}},
          {"exit_code", exit_code}};
}

int run_compare(const CompareOptions& options, const CommonOptions& common) {
  const BenchmarkFile base = load_benchmark_json(options.base_file);
  const BenchmarkFile current = load_benchmark_json(options.new_file);
  ComparisonCriteria criteria;
  criteria.threshold = options.threshold_percent / 100;
  criteria.alpha = options.alpha;
  const ComparisonReport report = compare_benchmarks(base, current, criteria);
  const int exit_code = static_cast<int>(report.count(Verdict::regression) > 0 ? ExitCode::check_failed : ExitCode::ok);
  if (common.json) print_json(report_json(report, base, current, options, exit_code));
  else print_table(report, base, current, options);
  return exit_code;
}

}  // namespace

void register_compare(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<CompareOptions>();
  auto* command = app.add_subcommand("compare", "Compare two Google Benchmark JSON files; exit 1 on a regression");
  command->footer(
      "Reads two files written by Google Benchmark (--benchmark_format=json or --benchmark_out=FILE),\n"
      "by any program that uses it, and pairs their benchmarks by name. Each benchmark is\n"
      "judged by the median real time of its repetitions; the repetitions of both files go through a\n"
      "two-sided Mann-Whitney U test (exact p-value up to " +
      std::to_string(kMannWhitneyExactLimit) +
      " repetitions a side without ties, otherwise the\n"
      "normal approximation with tie and continuity corrections). With change = new/old median - 1:\n"
      "  regression   change > +threshold and p < alpha\n"
      "  improvement  change < -threshold and p < alpha\n"
      "  same         otherwise\n"
      "Run benchmarks with repetitions (e.g. --benchmark_repetitions=10). With fewer than 2 on a side, or\n"
      "so few that no outcome could reach alpha (3 a side at alpha 0.05; 4 a side suffice), the test\n"
      "cannot decide: the verdict then follows the threshold alone and is marked \"too few repetitions\"\n"
      "(and such a regression fails the check too). A file of aggregates only\n"
      "(--benchmark_report_aggregates_only) gives one sample per benchmark, its mean.\n"
      "Benchmarks only in NEW are listed as new, those only in BASE as missing, and those whose run\n"
      "reported an error or a skip as not measured; none of these fails the check.\n"
      "Exit codes: 0 no regression, 1 at least one regression, 2 bad input (unreadable or malformed\n"
      "file, bad option).");
  command->add_option("base", options->base_file, "Google Benchmark JSON of the baseline")
      ->required()
      ->type_name("BASE.json")
      ->check(non_empty("give the path of the baseline's Google Benchmark JSON file"));
  command->add_option("new", options->new_file, "Google Benchmark JSON to check against it")
      ->required()
      ->type_name("NEW.json")
      ->check(non_empty("give the path of the Google Benchmark JSON file to check"));
  command->add_option("--threshold", options->threshold_percent,
                      "Relative change of the median, in percent, below which a difference is ignored")
      ->capture_default_str()
      ->check(kThresholdPercent);
  command->add_option("--alpha", options->alpha, "Significance level of the test")
      ->capture_default_str()
      ->check(kAlpha);
  command->add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  command->callback([options, &common, &action] { action = [options, &common] { return run_compare(*options, common); }; });
}

}  // namespace ktune::cli

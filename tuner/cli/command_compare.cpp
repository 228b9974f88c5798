// `ktune compare BASE.json NEW.json`: a regression check on two Google Benchmark JSON files
// (ktune's own or any other program's). Exit 1 when a benchmark got slower, for CI gates; also
// when nothing was compared, since a gate that compared nothing has not passed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <regex>

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
  std::optional<std::string> filter;  // ECMAScript regex searched in each benchmark's name
  bool fail_on_missing = false;
  bool fail_on_device_mismatch = false;
};

// A check of the gate that did not pass; `check` is the stable name scripts test for.
struct FailedCheck {
  std::string check;  // "regression", "nothing_compared", "missing", "device_mismatch"
  std::string message;
};

// What the gate concluded beyond the verdicts of the pairs.
struct GateResult {
  std::vector<FailedCheck> failed_checks;
  std::vector<std::string> warnings;
  std::vector<ContextDifference> device_differences;
  std::string device_mismatch;  // empty when the runs name the same device (or do not say)

  int exit_code() const {
    return static_cast<int>(failed_checks.empty() ? ExitCode::ok : ExitCode::check_failed);
  }
};

// Names shown in a one-line message; the table and --json list them all.
constexpr std::size_t kExampleNames = 3;

const CLI::Validator kThresholdPercent =
    real_number(0, std::numeric_limits<double>::max(), false, "a percentage >= 0 (e.g. 5)", "PCT>=0");

const CLI::Validator kAlpha =
    real_number(0, 1, true, "a probability above 0 and at most 1 (e.g. 0.05)", "0<A<=1");

const CLI::Validator kEcmaScriptRegex(
    [](std::string& text) -> std::string {
      try {
        static_cast<void>(std::regex(text, std::regex::ECMAScript));
        return "";
      } catch (const std::regex_error& error) {
        return "'" + text + "' is not an ECMAScript regular expression (" + error.what() + ")";
      }
    },
    "");

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

std::vector<std::string> names_of(const BenchmarkFile& file) {
  std::vector<std::string> names;
  for (const BenchmarkSamples& b : file.benchmarks) names.push_back(b.name);
  return names;
}

// "a, b, c" or "a, b, c, ... (7 more)": enough names to recognise which benchmarks are meant.
std::string example_names(const std::vector<std::string>& names, std::size_t limit = kExampleNames) {
  if (names.size() <= limit) return join_names(names);
  const std::vector<std::string> shown(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(limit));
  return join_names(shown) + ", ... (" + std::to_string(names.size() - limit) + " more)";
}

// "base.json: 2 benchmarks (BM_a, BM_b)"
std::string describe_names(const std::string& source, const std::vector<std::string>& names) {
  if (names.empty()) return source + ": no benchmarks";
  return source + ": " + plural(names.size(), "benchmark", "benchmarks") + " (" + example_names(names) + ")";
}

std::string quoted_filter(const CompareOptions& options) { return "--filter '" + options.filter.value_or("") + "'"; }

// The benchmarks of `file` whose names contain a match of `pattern`.
BenchmarkFile keep_matching(const BenchmarkFile& file, const std::regex& pattern, const CompareOptions& options) {
  BenchmarkFile kept{file.source, file.context, {}};
  try {
    for (const BenchmarkSamples& b : file.benchmarks)
      if (std::regex_search(b.name, pattern)) kept.benchmarks.push_back(b);
  } catch (const std::regex_error& error) {
    // Only a pattern that backtracks without end gets here (error_complexity, error_stack).
    throw InputError(quoted_filter(options) + " could not be matched against the names of " + file.source + " (" +
                     error.what() + "); give a simpler pattern");
  }
  return kept;
}

// "base.json has", "new.json has" or "base.json and new.json have"
std::string empty_sides(const BenchmarkFile& base, const BenchmarkFile& current) {
  if (base.benchmarks.empty() && current.benchmarks.empty()) return base.source + " and " + current.source + " have";
  return (base.benchmarks.empty() ? base.source : current.source) + " has";
}

std::vector<std::string> unmeasured_names(const ComparisonReport& report) {
  std::vector<std::string> names;
  for (const UnmeasuredBenchmark& b : report.unmeasured) names.push_back(b.name);
  return names;
}

// Why a comparison paired no benchmark with samples on both sides. `base_all` and `new_all` are
// the names before --filter, so that a filter matching nothing shows what it could have matched.
std::string explain_nothing_compared(const BenchmarkFile& base, const BenchmarkFile& current,
                                     const ComparisonReport& report, const CompareOptions& options,
                                     const std::vector<std::string>& base_all,
                                     const std::vector<std::string>& new_all) {
  const std::string matching = options.filter ? " matching " + quoted_filter(options) : "";
  const std::string sides = describe_names(base.source, names_of(base)) + "; " +
                            describe_names(current.source, names_of(current));
  std::string why;
  if (options.filter && base.benchmarks.empty() && current.benchmarks.empty() && !(base_all.empty() && new_all.empty()))
    why = quoted_filter(options) + " matches no benchmark name in either file (" +
          describe_names(base.source, base_all) + "; " + describe_names(current.source, new_all) + ")";
  else if (base.benchmarks.empty() || current.benchmarks.empty())
    why = empty_sides(base, current) + " no benchmarks" + matching + " (" + sides + ")";
  else if (report.unmeasured.empty())
    why = "the two files have no benchmark name in common" + matching + " (" + sides + ")";
  else
    why = "the " + plural(report.unmeasured.size(), "benchmark", "benchmarks") + " in both files" + matching +
          " reported an error or a skip instead of a time on a side (" + example_names(unmeasured_names(report)) + ")";
  return why + "; nothing was compared, and a gate that compared nothing has not passed";
}

// Set only when the names overlap: disjoint files fail the check instead.
std::optional<std::string> partial_overlap_warning(const ComparisonReport& report, const BenchmarkFile& base,
                                                   const BenchmarkFile& current) {
  const bool overlap = !report.pairs.empty() || !report.unmeasured.empty();
  if (!overlap || (report.only_in_base.empty() && report.only_in_new.empty())) return std::nullopt;
  return "the two files overlap only in part, and what is in one file alone is not compared: " +
         plural(report.only_in_base.size(), "benchmark", "benchmarks") + " only in " + base.source +
         (report.only_in_base.empty() ? "" : " (" + example_names(report.only_in_base) + ")") + ", " +
         plural(report.only_in_new.size(), "benchmark", "benchmarks") + " only in " + current.source +
         (report.only_in_new.empty() ? "" : " (" + example_names(report.only_in_new) + ")");
}

std::string describe_device_mismatch(const std::vector<ContextDifference>& differences, const BenchmarkFile& base,
                                     const BenchmarkFile& current) {
  std::vector<std::string> fields;
  for (const ContextDifference& d : differences)
    fields.push_back(d.field + " '" + d.base_value + "' vs '" + d.new_value + "'");
  return "the two runs come from different machines (" + base.source + " vs " + current.source + ": " +
         join_names(fields, "; ") + "); a change of time may be the machine's, not the code's";
}

std::vector<std::string> names_with_verdict(const ComparisonReport& report, Verdict verdict) {
  std::vector<std::string> names;
  for (const BenchmarkComparison& pair : report.pairs)
    if (pair.verdict == verdict) names.push_back(pair.name);
  return names;
}

GateResult judge_gate(const ComparisonReport& report, const BenchmarkFile& base, const BenchmarkFile& current,
                      const CompareOptions& options, const std::vector<std::string>& base_all,
                      const std::vector<std::string>& new_all) {
  GateResult gate;
  gate.device_differences = device_differences(base.context, current.context);
  if (!gate.device_differences.empty()) {
    gate.device_mismatch = describe_device_mismatch(gate.device_differences, base, current);
    gate.warnings.push_back(gate.device_mismatch);
  }
  if (const auto overlap = partial_overlap_warning(report, base, current)) gate.warnings.push_back(*overlap);

  const std::vector<std::string> regressions = names_with_verdict(report, Verdict::regression);
  if (!regressions.empty())
    gate.failed_checks.push_back({"regression", plural(regressions.size(), "regression", "regressions") + ": " +
                                                    join_names(regressions)});
  if (report.pairs.empty())
    gate.failed_checks.push_back(
        {"nothing_compared", explain_nothing_compared(base, current, report, options, base_all, new_all)});
  if (options.fail_on_missing && !report.only_in_base.empty())
    gate.failed_checks.push_back(
        {"missing", "--fail-on-missing: " + plural(report.only_in_base.size(), "benchmark", "benchmarks") + " of " +
                        base.source + " missing from " + current.source + ": " + join_names(report.only_in_base)});
  if (options.fail_on_device_mismatch && !gate.device_differences.empty()) {
    // The values are in the warning already; the failure names the fields.
    std::vector<std::string> fields;
    for (const ContextDifference& d : gate.device_differences) fields.push_back(d.field);
    gate.failed_checks.push_back({"device_mismatch", "--fail-on-device-mismatch: the two runs come from different "
                                                     "machines (" + join_names(fields) + " differ)"});
  }
  return gate;
}

void print_gate_messages(const GateResult& gate) {
  for (const std::string& warning : gate.warnings) std::cerr << "ktune: warning: " << warning << "\n";
  for (const FailedCheck& failed : gate.failed_checks) std::cerr << "ktune: check failed: " << failed.message << "\n";
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
  if (report.pairs.empty()) std::cout << "nothing compared: no benchmark has times in both files\n";
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
  std::cout << " (threshold " << options.threshold_percent << "%, alpha " << options.alpha;
  if (options.filter) std::cout << ", " << quoted_filter(options);
  std::cout << ")\n";
}

nlohmann::json device_mismatch_json(const GateResult& gate) {
  if (gate.device_differences.empty()) return nullptr;
  nlohmann::json fields = nlohmann::json::array();
  for (const ContextDifference& d : gate.device_differences)
    fields.push_back({{"field", d.field}, {"base", d.base_value}, {"new", d.new_value}});
  return {{"description", gate.device_mismatch}, {"fields", fields}};
}

nlohmann::json failed_checks_json(const GateResult& gate) {
  nlohmann::json checks = nlohmann::json::array();
  for (const FailedCheck& failed : gate.failed_checks)
    checks.push_back({{"check", failed.check}, {"message", failed.message}});
  return checks;
}

// The same keys whatever the outcome, so that a script never has to test for one.
nlohmann::json report_json(const ComparisonReport& report, const BenchmarkFile& base, const BenchmarkFile& current,
                           const CompareOptions& options, const GateResult& gate) {
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
          {"compared", report.pairs.size()},
          {"regressions", names_with_verdict(report, Verdict::regression)},
          {"improvements", names_with_verdict(report, Verdict::improvement)},
          {"only_in_baseline", report.only_in_base},
          {"only_in_new", report.only_in_new},
          {"filter", options.filter ? nlohmann::json(*options.filter) : nlohmann::json()},
          {"device_mismatch", device_mismatch_json(gate)},
          {"warnings", gate.warnings},
          {"failed_checks", failed_checks_json(gate)},
          {"exit_code", gate.exit_code()}};
}

int run_compare(const CompareOptions& options, const CommonOptions& common) {
  BenchmarkFile base = load_benchmark_json(options.base_file);
  BenchmarkFile current = load_benchmark_json(options.new_file);
  const std::vector<std::string> base_all = names_of(base);
  const std::vector<std::string> new_all = names_of(current);
  if (options.filter) {
    const std::regex pattern(*options.filter, std::regex::ECMAScript);
    base = keep_matching(base, pattern, options);
    current = keep_matching(current, pattern, options);
  }
  ComparisonCriteria criteria;
  criteria.threshold = options.threshold_percent / 100;
  criteria.alpha = options.alpha;
  const ComparisonReport report = compare_benchmarks(base, current, criteria);
  const GateResult gate = judge_gate(report, base, current, options, base_all, new_all);
  if (common.json) print_json(report_json(report, base, current, options, gate));
  else print_table(report, base, current, options);
  print_gate_messages(gate);
  return gate.exit_code();
}

}  // namespace

void register_compare(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<CompareOptions>();
  auto* command = app.add_subcommand(
      "compare", "Compare two Google Benchmark JSON files; exit 1 on a regression or when nothing was compared");
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
      "reported an error or a skip as not measured. When the two files overlap only in part, a\n"
      "warning on stderr counts and names what is in one alone.\n"
      "Gating: the check fails (exit 1) on\n"
      "  - a regression;\n"
      "  - nothing compared: no benchmark name in common (e.g. the wrong baseline), an empty file,\n"
      "    a --filter that matches nothing, or no common benchmark measured on both sides;\n"
      "  - with --fail-on-missing, a benchmark of BASE missing from NEW;\n"
      "  - with --fail-on-device-mismatch, runs from different machines. Their contexts are\n"
      "    compared by backend, device and device_fingerprint when both name a device (ktune bench),\n"
      "    else by host_name; a mismatch is always a warning on stderr.\n"
      "--filter REGEX keeps, on both sides, the benchmarks whose name contains a match of the\n"
      "ECMAScript regular expression (e.g. --filter '^rmsnorm/' or --filter 'fp16|bf16').\n"
      "--json prints one object with the same keys whatever the outcome: compared, regressions,\n"
      "improvements, only_in_baseline, only_in_new, filter, device_mismatch (null or an object),\n"
      "warnings, failed_checks (each {check, message}), exit_code, and the table's details.\n"
      "Exit codes: 0 passed, 1 a check failed (see Gating), 2 bad input (unreadable or malformed\n"
      "file, bad option or --filter; with --json, then only {error, exit_code}).");
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
  auto filter_text = std::make_shared<std::string>();
  auto* filter = command->add_option("--filter", *filter_text,
                                     "Compare only benchmarks whose name contains a match of this ECMAScript regex")
                     ->type_name("REGEX")
                     ->check(kEcmaScriptRegex);
  command->add_flag("--fail-on-missing", options->fail_on_missing,
                    "Fail (exit 1) when a benchmark of BASE is missing from NEW");
  command->add_flag("--fail-on-device-mismatch", options->fail_on_device_mismatch,
                    "Fail (exit 1) when the two runs' contexts name different devices or hosts");
  command->add_flag("--json", common.json, "Print one machine-readable JSON document on stdout");
  command->callback([options, filter, filter_text, &common, &action] {
    if (filter->count() > 0) options->filter = *filter_text;
    action = [options, &common] { return run_compare(*options, common); };
  });
}

}  // namespace ktune::cli

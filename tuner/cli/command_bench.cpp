// `ktune bench`: time the tuned configs over a shape suite, next to the untuned default and the
// copy baseline; Google Benchmark JSON out, history into the database.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/bench/bench_session.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/tune/stop_request.hpp"
#include "tuner/core/errors.hpp"

namespace ktune::cli {
namespace {

struct BenchOptions {
  std::vector<std::string> kernels;
  std::string backend;
  std::string suite;
  std::string shape;
  std::string precision = "fp32";
  int repetitions = 5;
  std::string out;
  std::string tuned_dir;
  bool no_default = false;
  bool no_baseline = false;
  double config_timeout = 60.0;
  double setup_timeout = 600.0;
  double max_seconds_per_repetition = 0.5;
  std::size_t min_samples = 10;
  double max_noise = 0.005;
};

// Prints each benchmark as it finishes: name, median, spread, bandwidth, % of the baseline.
class BenchProgress final : public BenchObserver {
 public:
  explicit BenchProgress(bool enabled) : enabled_(enabled) {}
  void started(const BenchSummary& s, std::size_t planned) override {
    if (!enabled_) return;
    std::cout << "bench on " << s.backend << " (" << s.device.name << "): " << planned << " problems, suite "
              << s.context.value("suite", "") << ", " << s.context.value("repetitions", 0) << " repetitions each\n";
  }
  void finished_item(const BenchItem& item) override {
    if (!enabled_) return;
    std::string line = "  " + item.name;
    line += std::string(line.size() < 58 ? 58 - line.size() : 1, ' ');
    if (item.outcome != "ok") {
      std::cout << line << item.outcome << ": " << first_line(item.message) << "\n" << std::flush;
      return;
    }
    double low = item.repetitions_ns.front(), high = low;
    for (double t : item.repetitions_ns) low = std::min(low, t), high = std::max(high, t);
    char spread[32];
    std::snprintf(spread, sizeof spread, "+-%.1f%%", item.median_ns > 0 ? 50.0 * (high - low) / item.median_ns : 0.0);
    line += format_duration_ns(item.median_ns) + " " + spread + "  " + format_rate(item.bytes / (item.median_ns * 1e-9), "B");
    char percent[64];
    if (const auto of_copy = item.percent_of_baseline()) {
      std::snprintf(percent, sizeof percent, "  %.0f%% of copy", *of_copy);
      line += percent;
    }
    if (const auto of_peak = item.percent_of_peak()) {
      std::snprintf(percent, sizeof percent, "  %.0f%% of peak", *of_peak);
      line += percent;
    }
    std::cout << line << "  [" << item.config_source << "]\n" << std::flush;
  }

 private:
  static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
  bool enabled_;
};

int run_bench_command(const BenchOptions& options, const CommonOptions& common) {
  handle_stop_requests();  // finishes the repetition in flight (kStopGraceSeconds) and records the run as interrupted
  for (const auto& kernel : options.kernels) find_family(kernel);
  if (!options.suite.empty() && !options.shape.empty())
    throw InputError("--suite and --shape both choose the problems; pass one of them");
  const std::string backend = options.backend.empty() ? best_available_backend() : options.backend;
  require_backend_built(backend);
  const std::filesystem::path out(options.out);
  if (std::filesystem::is_directory(out))
    throw InputError("--out " + options.out + " is a directory; give the path of a .json file to write");
  if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path()))
    throw InputError("--out " + options.out + ": the directory " + out.parent_path().string() + " does not exist");

  BenchRequest request;
  request.kernels = options.kernels;
  request.backend = backend;
  if (!options.shape.empty()) {
    if (options.kernels.empty())
      throw InputError("--shape needs --kernel: dims differ between kernels (see ktune list)");
    const auto precision = parse_precision(options.precision);
    if (!precision)
      throw InputError("--precision: unknown precision '" + options.precision + "'; valid: " +
                       join_names(all_precision_names()));
    request.suite.name = "shape";
    request.suite.file = "--shape " + options.shape;
    const auto dims = parse_shape(options.shape);
    for (const auto& kernel : options.kernels)
      request.suite.entries.push_back({kernel, find_family(kernel).make_problem(dims, *precision)});
  } else {
    // GPU suites are sized for a GPU; the CPU gets the same kinds of shapes, smaller.
    request.suite = load_shape_suite(options.suite.empty() ? (backend == "cpu" ? "transformer_cpu" : "transformer")
                                                           : options.suite);
  }
  request.repetitions = options.repetitions;
  request.db = common.db;
  request.tuned_dir = options.tuned_dir;
  if (!request.tuned_dir.empty() && !std::filesystem::is_directory(request.tuned_dir))
    throw InputError("--tuned " + options.tuned_dir + " is not a directory (the --export-dir of ktune tune, e.g. tuned)");
  request.with_default = !options.no_default;
  request.with_baseline = !options.no_baseline;
  request.config_timeout_s = options.config_timeout;
  request.setup_timeout_s = options.setup_timeout;
  request.measure.stopping.max_time_s = options.max_seconds_per_repetition;
  request.measure.stopping.min_samples = options.min_samples;
  request.measure.stopping.max_noise = options.max_noise;
  request.out = out;
  request.argv = common.argv;

  BenchProgress progress(!common.json);
  const BenchSummary summary = run_bench(request, progress);
  if (common.json) {
    print_json(summary.to_json());
  } else if (summary.history_kept) {
    std::printf("wrote %s (Google Benchmark JSON, %zu benchmarks) and bench run %lld to %s in %.1f s\n",
                options.out.c_str(), summary.items.size(), static_cast<long long>(summary.bench_run_id),
                common.db.c_str(), summary.seconds);
  } else {
    std::printf("wrote %s (Google Benchmark JSON, %zu benchmarks) in %.1f s; %s is read-only to you, so this "
                "run is not in its history\n",
                options.out.c_str(), summary.items.size(), summary.seconds, common.db.c_str());
  }
  if (summary.interrupted) return stop_exit_code();
  if (summary.failed > 0) {
    std::cerr << "ktune: " << summary.failed << " benchmark(s) failed; their outcome is in " << options.out
              << " (error_message) and in the database\n";
    return static_cast<int>(ExitCode::check_failed);
  }
  return 0;
}

}  // namespace

void register_bench(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<BenchOptions>();
  auto* command = app.add_subcommand("bench", "Benchmark the tuned configs over a shape suite (Google Benchmark JSON)");
  command->footer(
      "Runs the tuned config of each kernel at each shape of a suite (search_spaces/suites/), each\n"
      "verified against the float64 reference and timed --repetitions times, next to the kernel's\n"
      "untuned default and, for memory-bound kernels, a copy of the same bytes (the measured\n"
      "bandwidth ceiling). Tuned configs come from the database (the best for this device and\n"
      "shape, else from the nearest tuned shape), or with --tuned DIR from the generated tables,\n"
      "by the header's own lookup (fallback chain, nearest tuned shape); each result says where\n"
      "its config came from (config_source, tuned_at); untuned problems run the default and say\n"
      "so. Writes Google Benchmark JSON to --out (compare two with ktune compare or Google\n"
      "Benchmark's compare.py) and stores the run in the database as history for ktune report (a\n"
      "database read-only to you is only read, and the run is not stored). Exit 1 when a benchmark\n"
      "failed, 130 on Ctrl-C.");
  command->add_option("--kernel,-k", options->kernels, "Only this kernel family; repeat for several (default: the suite's)");
  command->add_option("--backend,-b", options->backend, "cpu, cuda, hip or vulkan (default: the best one present)")
      ->check(non_empty("give cpu, cuda, hip or vulkan, or leave out --backend for the best one present"));
  command->add_option("--suite", options->suite,
                      "Suite name (search_spaces/suites/NAME.json) or file (default: transformer on a GPU,\n"
                      "transformer_cpu on the CPU)")
      ->check(non_empty("give a suite name such as transformer, or a suite file"));
  command->add_option("--shape", options->shape, "One shape instead of a suite, e.g. rows=4096,cols=4096 (needs --kernel)")
      ->check(non_empty("give dim=value pairs such as rows=4096,cols=4096"));
  command->add_option("--precision", options->precision, "Precision of --shape: fp32, fp16 or bf16")->capture_default_str();
  command->add_option("--repetitions", options->repetitions, "Independent timings of each benchmark (the samples compare tests)")
      ->capture_default_str()
      ->check(whole_number(1, 1000, "a whole number from 1 to 1000 (e.g. 5)", "1..1000"));
  command->add_option("--out", options->out, "Google Benchmark JSON file to write")
      ->required()
      ->check(non_empty("give the path of a .json file to write"));
  command->add_option("--tuned", options->tuned_dir, "Take tuned configs from the generated tables in DIR (ktune tune's\n"
                      "--export-dir) instead of the database")
      ->check(non_empty("give the directory of generated headers, e.g. tuned"));
  command->add_flag("--no-default", options->no_default, "Do not time the untuned default next to the tuned config");
  command->add_flag("--no-baseline", options->no_baseline, "Do not time the copy baseline");
  command->add_option("--config-timeout", options->config_timeout, "Seconds one repetition may take before its worker is killed")
      ->capture_default_str()
      ->check(real_number(0, 1e6, true, "a number of seconds above 0 (e.g. 60)", "SECONDS>0"));
  command->add_option("--setup-timeout", options->setup_timeout,
                      "Seconds a worker may take to prepare a problem (inputs and float64 reference) before it is killed")
      ->capture_default_str()
      ->check(real_number(0, 1e6, true, "a number of seconds above 0 (e.g. 600)", "SECONDS>0"));
  command->add_option("--max-seconds-per-repetition", options->max_seconds_per_repetition,
                      "Cap on the timed launches of one repetition")
      ->capture_default_str()
      ->check(real_number(0, 1e6, true, "a number of seconds above 0 (e.g. 0.5)", "SECONDS>0"));
  command->add_option("--min-samples", options->min_samples, "Timed launches per repetition at least")
      ->capture_default_str()
      ->check(whole_number(1, 1000000, "a whole number from 1 to 1000000 (e.g. 10)", "1..1000000"));
  command->add_option("--max-noise", options->max_noise, "Stop a repetition once its relative stddev is below this")
      ->capture_default_str()
      ->check(real_number(0, 1, false, "a fraction from 0 to 1 (e.g. 0.005 for 0.5%)", "0..1"));
  add_common_options(*command, common);
  command->callback([options, &common, &action] {
    action = [options, &common] { return run_bench_command(*options, common); };
  });
}

}  // namespace ktune::cli

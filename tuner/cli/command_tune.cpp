// `ktune tune`: tune one or more kernel families on a backend and export the winners.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/bench/shape_suite.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/tune/stop_request.hpp"
#include "tuner/cli/progress_line.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/t1_kernel.hpp"
#include "tuner/strategies/replay.hpp"
#include "tuner/strategies/strategy.hpp"
#include "tuner/tune/export_tuned.hpp"
#include "tuner/tune/hello_timeout.hpp"
#include "tuner/tune/tune_devices.hpp"
#include "tuner/tune/tune_session.hpp"
#ifdef KTUNE_WITH_MPI
#include "tuner/distributed/mpi_remote_ranks.hpp"
#include "tuner/distributed/rank_service.hpp"
#endif

namespace ktune::cli {
namespace {

constexpr double kDefaultSecondsPerKernel = 60.0;

// Finite and positive: NaN, infinities, zero and negative durations are refused (exit 2).
const CLI::Validator kPositiveSeconds =
    real_number(0, 1e6, true, "a number of seconds above 0 and at most 1000000 (e.g. 30)", "SECONDS>0");

struct TuneOptions {
  std::vector<std::string> kernels;
  std::string backend;
  std::vector<std::string> shapes;  // --shape, repeatable
  std::string shapes_file;          // --shapes: a shape suite
  std::string precision;  // empty: each family's default for the backend (fp32, or its GPU default)
  std::string strategy = kDefaultStrategy;
  std::optional<std::size_t> budget;
  bool no_prior = false;
  std::vector<std::string> prior_files;
  std::optional<double> time_limit;
  std::uint64_t seed = 1;
  std::string space_file;
  double config_timeout = 60.0;
  std::optional<double> setup_timeout;
  double max_seconds_per_config = 0.5;
  std::size_t min_samples = 10;
  double max_noise = 0.005;
  bool max_noise_given = false;  // --max-noise on the command line: unsettled configs are not ranked
  double noisy_above = 0.10;
  bool remeasure = false;
  std::string export_dir = "tuned";
  bool no_export = false;
  std::string record_dir;
  std::string t1_spec;
  bool no_verify = false;
  bool no_race = false;
  std::optional<double> atol;
  std::optional<double> rtol;
  bool compile_only = false;
  bool fast_compile = false;
  bool covering_sample = false;
  std::string arch;
  std::string devices;
};

// "busy 91% (kernels 64%, evictions and restores 27%), 212 configs/min"
std::string device_use_text(const DeviceUse& use) {
  char text[160];
  const double per_minute = use.configs_per_minute;
  std::snprintf(text, sizeof text, "busy %.0f%% (kernels %.0f%%, evictions and restores %.0f%%), %.*f configs/min",
                use.busy_share() * 100, use.kernel_share * 100, use.between_share * 100,
                per_minute > 0 && per_minute < 10 ? 1 : 0, per_minute);
  return text;
}

void print_summary(const TuneSummary& s, const std::string& header, double noisy_above) {
  auto line = [](const std::string& label, const std::string& text) {
    std::cout << "  " << label << std::string(11 - std::min<std::size_t>(label.size(), 10), ' ') << text << "\n";
  };
  auto timing = [&](const ConfigTiming& t) {
    const double seconds = t.stats.median_ns * 1e-9;
    char noise[32];
    std::snprintf(noise, sizeof noise, "%.1f%%", t.stats.rel_stddev * 100);
    const bool noisy = t.stats.rel_stddev > noisy_above;
    return format_duration_ns(t.stats.median_ns) + " median (" + std::to_string(t.stats.count) + " samples, " +
           noise + " noise" + (noisy ? ": NOISY, see --max-noise" : "") + "), " + format_rate(s.bytes / seconds, "B") +
           ", " + format_rate(s.flops / seconds, "FLOP");
  };
  std::cout << s.family << " on " << s.backend << " (" << s.device.name << ", " << s.device.architecture << ")\n";
  if (s.devices.size() > 1) line("devices", join_names(s.devices));
  for (const auto& loss : s.lost) line("lost", loss);
  line("problem", s.problem.describe());
  line("space", std::to_string(s.space_valid) + " valid of " + std::to_string(s.space_total) + " (" +
                    s.space_file.filename().string() + ")");
  std::string outcomes;
  for (const auto& [name, count] : s.outcomes) outcomes += (outcomes.empty() ? "" : ", ") + name + " " + std::to_string(count);
  // Which strategy ran ("auto" resolved) and what it started from, so a surprising result can be
  // traced to a misleading prior.
  const bool takes_a_prior = s.strategy == "tpe" || s.strategy == "forest";
  std::string search = s.strategy;
  if (takes_a_prior && s.prior_configs_valid == 0) search += ", from scratch";
  if (takes_a_prior && s.prior_configs_valid > 0) {
    std::vector<std::string> sources;
    if (s.prior_from_files) sources.push_back(std::to_string(s.prior_from_files) + " from --prior");
    if (s.prior_from_database) sources.push_back(std::to_string(s.prior_from_database) + " from earlier tunes");
    if (s.prior_starting_points) sources.push_back(std::to_string(s.prior_starting_points) + " starting points");
    search += ", starting from " + std::to_string(s.prior_configs_valid) + " prior configs valid here (of " +
              join_names(sources) + ")";
  }
  line("search", search);
  if (!s.launch_rule.empty()) {
    line("launch", s.launch_rule);
    if (s.default_launch.contains("launch")) {
      const auto& l = s.default_launch["launch"];
      auto axis = [&](const char* name) { return std::to_string(l.value(name, std::int64_t{1})); };
      line("", "default config: grid " + axis("grid_x") + "x" + axis("grid_y") + "x" + axis("grid_z") + ", block " +
                   axis("block_x") + "x" + axis("block_y") + "x" + axis("block_z") +
                   (l.value("shared_bytes", std::int64_t{0}) > 0 ? ", " + axis("shared_bytes") + " B shared" : ""));
    }
  }
  line("verified", s.verification.empty() ? "-" : s.verification);
  if (s.reference_config) line("reference", s.reference_config->describe());
  line("visited", std::to_string(s.evaluated) + " measured now, " + std::to_string(s.reused) +
                      " reused from the database (" + outcomes + "); " + s.stop_reason);
  if (s.dropped_at_stop > 0)
    line("dropped", std::to_string(s.dropped_at_stop) + " config" + (s.dropped_at_stop == 1 ? "" : "s") +
                        " in flight at the stop, not finished within " + format_duration_ns(kStopGraceSeconds * 1e9) +
                        ": not recorded; a rerun measures " + (s.dropped_at_stop == 1 ? "it" : "them"));
  for (const auto& warning : s.warnings) line("warning", warning);
  if (s.noisy > 0)
    line("NOISY", std::to_string(s.noisy) + " results whose samples spread more than the bound, e.g. " +
                      s.noisy_example + "; --max-noise F refuses to rank such configs");
  if (s.implausible > 0)
    line("IMPLAUSIBLE", std::to_string(s.implausible) + " results faster than the memory allows, e.g. " +
                            s.implausible_example);
  // "best" is this tune's; the header holds the database's fastest for each problem, which an
  // earlier tune may have found.
  if (s.best) {
    line("best", s.best->config.describe() + "  (fastest this tune visited, measured now or reused)");
    line("", timing(*s.best));
  } else {
    line("best", "no config ran correctly in this tune");
  }
  if (s.default_config) {
    line("default", s.default_config->config.describe());
    char speedup[64];
    std::snprintf(speedup, sizeof speedup, " -> tuned is %.2fx faster",
                  s.default_config->stats.median_ns / s.best->stats.median_ns);
    line("", timing(*s.default_config) + speedup);
  }
  if (!header.empty()) line("header", header + "  (the database's fastest for each problem, across tunes)");
  for (const auto& file : s.recorded_files) line("recorded", file.string());
  line("device", device_use_text(s.device_use));
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", s.seconds);
  line("took", took);
}

// One problem to tune: a kernel at a shape and precision (one per kernel and --shape, or per
// entry of a --shapes suite).
struct TuneJob {
  std::string kernel;
  std::map<std::string, std::int64_t> shape;
  Precision precision;
  // A stage of a composed family's problem (attention_block): which, and its place among them.
  std::string composed;
  std::size_t stage = 0, stages = 0;
};

// A composed family (KernelFamily::composition) has no kernel of its own: it is tuned as its
// stages, each at its own problem, the configs the library then chooses for its calls.
std::vector<TuneJob> stage_jobs(const TuneJob& job) {
  const KernelFamily& family = find_family(job.kernel);
  const Problem problem = family.make_problem(job.shape, job.precision);
  const auto composition = family.composition(problem);
  if (!composition) return {job};
  std::vector<TuneJob> stages;
  for (const Composition::Stage& stage : composition->stages)
    stages.push_back({stage.family, stage.dims, job.precision, job.kernel + " " + problem.describe(), stages.size() + 1,
                      composition->stages.size()});
  return stages;
}

bool gpu_backend(const std::string& backend) { return backend != "cpu"; }

// Every kernel at every shape asked for, each checked (dims, precision, size) before anything
// runs: a typo in the last shape of a sweep must not surface after the first kernel's tune.
std::vector<TuneJob> plan_jobs(const TuneOptions& options, const std::vector<std::string>& kernels,
                               std::optional<Precision> precision, const std::string& backend) {
  std::vector<TuneJob> jobs;
  if (!options.shapes_file.empty()) {
    const ShapeSuite suite = load_shape_suite(options.shapes_file);
    for (const SuiteEntry& entry : suite.entries) {
      if (!options.kernels.empty() &&
          std::find(options.kernels.begin(), options.kernels.end(), entry.family) == options.kernels.end())
        continue;
      std::map<std::string, std::int64_t> shape(entry.problem.dims.begin(), entry.problem.dims.end());
      for (TuneJob& stage : stage_jobs({entry.family, shape, entry.problem.precision})) jobs.push_back(std::move(stage));
    }
    if (jobs.empty())
      throw InputError("--shapes " + options.shapes_file + " has no shapes for " +
                       (options.kernels.empty() ? std::string("any kernel") : join_names(options.kernels)) +
                       "; its kernels are listed under \"shapes\"");
    return jobs;
  }
  std::vector<std::map<std::string, std::int64_t>> shapes;
  for (const std::string& text : options.shapes) shapes.push_back(parse_shape(text));
  for (const std::string& kernel : kernels) {
    const KernelFamily& family = find_family(kernel);
    // Unnamed precision and shape: the family's GPU defaults on a GPU, its own elsewhere.
    const Precision chosen = precision ? *precision
                             : gpu_backend(backend) && family.gpu_default_precision() ? *family.gpu_default_precision()
                                                                                    : Precision::fp32;
    const std::vector<std::map<std::string, std::int64_t>> kernel_shapes =
        !shapes.empty()          ? shapes
        : gpu_backend(backend)   ? std::vector<std::map<std::string, std::int64_t>>{family.gpu_default_shape()}
                                 : std::vector<std::map<std::string, std::int64_t>>{{}};
    for (std::size_t i = 0; i < kernel_shapes.size(); ++i) {
      try {
        family.make_problem(kernel_shapes[i], chosen);
      } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + (options.shapes.empty() ? "" : " (--shape " + options.shapes[i] + ", kernel " + kernel + ")"));
      }
      for (TuneJob& stage : stage_jobs({kernel, kernel_shapes[i], chosen})) jobs.push_back(std::move(stage));
    }
  }
  return jobs;
}

// The one JSON document `tune --json` prints, whatever was tuned: the results (one per kernel,
// shape and device model) in a list.
nlohmann::json tune_document(const std::string& backend, nlohmann::json results, bool compile_only, int exit_code) {
  return {{"command", "tune"}, {"backend", backend}, {"compile_only", compile_only},
          {"results", std::move(results)}, {"exit_code", exit_code}};
}

int run_compile_only_command(const TuneOptions& options, TuneRequest request, const std::vector<TuneJob>& jobs,
                             const CommonOptions& common) {
  nlohmann::json results = nlohmann::json::array();
  std::size_t failed = 0;
  for (const TuneJob& job : jobs) {
    const std::string& kernel = job.kernel;
    request.family = kernel;
    request.shape = job.shape;
    request.precision = job.precision;
    const nlohmann::json result =
        run_compile_only(request, options.arch, options.fast_compile ? BuildEffort::fast_check : BuildEffort::full,
                         options.covering_sample);
    failed += result["failed"].get<std::size_t>();
    if (!common.json) {
      std::cout << kernel << " on " << request.backend << " for " << options.arch << ": "
                << result["compiled"] << " of " << result["selected"]
                << (options.covering_sample ? " variants (a covering sample of " + result["space"]["valid"].dump() + " valid)"
                                            : std::string(" valid variants"))
                << " compiled ("
                << result["cached"] << " from the cache), " << result["failed"] << " failed, "
                << result["seconds"].get<double>() << " s\n";
      for (const auto& failure : result["failures"])
        std::cout << "  " << failure["config"].dump() << ": " << failure["log"].get<std::string>() << "\n";
    }
    results.push_back(result);
  }
  const int code = failed == 0 ? 0 : static_cast<int>(ExitCode::check_failed);
  if (common.json) print_json(tune_document(request.backend, std::move(results), true, code));
  return code;
}

int run_tune_command(const TuneOptions& options, const CommonOptions& common) {
  // A tune finishes the configs in flight (for kStopGraceSeconds) and records the run as interrupted; a compile-only
  // sweep has nothing to keep and ends at the signal.
  if (!options.compile_only) handle_stop_requests();
  std::optional<Precision> precision;  // unset: each family's default for the backend
  if (!options.precision.empty()) {
    precision = parse_precision(options.precision);
    if (!precision)
      throw InputError("--precision: unknown precision '" + options.precision + "'; valid: " +
                       join_names(all_precision_names()));
  }
  std::vector<std::string> kernels = options.kernels.empty() ? default_family_names() : options.kernels;
  std::string t1_backend;  // the spec's language's backend, unless --backend says otherwise
  if (!options.t1_spec.empty()) {
    if (!options.kernels.empty()) throw InputError("--t1 tunes the spec's own kernel; leave out --kernel");
    if (!options.space_file.empty()) throw InputError("--t1 brings its own search space; leave out --space");
    if (!options.backend.empty() && options.backend != "cuda" && options.backend != "hip")
      throw InputError("--t1: the spec's kernel runs on the cuda or hip backend, not " + options.backend);
    const std::vector<const KernelFamily*> built_in = all_families();
    T1Options t1_options;
    t1_options.verify = !options.no_verify;
    t1_options.atol = options.atol.value_or(t1_options.atol);
    t1_options.rtol = options.rtol.value_or(t1_options.rtol);
    const KernelFamily& family = register_t1_kernel(options.t1_spec, t1_options);
    for (const KernelFamily* other : built_in)
      if (other->name() == family.name())
        throw InputError(options.t1_spec + ": the benchmark is named '" + family.name() +
                         "' like a kernel family of ktune; rename General.BenchmarkName");
    kernels = {family.name()};
    t1_backend = t1_default_backend(family);
    precision = family.precisions().front();  // the type of the spec's vectors
  }
  if (options.t1_spec.empty() && (options.no_verify || options.atol || options.rtol))
    throw InputError("--no-verify, --atol and --rtol apply to a T1 spec's kernel (--t1): ktune's own families are "
                     "always checked against their float64 reference, within the tolerance of design.md");
  if (options.no_prior && !options.prior_files.empty())
    throw InputError("--prior " + options.prior_files.front() + " and --no-prior contradict each other; pass one of them");
  for (const auto& kernel : kernels) find_family(kernel);  // unknown names fail before any work
  if (!options.space_file.empty() && kernels.size() != 1)
    throw InputError("--space " + options.space_file + " is the search space of one kernel, but this tune has " +
                     std::to_string(kernels.size()) + " (" + join_names(kernels) +
                     "); pass exactly one --kernel with --space");
  if (!options.arch.empty() && !options.compile_only)
    throw InputError("--arch " + options.arch + " applies only with --compile-only (a tune measures the device "
                     "present); add --compile-only, or leave out --arch");
  if (options.fast_compile && !options.compile_only)
    throw InputError("--fast-compile applies only with --compile-only (a tune measures fully optimized variants)");
  if (options.covering_sample && !options.compile_only)
    throw InputError("--covering-sample applies only with --compile-only (a tune's strategy chooses what it measures)");
  if (options.compile_only && (options.budget || options.time_limit))
    throw InputError(std::string(options.budget ? "--budget" : "--time-limit") +
                     " limits what a tune measures; --compile-only compiles every valid variant (pass "
                     "--covering-sample to compile fewer)");
  if (options.compile_only && options.arch.empty())
    throw InputError("--compile-only needs --arch (e.g. --arch sm_90a, or --arch gfx90a with --backend hip)");
  const std::string backend =
      !options.backend.empty() ? options.backend : !t1_backend.empty() ? t1_backend : best_available_backend();
  require_backend_built(backend);
  if (options.compile_only) {
    if (backend == "cpu")
      throw InputError("--compile-only compiles GPU variants, and the cpu backend has no compile step; "
                       "pass --backend cuda, hip or vulkan");
    check_arch(backend, options.arch);
  }
  // The export directory is checked before the tune, not after minutes of measuring.
  const bool no_export = options.no_export;
  if (!options.compile_only && !no_export)
    check_output_dir(options.export_dir, "--export-dir", "or --no-export");
  if (!options.record_dir.empty()) check_output_dir(options.record_dir, "--record", "or leave out --record");

  TuneRequest request;
  request.backend = backend;
  if (!options.shapes_file.empty() && !options.shapes.empty())
    throw InputError("--shape and --shapes both choose the problems; pass one of them");
  if (!options.t1_spec.empty() && (!options.shapes.empty() || !options.shapes_file.empty()))
    throw InputError("--t1 tunes the spec's ProblemSize; leave out --shape and --shapes (edit the spec's ProblemSize)");
  const std::vector<TuneJob> jobs = plan_jobs(options, kernels, precision, backend);
  if (!options.space_file.empty())
    for (const TuneJob& job : jobs)
      if (job.stages)
        throw InputError("--space gives one family's space, and " + job.composed +
                         " is tuned as its stages' families: tune a stage's family with --space instead");
  request.strategy = options.strategy;
  request.budget = options.budget;
  request.time_limit_s = options.time_limit;
  if (!request.budget && !request.time_limit_s) request.time_limit_s = kDefaultSecondsPerKernel;
  request.seed = options.seed;
  request.db = common.db;
  if (!options.space_file.empty()) request.space_file = options.space_file;
  request.config_timeout_s = options.config_timeout;
  request.setup_timeout_s = options.setup_timeout;
  request.measure.stopping.max_time_s = options.max_seconds_per_config;
  request.measure.stopping.min_samples = options.min_samples;
  request.measure.stopping.max_noise = options.max_noise;
  request.strict_noise = options.max_noise_given;
  request.noisy_above = options.noisy_above;
  request.remeasure = options.remeasure;
  request.argv = common.argv;
  request.use_prior = !options.no_prior;
  request.race = !options.no_race;
  for (const std::string& file : options.prior_files) request.prior_spaces.push_back(load_prior_space(file));
  if (!options.record_dir.empty()) request.record_dir = options.record_dir;
  if (!options.t1_spec.empty()) request.t1_spec = options.t1_spec;

  if (options.compile_only) return run_compile_only_command(options, request, jobs, common);

  // Without --devices: device 0 (its worker says exactly what is missing when there is none);
  // in an MPI job, the device numbered by the rank's place on its host, one GPU per rank.
  std::vector<int> device_indices{0};
  if (!options.devices.empty()) device_indices = parse_device_list(options.devices, backend, device_count(backend));
#ifdef KTUNE_WITH_MPI
  MpiJob mpi;  // started only under mpirun; outlives the devices and ranks below
  std::unique_ptr<MpiRemoteRanks> remote;
  if (mpi.active()) {
    if (options.devices.empty()) device_indices = {mpi.local_rank() % std::max(1, device_count(backend))};
    if (mpi.rank() != 0) return serve_rank(mpi, backend, device_indices);
    remote = std::make_unique<MpiRemoteRanks>(mpi, kHelloTimeoutSeconds);
  }
  TuneDevices devices(backend, device_indices, remote.get());
#else
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE"); size && std::atoi(size) > 1)
    throw BackendUnavailable("this ktune was built without MPI, so its ranks would each tune alone; rebuild with "
                             "libopenmpi-dev installed (KTUNE_WITH_MPI) or run ktune without mpirun");
  TuneDevices devices(backend, device_indices);
#endif
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> failed_kernels;  // no config ran correctly
  std::vector<std::string> record_errors;   // --record could not write
  bool interrupted = false;
  // The stages' best medians of the composed problem being tuned, summed per device model (-1: a
  // stage had no correct config).
  std::vector<double> composed_ns;
  for (const TuneJob& job : jobs) {
    const std::string& kernel = job.kernel;
    request.family = kernel;
    request.shape = job.shape;
    request.precision = job.precision;
    if (job.stages && !common.json)
      std::cout << job.composed << ": stage " << job.stage << " of " << job.stages << ", " << kernel << "\n";
    ProgressLine progress(!common.json, request.time_limit_s);
    const std::vector<TuneSummary> summaries = run_tune(request, devices, progress);
    if (job.stage == 1) composed_ns.assign(summaries.size(), 0.0);
    for (std::size_t model = 0; job.stages && model < summaries.size() && model < composed_ns.size(); ++model)
      composed_ns[model] = summaries[model].best && composed_ns[model] >= 0
                               ? composed_ns[model] + summaries[model].best->stats.median_ns
                               : -1.0;
    for (const TuneSummary& summary : summaries) {  // one per device model
      std::string header;
      nlohmann::json json = summary.to_json();
      if (job.stages) json["stage_of"] = {{"problem", job.composed}, {"stage", job.stage}, {"stages", job.stages}};
      // A tune where nothing ran correctly leaves an existing header alone.
      if (!no_export && summary.best) {
        Store store = Store::open(request.db);
        // A T1 kernel's header takes its parameters and default from the spec.
        const std::optional<SearchSpace> t1_space =
            options.t1_spec.empty() ? std::nullopt : std::optional<SearchSpace>(load_t1_space(options.t1_spec));
        const auto exported = export_tuned_family(store, kernel, backend, options.export_dir,
                                                  t1_space ? &*t1_space : nullptr);
        header = exported.header.string();
        json["header"] = header;
      }
      if (!summary.best) failed_kernels.push_back(kernel);
      if (!summary.record_error.empty()) record_errors.push_back(summary.record_error);
      if (!common.json) {
        print_summary(summary, header, options.noisy_above);
        if (&job != &jobs.back() || &summary != &summaries.back()) std::cout << "\n";
      }
      results.push_back(json);
      interrupted |= summary.interrupted;
    }
    if (job.stages && job.stage == job.stages && !common.json)
      for (std::size_t model = 0; model < composed_ns.size(); ++model)
        std::cout << "\n" << job.composed << ": "
                  << (composed_ns[model] >= 0
                          ? "its stages' best medians sum to " + format_duration_ns(composed_ns[model]) +
                                " (each stage tuned alone, at its own problem)"
                          : std::string("a stage has no correct config"))
                  << "\n";
    if (interrupted) break;
  }
  const int code = interrupted ? stop_exit_code()
                   : !record_errors.empty() || !failed_kernels.empty() ? static_cast<int>(ExitCode::check_failed)
                                                                     : 0;
  if (common.json) print_json(tune_document(backend, std::move(results), false, code));
  if (interrupted) return code;
  if (!record_errors.empty())
    std::cerr << "ktune: error: the tune finished and its results are stored, but --record could not write: "
              << join_names(record_errors, "; ") << "\n";
  if (!failed_kernels.empty())
    std::cerr << "ktune: no config of " << join_names(failed_kernels)
              << " ran correctly; see the outcomes above and `ktune list`\n";
  return code;
}

}  // namespace

void register_tune(CLI::App& app, CommonOptions& common, Action& action) {
  auto options = std::make_shared<TuneOptions>();
  auto* command = app.add_subcommand("tune", "Tune kernel families and export the winners (the main job)");
  command->footer(
      "Enumerates the valid configs, verifies and times each in a worker process, stores every\n"
      "result in the database and exports the winners to <export-dir>/<backend>/<kernel>.hpp. Rerunning\n"
      "resumes: configs already measured for this device, kernel source, problem and config are\n"
      "reused, not measured again. Without --budget or --time-limit each kernel gets 60 s of\n"
      "evaluation. With no arguments: the default kernels (rmsnorm, swiglu) on the best backend\n"
      "present. Ctrl-C gives the configs in flight 0.5 s to finish, drops the others (a rerun\n"
      "measures them) and exits 130; results are kept.\n"
      "Several GPUs: --devices all measures on every GPU of this host at once. Several hosts:\n"
      "mpirun --enable-recovery -n R ktune tune ...: rank 0 runs the strategy and keeps the\n"
      "database, every rank measures on its GPU (the one numbered by its place on its host, or\n"
      "its --devices); a rank that dies loses only its configs in flight, which run elsewhere\n"
      "(--enable-recovery keeps mpirun from ending the job when one rank dies).");
  command->add_option("--kernel,-k", options->kernels, "Kernel family to tune; repeat for several (see ktune list)");
  command->add_option("--backend,-b", options->backend, "cpu, cuda, hip or vulkan (default: the best one present)")
      ->check(non_empty("give cpu, cuda, hip or vulkan, or leave out --backend for the best one present"));
  command->add_option("--shape", options->shapes,
                      "Problem dims, e.g. rows=256,cols=1024 (default: the family's; on a GPU, gemm takes\n"
                      "m=n=k=4096 and flash_attention 32 heads over 2048 tokens); repeat to sweep\n"
                      "several shapes: every kernel is tuned at each, and every shape is checked against\n"
                      "every kernel before anything runs")
      ->check(non_empty("give dim=value pairs such as rows=256,cols=1024, or leave out --shape for the family's "
                        "default (see ktune list)"));
  command->add_option("--shapes", options->shapes_file,
                      "A shape suite (a name under search_spaces/suites, e.g. transformer, or a JSON file:\n"
                      "{\"shapes\": {\"rmsnorm\": [{\"rows\": 4096, \"cols\": 4096}, ...]}, \"precisions\": [\"bf16\"]}):\n"
                      "tunes each of its kernels (those of --kernel, when given) at each of its shapes and\n"
                      "precisions")
      ->check(non_empty("give a suite name such as transformer or a suite JSON file"));
  command->add_option("--precision", options->precision,
                      "fp32, fp16, bf16, tf32 or fp8_e4m3 (what the family supports; ktune list). Default:\n"
                      "fp32 on the cpu backend; on a GPU, bf16 for gemm and flash_attention (fp32 for the rest)")
      ->check(non_empty("give a precision such as fp32 or bf16, or leave out --precision"));
  command->add_option("--strategy", options->strategy, "auto, forest (model-based: a random forest on the ranks of the\n"
                      "times, with expected improvement), tpe (model-based: a tree-structured Parzen estimator),\n"
                      "random (sampling without replacement), brute_force (enumeration order), annealing\n"
                      "(simulated annealing between neighbouring configs), genetic (a genetic algorithm)\n"
                      "or differential_evolution; each covers the whole space when unlimited. auto, the\n"
                      "default: tpe when a prior config (database, --prior or the space's starting points)\n"
                      "is valid here, forest otherwise; what scored best on recorded GPU spaces with and\n"
                      "without a prior (ktune replay, reports/search.md)")->capture_default_str();
  command->add_flag("--no-prior", options->no_prior,
                    "Do not start forest or tpe from the best configs of this kernel and backend measured\n"
                    "for other problems or devices in the database, nor from those of other kernels with\n"
                    "the same parameters, nor from the space's starting points (configs that were fast on\n"
                    "the spaces recorded so far, tried after the database's); the default strategy, auto,\n"
                    "then runs forest (reports/search.md)");
  command->add_option("--prior", options->prior_files,
                      "A recorded space (Kernel Tuner cache or T4 results, .json or .json.gz: from\n"
                      "`ktune tune --record`, Kernel Tuner or another tuner) whose 16 fastest configs forest\n"
                      "and tpe try first, before the database's; repeat for several (the closest problem\n"
                      "size first). Configs are matched by parameter names and values; those not valid\n"
                      "here are skipped")
      ->check(CLI::ExistingFile);
  command->add_option("--budget", options->budget, "At most N configs per kernel (reused ones count)")
      ->check(whole_number(1, std::numeric_limits<std::size_t>::max() / 2,
                           "a whole number of configs of at least 1 (e.g. 50)", "N>=1"));
  command->add_option("--time-limit", options->time_limit, "At most SEC seconds of evaluation per kernel (reused results count\n"
                      "with the time they took when measured)")
      ->check(kPositiveSeconds);
  command->add_option("--seed", options->seed, "Seed of the strategy and of the random inputs")
      ->capture_default_str()
      ->check(whole_number(0, std::numeric_limits<std::uint64_t>::max(), "a whole number of at least 0 (e.g. 7)"));
  command->add_option("--t1", options->t1_spec,
                      "Tune the kernel of a T1 spec (Kernel Tuner/KTT/BAT JSON): its KernelFile (a plain\n"
                      "__global__ function, an extern \"C\" one or a template instance), arguments (ReadWrite\n"
                      "vectors restored before every launch, MemType Constant copied to the __constant__\n"
                      "symbol), parameters and conditions, launched as Kernel Tuner launches it (grid =\n"
                      "ProblemSize / GridDiv, block = block_size_x/y/z; GlobalSize without GridDiv). Outputs\n"
                      "are checked against its ReferenceArguments, else against the output of its default\n"
                      "config (else the first config that runs), within --atol/--rtol. CUDA through NVRTC,\n"
                      "or HIP through hiprtc (the spec's Language, unless --backend says otherwise). The\n"
                      "header exported holds the spec's parameters")
      ->check(CLI::ExistingFile);
  command->add_flag("--no-race", options->no_race,
                    "Time every config to its stopping rule; by default a config whose median is over 1.25x\n"
                    "the best so far stops once it has its minimum samples (it cannot be the winner)");
  command->add_flag("--no-verify", options->no_verify,
                    "With --t1: do not check outputs (every result's error is -1; the summary says so)");
  command->add_option("--atol", options->atol,
                      "With --t1: absolute tolerance of the output check, |got - expected| <= atol + rtol |expected|\n"
                      "element by element (numpy.allclose, as Kernel Tuner checks; default 1e-6)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--rtol", options->rtol, "With --t1: relative tolerance of the output check (default 1e-5)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--space", options->space_file, "Search-space JSON instead of search_spaces/<kernel>.<backend>.json")
      ->check(non_empty("give the path of a search-space JSON file, or leave out --space for the kernel's own"));
  command->add_option("--config-timeout", options->config_timeout,
                      "Seconds a config may take (verification and timing) before its worker is killed")
      ->capture_default_str()
      ->check(kPositiveSeconds);
  command->add_option("--setup-timeout", options->setup_timeout,
                      "Seconds a worker may take to prepare the problem (inputs and float64 reference) before it is "
                      "killed and the tune fails (default 600, or the --time-limit when shorter, at least 60)")
      ->check(kPositiveSeconds);
  command->add_option("--max-seconds-per-config", options->max_seconds_per_config,
                      "Cap on the timed samples of one config")
      ->capture_default_str()
      ->check(kPositiveSeconds);
  command->add_option("--min-samples", options->min_samples, "Timed samples at least")
      ->capture_default_str()
      ->check(whole_number(1, 1000000, "a whole number from 1 to 1000000 (e.g. 10)", "1..1000000"));
  auto* max_noise = command->add_option("--max-noise", options->max_noise,
                      "Stop sampling once the relative stddev is below this. Given on the command line, it is\n"
                      "also a bound: a config whose samples never settle under it (within --max-seconds-per-\n"
                      "config) is recorded as noisy and not ranked, and stored results that did not settle\n"
                      "under it are measured again")
      ->capture_default_str()
      ->check(real_number(0, 1, false, "a fraction from 0 to 1 (e.g. 0.005 for 0.5%)", "0..1"));
  command->add_option("--noisy-above", options->noisy_above,
                      "Flag a result whose relative stddev is above this (NOISY on the summary and the\n"
                      "progress line, \"noisy\" in its record and the JSON); it is still ranked")
      ->capture_default_str()
      ->check(real_number(0, 1000, true, "a fraction above 0 (e.g. 0.1 for 10%)", "F>0"));
  command->add_flag("--remeasure", options->remeasure,
                    "Measure every visited config again, whatever the database holds (without it, a stored\n"
                    "result is reused unless it has fewer samples than --min-samples, or did not settle under\n"
                    "an explicit --max-noise, or timed out under a shorter --config-timeout)");
  command->add_option("--export-dir", options->export_dir, "Where the generated headers go")
      ->capture_default_str()
      ->check(non_empty("give a directory, or pass --no-export"));
  command->add_flag("--no-export", options->no_export, "Do not write generated headers");
  command->add_option("--record", options->record_dir,
                      "Also write the visited configs of each tune to DIR as a Kernel Tuner cache and as\n"
                      "T4 results (a brute_force tune records the whole space, for ktune replay)")
      ->check(non_empty("give a directory, or leave out --record"));
  command->add_flag("--compile-only", options->compile_only,
                    "Compile every valid variant (GPU backends) without running anything; needs --arch; "
                    "exit 1 if any fails");
  command->add_flag("--fast-compile", options->fast_compile,
                    "With --compile-only: have the compiler trade code quality for speed (NVRTC's\n"
                    "--Ofast-compile=mid, 2-4x faster; hiprtc's -O0; every compiler stage still runs, so a\n"
                    "variant that does not build still fails). For checking variants in CI: a tune never\n"
                    "reuses these binaries");
  command->add_flag("--covering-sample", options->covering_sample,
                    "With --compile-only: compile only a covering sample of the valid variants: every value\n"
                    "of every parameter, and every pair of values of two parameters, that valid variants\n"
                    "have, appears in some compiled variant (chosen in the order --seed shuffles; a few\n"
                    "percent of a large space). For CI; the full sweep compiles every variant");
  command->add_option("--arch", options->arch,
                      "Target architecture for --compile-only: sm_90a, sm_80... (cuda), gfx90a, gfx940,\n"
                      "gfx1030 (hip: the targets of Debian's hiprtc 5.2), or nvidia, lavapipe (vulkan: whose\n"
                      "limits select the variants; SPIR-V itself has no architecture)")
      ->check(non_empty("give a GPU architecture such as sm_90a or gfx90a"));
  command->add_option("--devices", options->devices,
                      "Devices to measure on at once: all, or indices such as 0,2 (default 0). Each gets\n"
                      "a worker; identical devices share one record, other models are tuned in turn")
      ->check(non_empty("give all, or device indices such as 0,2"));
  add_common_options(*command, common);
  command->callback([options, &common, &action, max_noise] {
    options->max_noise_given = max_noise->count() > 0;
    action = [options, &common] { return run_tune_command(*options, common); };
  });
}

}  // namespace ktune::cli

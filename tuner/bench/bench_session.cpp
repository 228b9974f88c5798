#include "tuner/bench/bench_session.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "ktune/build_info.hpp"
#include "tuner/backends/cpu/cpu_device.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/bench/bench_config.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/tune/hello_timeout.hpp"
#include "tuner/tune/host_name.hpp"
#include "tuner/tune/input_seed.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/tune/space_files.hpp"
#include "tuner/tune/stop_request.hpp"
#include "tuner/worker/compile_processes.hpp"
#include "tuner/worker/worker_client.hpp"

namespace ktune {
namespace {


// The problem of the copy family (its one dim counts the elements copied) that moves as many
// bytes as `bytes_moved`, read plus written, at `precision`.
Problem copy_problem_for_bytes(const KernelFamily& copy, double bytes_moved, Precision precision) {
  const std::string elements_dim = copy.dims().front().name;
  const double bytes_per_element = copy.byte_count(copy.make_problem({{elements_dim, 1}}, precision));
  const auto elements =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(bytes_moved / bytes_per_element)));
  return copy.make_problem({{elements_dim, elements}}, precision);
}

// Google Benchmark's context fields, and what a regression dashboard needs to tell runs apart:
// host, CPU, device, driver, compiler, ktune version and commit.
// Google Benchmark's cache list from the host CPU's limits (how many cores share one is not known
// here, so num_sharing is 0).
nlohmann::json caches_of(const DeviceInfo& host) {
  nlohmann::json caches = nlohmann::json::array();
  const std::vector<std::tuple<const char*, int, const char*>> levels{
      {"l1_bytes", 1, "Data"}, {"l2_bytes", 2, "Unified"}, {"l3_bytes", 3, "Unified"}};
  for (const auto& [limit, level, type] : levels)
    if (const auto found = host.limits.find(limit); found != host.limits.end() && found->second > 0)
      caches.push_back({{"type", type}, {"level", level}, {"size", found->second}, {"num_sharing", 0}});
  return caches;
}

nlohmann::json make_context(const BenchRequest& request, const DeviceInfo& device) {
  const DeviceInfo host = describe_host_cpu();
  double load[3] = {0, 0, 0};
  const int loads = getloadavg(load, 3);
  utsname system{};
  uname(&system);
  nlohmann::json context = {
      {"date", utc_now("%Y-%m-%dT%H:%M:%S+00:00")},
      {"host_name", host_name()},
      {"executable", request.argv.empty() ? std::string("ktune") : request.argv.front()},
      {"num_cpus", std::max(1u, std::thread::hardware_concurrency())},
      {"mhz_per_cpu", 0},
      {"cpu_scaling_enabled", false},
      {"caches", caches_of(host)},
      {"load_avg", loads == 3 ? nlohmann::json{load[0], load[1], load[2]} : nlohmann::json::array()},
      {"library_build_type", "release"},
      {"ktune_version", build_info::version},
      {"git_commit", build_info::git_commit},
      {"os", std::string(system.sysname) + " " + system.release},
      {"host_compiler", std::string("g++ ") + __VERSION__},
      {"backend", request.backend},
      {"device", device.name},
      {"device_vendor", device.vendor},
      {"device_architecture", device.architecture},
      {"device_fingerprint", device.fingerprint},
      {"device_properties", device.properties},
      // The same facts under plain names: what a dashboard groups runs by.
      {"driver", device.properties.contains("driver_version") ? device.properties["driver_version"].dump() : ""},
      {"runtime", device.properties.contains("nvrtc_version")
                      ? "NVRTC " + device.properties["nvrtc_version"].get<std::string>()
                      : std::string("compiled into ktune")},
      {"peak_memory_bytes_per_second", peak_memory_bandwidth(device) ? nlohmann::json(*peak_memory_bandwidth(device))
                                                                       : nlohmann::json()},
      {"cpu", host.name},
      {"cpu_architecture", host.architecture},
      {"suite", request.suite.name},
      {"repetitions", request.repetitions},
      {"time_per_repetition", "median of the repetition's timed launches"}};
  return context;
}

std::string label_of(const BenchItem& item) { return item.config.describe() + " (" + item.config_source + ")"; }

BenchmarkRecord record_of(const BenchItem& item) {
  BenchmarkRecord record;
  record.name = item.name;
  record.label = label_of(item);
  record.repetitions_ns = item.repetitions_ns;
  record.iterations = item.iterations;
  record.bytes = item.bytes;
  record.flops = item.flops;
  record.baseline_ns = item.baseline_ns;
  record.peak_bytes_per_second = item.peak_bytes_per_second;
  if (item.outcome != "ok") record.error_message = item.outcome + ": " + item.message;
  return record;
}


// What one family needs on this device: its space, compiled variants and the database's ids.
struct FamilyOnDevice {
  const KernelFamily* family = nullptr;
  SearchSpace space;
  std::int64_t kernel_id = 0;
};

}  // namespace

std::optional<double> BenchItem::percent_of_baseline() const {
  if (!baseline_ns || !(median_ns > 0)) return std::nullopt;
  return 100.0 * *baseline_ns / median_ns;
}

std::optional<double> BenchItem::percent_of_peak() const {
  if (!peak_bytes_per_second || !(median_ns > 0)) return std::nullopt;
  return 100.0 * bytes / (median_ns * 1e-9) / *peak_bytes_per_second;
}

std::string benchmark_name(const std::string& backend, const Problem& problem) {
  std::string dims;
  for (const auto& [name, value] : problem.dims) dims += (dims.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return problem.family + "/" + backend + "/" + dims + "/" + std::string(to_string(problem.precision));
}

nlohmann::json BenchSummary::to_json() const {
  nlohmann::json items_json = nlohmann::json::array();
  for (const BenchItem& item : items) {
    nlohmann::json entry = {{"name", item.name},
                            {"role", item.role},
                            {"kernel", item.family},
                            {"problem", item.problem.to_json()},
                            {"config", item.config.to_json()},
                            {"config_source", item.config_source},
                            {"tuned_at", item.tuned_at ? item.tuned_at->to_json() : nlohmann::json(nullptr)},
                            {"outcome", item.outcome},
                            {"repetitions_ns", item.repetitions_ns},
                            {"median_ns", std::isfinite(item.median_ns) ? nlohmann::json(item.median_ns) : nlohmann::json()},
                            {"error", item.error}};
    if (!item.message.empty()) entry["message"] = item.message;
    if (!item.baseline_name.empty()) entry["baseline"] = item.baseline_name;
    if (const auto percent = item.percent_of_baseline()) entry["percent_of_baseline"] = *percent;
    if (const auto percent = item.percent_of_peak()) entry["percent_of_peak_bandwidth"] = *percent;
    if (item.median_ns > 0) entry["bytes_per_second"] = item.bytes / (item.median_ns * 1e-9);
    items_json.push_back(std::move(entry));
  }
  const nlohmann::json run_id = history_kept ? nlohmann::json(bench_run_id) : nlohmann::json();  // null: not stored
  return {{"backend", backend},     {"device", device.name}, {"bench_run_id", run_id}, {"benchmarks", items_json},
          {"failed", failed},       {"interrupted", interrupted}, {"seconds", seconds}};
}

BenchSummary run_bench(const BenchRequest& request, BenchObserver& observer) {
  const auto start = std::chrono::steady_clock::now();
  require_backend_built(request.backend);
  if (request.repetitions < 1) throw InputError("--repetitions: must be at least 1");

  // Which suite entries this bench runs, and each family's space: all checked before the device opens.
  std::vector<const SuiteEntry*> entries;
  std::map<std::string, FamilyOnDevice> families;
  auto add_family = [&](const std::string& name) {
    if (families.count(name)) return;
    FamilyOnDevice on_device;
    on_device.family = &find_family(name);
    on_device.space = SearchSpace::load(default_space_file(name, request.backend));
    families.emplace(name, std::move(on_device));
  };
  for (const std::string& kernel : request.kernels) find_family(kernel);
  std::set<std::string> problems_taken;  // family;problem key: a kernel given twice runs once
  for (const SuiteEntry& entry : request.suite.entries) {
    if (!problems_taken.insert(entry.family + ";" + entry.problem.key()).second) continue;
    if (!request.kernels.empty() &&
        std::find(request.kernels.begin(), request.kernels.end(), entry.family) == request.kernels.end())
      continue;
    if (!std::filesystem::exists(default_space_file(entry.family, request.backend))) {
      if (!request.kernels.empty())
        throw InputError("--kernel " + entry.family + ": has no search space for the " + request.backend +
                         " backend (" + default_space_file(entry.family, request.backend).string() + ")");
      continue;  // a family this backend does not have
    }
    add_family(entry.family);
    entries.push_back(&entry);
  }
  for (const std::string& kernel : request.kernels)
    if (std::none_of(entries.begin(), entries.end(), [&](const SuiteEntry* e) { return e->family == kernel; }))
      throw InputError("--kernel " + kernel + ": the suite " + request.suite.file.string() +
                       " has no shapes for it; add some, or pass --shape");
  if (entries.empty())
    throw InputError(request.suite.file.string() + ": no shape of this suite is for a kernel the " + request.backend +
                     " backend has");
  if (request.with_baseline) add_family("copy");

  // The device first: a missing backend or GPU must not leave a new database behind.
  WorkerClient worker(request.backend, request.device_index);
  BenchSummary summary;
  summary.backend = request.backend;
  summary.device = worker.hello(kHelloTimeoutSeconds);
  summary.context = make_context(request, summary.device);

  // The run is kept as history where the user may write the database; a shared results file
  // they may only read still gives bench its tuned configs, and the run is not stored.
  Store store = Store::open_as_permitted(request.db);
  summary.history_kept = !store.read_only();
  if (summary.history_kept) {
    store.abandon_dead_runs(host_name());
    const auto device_id = store.upsert_device(summary.device);
    for (auto& [name, on_device] : families)
      on_device.kernel_id =
          store.upsert_kernel(name, request.backend, kernel_source_hash(*on_device.family, request.backend));
    BenchRunInfo run{build_info::version, build_info::git_commit, request.argv, host_name(),
                     request.suite.name, request.repetitions, summary.context};
    summary.bench_run_id = store.begin_bench_run(run, device_id);
  }
  bool finished = !summary.history_kept;  // nothing to mark failed without a stored run
  struct RunGuard {
    Store& store;
    std::int64_t id;
    bool& finished;
    ~RunGuard() {
      if (!finished) try {
          store.finish_bench_run(id, "failed");
        } catch (...) {  // the original error matters more
        }
    }
  } guard{store, summary.bench_run_id, finished};
  BenchConfigChooser chooser(store, request.tuned_dir);

  // Times one config of one problem `repetitions` times (compiled once) and stores the result.
  auto measure = [&](const std::string& role, const Problem& problem, const ChosenConfig& chosen,
                     const std::string& name, const std::string& baseline_name,
                     std::optional<double> baseline_ns) -> BenchItem {
    FamilyOnDevice& on_device = families.at(problem.family);
    const KernelFamily& family = *on_device.family;
    BenchItem item;
    item.name = name;
    item.role = role;
    item.family = family.name();
    item.problem = problem;
    item.config = chosen.config;
    item.config_source = chosen.source;
    item.tuned_at = chosen.tuned_at;
    item.baseline_name = baseline_name;
    item.baseline_ns = baseline_ns;
    if (family.memory_bound()) item.peak_bytes_per_second = peak_memory_bandwidth(summary.device);
    item.bytes = family.byte_count(problem);
    item.flops = family.flop_count(problem);
    const SpaceContext context = make_context(problem, summary.device);
    VariantBuild build;
    // NVRTC and hiprtc build in a compile process, which a stop can kill (stop_request.hpp).
    const auto builder = make_measured_variant_builder(request.backend, family, problem,
                                                       summary.device.properties.value("compile_arch", ""), 1,
                                                       on_device.space.launch_only_names());
    bool built_ok = true;
    if (builder) {
      const BuiltVariant built = builder->get(0, chosen.config);
      build = built.build;
      if (!built.ok && workers_abandoned()) return item;  // the stop killed its compile: incomplete, not kept
      if (!built.ok) {
        built_ok = false;
        item.outcome = std::string(to_string(Outcome::compile_error));
        item.message = built.log;
      }
    }
    if (built_ok) {
      build.launch = launch_geometry(on_device.space, chosen.config, context);
      MeasureSettings settings = request.measure;
      settings.seed = mix_seed(1, problem.key());
      for (int r = 0; r < request.repetitions && !g_stop_requested.load(); ++r) {
        EvaluationResult result;
        try {
          result = worker.evaluate(problem, chosen.config, build, settings, request.config_timeout_s,
                                   request.setup_timeout_s);
        } catch (const KtuneError&) {
          if (workers_abandoned()) break;  // the stop killed the worker while it prepared
          throw;
        }
        // Cut short by the stop (stop_request.hpp): left incomplete, so it is not kept.
        if (workers_abandoned() && result.outcome != Outcome::ok) break;
        if (result.outcome != Outcome::ok) {
          item.outcome = std::string(to_string(result.outcome));
          item.message = result.message;
          break;
        }
        item.repetitions_ns.push_back(result.stats.median_ns);
        item.iterations.push_back(result.stats.count);
        item.error = std::max(item.error, result.error);
      }
    }
    item.median_ns = median(item.repetitions_ns);
    return item;
  };

  auto write_output = [&] {
    std::vector<BenchmarkRecord> records;
    for (const BenchItem& item : summary.items) records.push_back(record_of(item));
    write_file_atomically(request.out,
                          make_benchmark_json(summary.context, records).dump(2, ' ', false,
                                                                             nlohmann::json::error_handler_t::replace) + "\n",
                          "--out");
  };
  // Ctrl-C stops after the repetition in flight: a benchmark cut short has fewer repetitions than
  // asked for and is not kept (its samples would pass for a full run in ktune compare).
  auto complete = [&](const BenchItem& item) {
    return item.outcome != "ok" || item.repetitions_ns.size() == static_cast<std::size_t>(request.repetitions);
  };
  // A finished benchmark goes to the database (its own transaction; unless only read), the JSON
  // file and the screen.
  auto keep = [&](const BenchItem& item) {
    if (!complete(item)) return;
    if (summary.history_kept) {
      BenchResultRecord stored{item.name, item.role, families.at(item.family).kernel_id, store.upsert_problem(item.problem),
                               item.config, item.config_source, item.baseline_name,
                               parse_outcome(item.outcome).value_or(Outcome::ok), item.message, item.repetitions_ns,
                               item.bytes, item.flops, item.error};
      store.record_bench_result(summary.bench_run_id, stored);
    }
    if (item.outcome != "ok") ++summary.failed;
    summary.items.push_back(item);
    observer.finished_item(summary.items.back());
    write_output();
  };

  std::map<std::string, double> baseline_medians;  // by baseline benchmark name
  const std::size_t planned = entries.size();
  observer.started(summary, planned);
  for (const SuiteEntry* entry : entries) {
    if (g_stop_requested.load()) break;
    FamilyOnDevice& on_device = families.at(entry->family);
    const KernelFamily& family = *on_device.family;
    const Problem& problem = entry->problem;
    const SpaceContext context = make_context(problem, summary.device);

    std::optional<double> baseline_ns;
    std::string baseline_name;
    if (request.with_baseline && family.memory_bound() && family.name() != "copy") {
      FamilyOnDevice& copy_family_on_device = families.at("copy");
      const Problem copy =
          copy_problem_for_bytes(*copy_family_on_device.family, family.byte_count(problem), problem.precision);
      baseline_name = benchmark_name(request.backend, copy);
      if (!baseline_medians.count(baseline_name)) {
        const ChosenConfig chosen = chooser.choose(*copy_family_on_device.family, request.backend, summary.device,
                                                   copy, copy_family_on_device.space, make_context(copy, summary.device));
        BenchItem item = measure("baseline", copy, chosen, baseline_name, "", std::nullopt);
        // A ceiling must be the fastest copy at hand: without a config tuned for exactly this
        // size, the default is timed too and the faster of the two is the baseline.
        const auto& copy_default = copy_family_on_device.space.default_config();
        if (chosen.source != "database" && chosen.source != "header" && copy_default &&
            copy_default->key() != chosen.config.key()) {
          BenchItem other = measure("baseline", copy, ChosenConfig{*copy_default, "default", 0, std::nullopt},
                                    baseline_name, "", std::nullopt);
          if (other.outcome == "ok" && complete(other) && (item.outcome != "ok" || other.median_ns < item.median_ns))
            item = other;
        }
        baseline_medians[baseline_name] = item.outcome == "ok" ? item.median_ns : std::nan("");
        keep(item);
      }
      if (std::isfinite(baseline_medians[baseline_name])) baseline_ns = baseline_medians[baseline_name];
    }

    const ChosenConfig tuned = chooser.choose(family, request.backend, summary.device, problem, on_device.space, context);
    const std::string name = benchmark_name(request.backend, problem);
    std::vector<std::pair<std::string, ChosenConfig>> runs{{"tuned", tuned}};
    const auto& default_config = on_device.space.default_config();
    if (request.with_default && default_config && !(default_config->key() == tuned.config.key()) &&
        on_device.space.violated(*default_config, context).empty())
      runs.push_back({"default", ChosenConfig{*default_config, "default", 0, std::nullopt}});
    for (const auto& [role, chosen] : runs) {
      if (g_stop_requested.load()) break;
      keep(measure(role, problem, chosen, role == "tuned" ? name : name + "/default", baseline_name, baseline_ns));
    }
  }
  summary.interrupted = g_stop_requested.load();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_output();
  if (summary.history_kept)
    store.finish_bench_run(summary.bench_run_id, summary.interrupted ? "interrupted" : "finished");
  finished = true;
  return summary;
}

}  // namespace ktune

#include "tuner/report/report_data.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "ktune/build_info.hpp"
#include "tuner/core/output_file.hpp"

namespace ktune {
namespace {

nlohmann::json number_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

std::string short_commit(const std::string& commit) {
  const bool dirty = commit.ends_with("-dirty");
  const std::string hash = dirty ? commit.substr(0, commit.size() - 6) : commit;
  return hash.substr(0, 7) + (dirty ? "-dirty" : "");
}


// A group: one family on one backend's device.
using GroupKey = std::tuple<std::string, std::string, std::string>;  // family, backend, fingerprint

struct Group {
  std::string device_name;
  std::vector<const BenchHistoryEntry*> bench;  // every result, oldest run first
  std::vector<const TuningTrace*> tuning;
};

nlohmann::json history_of(const std::vector<const BenchHistoryEntry*>& bench, const ReportOptions& options) {
  // Series by benchmark name, in order of first appearance; only tuned results that ran.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const BenchHistoryEntry*>> series;
  for (const BenchHistoryEntry* entry : bench) {
    if (entry->role != "tuned" || entry->outcome != "ok" || !std::isfinite(entry->median_ns)) continue;
    if (!series.count(entry->name)) order.push_back(entry->name);
    series[entry->name].push_back(entry);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& name : order) {
    const auto& entries = series[name];
    nlohmann::json points = nlohmann::json::array();
    std::vector<double> medians;
    for (const BenchHistoryEntry* entry : entries) {
      medians.push_back(entry->median_ns);
      points.push_back({{"bench_run_id", entry->bench_run_id},
                        {"commit", short_commit(entry->git_commit)},
                        {"time", entry->started_at},
                        {"median_ns", entry->median_ns},
                        {"min_ns", number_or_null(entry->min_ns)},
                        {"max_ns", number_or_null(entry->max_ns)},
                        {"repetitions_ns", entry->repetitions_ns}});
    }
    nlohmann::json changes = nlohmann::json::array();
    for (const ChangePoint& change : detect_change_points(medians, options.change_points))
      changes.push_back({{"index", change.index},
                         {"commit", short_commit(entries[change.index]->git_commit)},
                         {"before_ns", change.mean_before},
                         {"after_ns", change.mean_after},
                         {"change", number_or_null(change.relative_change)},
                         {"p_value", change.p_value}});
    out.push_back({{"benchmark", name}, {"problem", entries.front()->problem_key}, {"points", points},
                   {"change_points", changes}});
  }
  return out;
}

nlohmann::json latest_of(const std::vector<const BenchHistoryEntry*>& bench,
                         const std::vector<BenchHistoryEntry>& all) {
  std::int64_t newest = -1;
  std::string commit, time;
  for (const BenchHistoryEntry* entry : bench)
    if (entry->role == "tuned") newest = entry->bench_run_id, commit = entry->git_commit, time = entry->started_at;
  if (newest < 0) return nullptr;
  // Baselines and defaults of that run, by name (a baseline may belong to another family's group).
  std::map<std::string, const BenchHistoryEntry*> by_name;
  for (const BenchHistoryEntry& entry : all)
    if (entry.bench_run_id == newest) by_name[entry.name] = &entry;
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchHistoryEntry* entry : bench) {
    if (entry->bench_run_id != newest || entry->role != "tuned") continue;
    const double tuned = entry->outcome == "ok" ? entry->median_ns : std::nan("");
    double default_ns = std::nan("");
    if (const auto found = by_name.find(entry->name + "/default"); found != by_name.end() && found->second->outcome == "ok")
      default_ns = found->second->median_ns;
    else if (std::isfinite(tuned) && entry->config_source == "default")
      default_ns = tuned;  // the tuned config is the default
    double baseline_ns = std::nan("");
    if (const auto found = by_name.find(entry->baseline_name); found != by_name.end() && found->second->outcome == "ok")
      baseline_ns = found->second->median_ns;
    const double seconds = tuned * 1e-9;
    rows.push_back({{"problem", entry->problem_key},
                    {"tuned_ns", number_or_null(tuned)},
                    {"default_ns", number_or_null(default_ns)},
                    {"baseline", entry->baseline_name.empty() ? nlohmann::json() : nlohmann::json("copy")},
                    {"baseline_ns", number_or_null(baseline_ns)},
                    {"bytes_per_second", number_or_null(entry->bytes / seconds)},
                    {"flops_per_second", number_or_null(entry->flops / seconds)},
                    {"percent_of_ceiling", number_or_null(100.0 * baseline_ns / tuned)},
                    {"config_source", entry->config_source},
                    {"config", entry->config},
                    {"outcome", entry->outcome}});
  }
  return {{"bench_run_id", newest}, {"commit", short_commit(commit)}, {"time", time}, {"rows", rows}};
}

nlohmann::json tuning_of(const std::vector<const TuningTrace*>& traces) {
  nlohmann::json out = nlohmann::json::array();
  for (const TuningTrace* trace : traces) {
    nlohmann::json evaluations = nlohmann::json::array();
    std::vector<std::string> parameters;
    for (const auto& point : trace->points) {
      if (parameters.empty() && point.config.is_object())
        for (const auto& [name, value] : point.config.items()) parameters.push_back(name);
      evaluations.push_back({{"order", point.order},
                             {"median_ns", number_or_null(point.median_ns)},
                             {"outcome", point.outcome},
                             {"config", point.config}});
    }
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [outcome, count] : trace->outcome_counts) counts[outcome] = count;
    out.push_back({{"problem", trace->problem_key}, {"space_valid", nullptr}, {"parameters", parameters},
                   {"evaluations", evaluations}, {"outcome_counts", counts}});
  }
  return out;
}

}  // namespace

nlohmann::json build_report_data(Store& store, const std::string& database_label, const ReportOptions& options) {
  const std::vector<BenchHistoryEntry> bench = store.bench_history();
  const std::vector<TuningTrace> traces = store.tuning_traces(options.max_evaluations);
  std::map<GroupKey, Group> groups;
  for (const BenchHistoryEntry& entry : bench) {
    // Baselines and defaults appear beside the tuned result they belong to, not as groups.
    if (entry.role != "tuned") continue;
    Group& group = groups[{entry.family, entry.backend, entry.device_fingerprint}];
    group.device_name = entry.device_name;
    group.bench.push_back(&entry);
  }
  for (const TuningTrace& trace : traces) {
    Group& group = groups[{trace.family, trace.backend, trace.device_fingerprint}];
    group.device_name = trace.device_name;
    group.tuning.push_back(&trace);
  }
  // Devices are numbered in order of their fingerprints, so a group's id is stable and HTML-safe.
  std::map<std::string, int> device_numbers;
  for (const auto& [key, group] : groups) device_numbers.emplace(std::get<2>(key), 0);
  int next = 1;
  for (auto& [fingerprint, number] : device_numbers) number = next++;

  nlohmann::json groups_json = nlohmann::json::array();
  for (const auto& [key, group] : groups) {
    const auto& [family, backend, fingerprint] = key;
    if (!options.families.empty() &&
        std::find(options.families.begin(), options.families.end(), family) == options.families.end())
      continue;
    groups_json.push_back({{"id", family + "-" + backend + "-" + std::to_string(device_numbers[fingerprint])},
                           {"family", family},
                           {"backend", backend},
                           {"device", group.device_name},
                           {"device_fingerprint", fingerprint},
                           {"history", history_of(group.bench, options)},
                           {"latest", latest_of(group.bench, bench)},
                           {"tuning", tuning_of(group.tuning)}});
  }
  return {{"schema", 1},
          {"generated_at", utc_now("%Y-%m-%dT%H:%M:%SZ")},
          {"ktune_version", build_info::version},
          {"git_commit", short_commit(build_info::git_commit)},
          {"database", database_label},
          {"groups", groups_json}};
}

}  // namespace ktune
